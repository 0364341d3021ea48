"""A buffer registered from a boolean mask is a mask attribute (realcode round 27, torchdr 0.5's
UMAP):

    mask_affinity_in = self.epoch_of_next_sample <= self.n_iter_ + 1
    self.register_buffer("mask_affinity_in_", mask_affinity_in, persistent=False)
    self.epoch_of_next_sample[self.mask_affinity_in_] += self.epochs_per_sample[self.mask_affinity_in_]   # GB0036

Before, only `self.x = <boolean expression>` stores made an attribute a mask. What stays
unreported: a buffer registered from an index tensor (it gathers: a static shape), and one
registered under the name from a mask in one place and from something else in another. Each case
is checked statically and run under Dynamo (its graph-break log).
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


class Layout(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("due", torch.zeros(6))
        self.register_buffer("step", torch.ones(6))
        self.register_buffer("mixed", torch.zeros(6, dtype=torch.bool))

    def run(self, case: str, now: torch.Tensor):
        if case == "local-mask":
            keep = self.due <= now + 1
            self.register_buffer("keep_", keep, persistent=False)
            return self.step[self.keep_] * 2  # reported
        if case == "expression-mask":
            self.register_buffer("late_", self.due > now, persistent=False)
            return self.step[self.late_] + 1  # reported
        if case == "index-buffer":
            order = torch.argsort(self.due)
            self.register_buffer("order_", order, persistent=False)
            return self.step[self.order_] - 1
        if case == "mixed":
            self.register_buffer("mixed", torch.arange(6), persistent=False)
            return self.step[self.mixed] * 3
        return now

    def reset(self):
        self.register_buffer("mixed", self.due > 0, persistent=False)
'''

CASES = ["local-mask", "expression-mask", "index-buffer", "mixed"]


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "buffer_masks.py", Settings(scope="module")).findings


@pytest.mark.parametrize("case", CASES)
def test_a_buffer_registered_from_a_mask(case, findings, tmp_path):
    block, reported = case_span(SOURCE, case, ("if case ==", "return now"))
    assert sorted(f.span.start.line for f in findings if f.span.start.line in block) == reported, (case, findings)
    mod = load_module(SOURCE, tmp_path, "buffer_masks")
    broke = logged_break_lines(mod.Layout().run, case, torch.tensor(0.5), path=mod.__file__)
    assert sorted(n for n in broke if n in block) == reported, (case, broke)
