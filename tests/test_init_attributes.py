"""Attributes `__init__` leaves holding a tensor are tensors in the other methods (realcode round
22, torch-harmonics 0.8.0's ResampleS2):

    self.lats_in, _ = _precompute_latitudes(nlat_in)   # -> Tuple[torch.Tensor, torch.Tensor], lru-cached
    self.expand_poles = (self.lats_out > self.lats_in[-1]).any() or (...).any()     # __init__
    if self.expand_poles:                                                           # forward, GB0170

Every store of the attribute in `__init__` (evaluated in order, like a body whose returns are
asked for) gives a tensor, and no other method stores it. What stays unreported: a store that may
leave None, a parameter that may be something else (a Union annotation, a tuple default) stored
as it is, an attribute another method stores too. Each case is checked statically and run under
Dynamo (its graph-break log): the reported lines are exactly the lines Dynamo breaks on.
"""

from __future__ import annotations

import pytest
import torch

from difftest import case_block, load_module
from graphmend.analysis import analyze_source
from test_callers import logged_break_lines

SOURCE = '''\
import functools
from typing import Tuple, Union

import torch


@functools.lru_cache()
def _grid(n: int) -> Tuple[torch.Tensor, torch.Tensor]:
    x = torch.linspace(0.0, 1.0, n)
    return x, x.flip(0)


class Resample(torch.nn.Module):
    def __init__(self, n_in: int, n_out: int, ratio: Union[torch.Tensor, Tuple[float, float]] = (0.3, 3.3),
                 scale: float = 2.0, keep=False):
        super().__init__()
        self.lats_in, _ = _grid(n_in)
        self.lats_out, _ = _grid(n_out)
        self.expand = (self.lats_out > self.lats_in[-1]).any() or (self.lats_out < self.lats_in[0]).any()
        self.ratio = ratio
        self.scale = torch.as_tensor(scale)
        self.kept = torch.ones(2) if keep else None
        self.count = (self.lats_in > 2).any()

    def reset(self):
        self.count = 0

    def forward(self, x, case: str):
        if case == "method-result":
            if self.expand:  # reported
                x = x + 1
        if case == "annotated-tuple":
            if self.lats_out[1] > 0.5:  # reported
                x = x * 2
        if case == "torch-of-a-parameter":
            if self.scale > 1:  # reported
                x = x - 1
        if case == "loose-parameter":
            if self.ratio[0] < 1.0:
                x = x / 2
        if case == "maybe-none":
            if self.kept:
                x = x + 3
        if case == "stored-elsewhere":
            if self.count:
                x = x + 4
        return x


model = Resample(4, 5)
model.reset()


def run(x, case):
    return model(x, case) * 1
'''

CASES = ["method-result", "annotated-tuple", "torch-of-a-parameter", "loose-parameter", "maybe-none",
         "stored-elsewhere"]


@pytest.fixture(scope="module")
def findings():
    return [(f.code, f.span.start.line) for f in analyze_source(SOURCE, "init_attributes.py").findings]


@pytest.mark.parametrize("case", CASES)
def test_attributes_init_leaves_holding_a_tensor(case, findings, tmp_path):
    block, reported = case_block(SOURCE, case)
    assert sorted(line for _, line in findings if line in block) == reported, (case, findings)
    assert all(code == "GM201" for code, line in findings if line in block), findings
    mod = load_module(SOURCE, tmp_path, "init_attributes")
    broke = logged_break_lines(mod.run, torch.randn(3), case, path=mod.__file__)
    assert sorted(n for n in broke if n in block) == reported, (case, broke)


def test_the_tuple_annotation_of_a_decorated_function_of_another_module(tmp_path):
    """`self.lats_in, _ = _precompute_latitudes(...)`, imported from the package's quadrature
    module, lru-cached (no body evaluated): its `-> Tuple[torch.Tensor, torch.Tensor]` says."""
    from graphmend.analysis.workspace import Workspace

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "quad.py").write_text(SOURCE.split("class Resample")[0])
    user = ("import torch\nfrom pkg.quad import _grid\n\n\nclass R(torch.nn.Module):\n"
            "    def __init__(self, n):\n        super().__init__()\n        self.lats, _ = _grid(n)\n\n"
            "    def forward(self, x):\n        if self.lats[1] > 0.5:\n            x = x * 2\n        return x\n")
    (pkg / "res.py").write_text(user)
    ws = Workspace(roots=[str(tmp_path)])
    got = [(f.code, f.span.start.line) for f in analyze_source(user, str(pkg / "res.py"), workspace=ws).findings]
    assert got == [("GM201", 11)], got
