"""An attribute a method other than `__init__` stores a tensor in is a tensor in the other methods
also when the store is a conditional expression of two tensor constructors or a local bound once to
one (realcode round 26, torch-pca 1.1.0's PCA):

    self.noise_variance_ = (torch.mean(explained_variance_[n_components:])     # fit
                            if n_components < min(n_samples, n_features) else torch.tensor(0.0))
    if self.noise_variance_ == 0.0:                                            # get_precision, GB0170

What stays unreported: a conditional expression one of whose arms is not a tensor constructor
(None, a module), a local bound twice. Each case is checked statically and run under Dynamo (its
graph-break log): the reported lines are exactly the lines Dynamo breaks on.
"""

from __future__ import annotations

import pytest
import torch

from difftest import case_span, load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import torch


class PCA:
    def __init__(self):
        self.noise = None
        self.scale = None
        self.bias = None
        self.shift = None

    def fit(self, x: torch.Tensor, k: int):
        self.noise = torch.mean(x[k:]) if k < x.shape[0] else torch.tensor(0.0)
        scale = torch.std(x)
        self.scale = scale
        self.bias = torch.mean(x) if k > 100 else None
        shift = x.new_zeros(())
        shift = shift.item()
        self.shift = shift
        return self

    def run(self, x: torch.Tensor, case: str):
        if case == "conditional-expression":
            if self.noise == 0.0:  # reported
                return x
        if case == "local":
            if self.scale > 1.0:  # reported
                return x * 2
        if case == "one-arm-none":
            if self.bias is not None and k_big(x):
                return x * 3
        if case == "local-bound-twice":
            if self.shift > 1.0:
                return x * 4
        return x / 2


def k_big(x):
    return False
'''

CASES = ["conditional-expression", "local", "one-arm-none", "local-bound-twice"]


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "attribute_stores.py", Settings(scope="module")).findings


@pytest.mark.parametrize("case", CASES)
def test_an_attribute_stored_outside_init(case, findings, tmp_path):
    block, reported = case_span(SOURCE, case, ("if case ==", "return x /"))
    assert sorted(f.span.start.line for f in findings if f.span.start.line in block) == reported, (case, findings)
    mod = load_module(SOURCE, tmp_path, "attribute_stores")
    pca = mod.PCA().fit(torch.rand(8) + 0.5, 2)
    broke = logged_break_lines(pca.run, torch.randn(4), case, path=mod.__file__)
    assert sorted(n for n in broke if n in block) == reported, (case, broke)
