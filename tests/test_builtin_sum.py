"""Builtin `sum` of a tensor iterates it and adds its items: a tensor, and a branch or a slice on
it reads its value (realcode round 26, torchjd 0.18.0's AlignedMTL):

    rank = sum(lambda_ > tol)
    if rank == 0:                                   # GB0170
    ... lambda_[order][:rank] ...                   # GB0124, a slice bounded by a tensor

What stays unreported: `sum` of a list of Python numbers, of a shape. Each case is checked
statically and run under Dynamo (its graph-break log).
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


def run(case, lambda_: torch.Tensor, V: torch.Tensor):
    tol = 0.1
    if case == "branch":
        rank = sum(lambda_ > tol)
        if rank == 0:  # reported
            return V * 0
        return V
    if case == "slice":
        rank = sum(lambda_ > tol)
        return V[:, :rank]  # reported
    if case == "numbers":
        n = sum([1, 2, 3])
        if n == 6:
            return V * 2
        return V
    if case == "shape":
        n = sum(V.shape)
        if n > 3:
            return V * 3
        return V
'''

CASES = ["branch", "slice", "numbers", "shape"]


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "builtin_sum.py", Settings(scope="module")).findings


@pytest.mark.parametrize("case", CASES)
def test_builtin_sum_of_a_tensor(case, findings, tmp_path):
    block, reported = case_span(SOURCE, case)
    assert sorted(f.span.start.line for f in findings if f.span.start.line in block) == reported, (case, findings)
    mod = load_module(SOURCE, tmp_path, "builtin_sum")
    broke = logged_break_lines(mod.run, case, torch.tensor([0.5, 0.05, 0.7]), torch.randn(3, 3), path=mod.__file__)
    assert sorted(n for n in broke if n in block) == reported, (case, broke)
