"""A mask read through an index or inverted where it is an attribute: `m[idx]` of a mask is a
mask, `~self.m` of a mask attribute is one (realcode round 28, torch-linode 0.3.0's dense output:
`unique_indices[~self.P_available[unique_indices]]`, `P_available` a boolean buffer, GB0036
unreported). What stays unreported: an index tensor read through an index (`order[idx]`). Each
case is checked statically and run under Dynamo (its graph-break log).
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


class Cache(torch.nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.available = torch.zeros(n, dtype=torch.bool)
        self.order = torch.arange(n)

    def run(self, case: str, x: torch.Tensor, idx: torch.Tensor):
        if case == "inverted-attribute":
            return x[~self.available] * 2  # reported
        if case == "indexed-attribute":
            return idx[self.available[idx]] + 1  # reported
        if case == "inverted-indexed":
            return idx[~self.available[idx]] - 1  # reported
        if case == "indexed-local":
            keep = x > 0
            chosen = keep[idx]
            return x[idx][chosen] * 3  # reported
        if case == "index-tensor":
            return x[self.order[idx]] * 4
        return x
'''

CASES = ["inverted-attribute", "indexed-attribute", "inverted-indexed", "indexed-local", "index-tensor"]


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "mask_operands.py", Settings(scope="module")).findings


@pytest.mark.parametrize("case", CASES)
def test_a_mask_indexed_or_inverted(case, findings, tmp_path):
    block, reported = case_span(SOURCE, case, ("if case ==", "return x\\n"))
    assert sorted(f.span.start.line for f in findings if f.span.start.line in block) == reported, (case, findings)
    mod = load_module(SOURCE, tmp_path, "mask_operands")
    cache = mod.Cache(6)
    cache.available[::2] = True
    broke = logged_break_lines(cache.run, case, torch.linspace(-1.0, 1.0, 6), torch.tensor([0, 3, 5]),
                               path=mod.__file__)
    assert sorted(n for n in broke if n in block) == reported, (case, broke)
