"""The items of a list or tuple display, by their constant index: `tmp_phi = [y.norm() ** 2]`,
then `tmp_phi[0]` is a tensor (xitorch's Armijo line search passes it on as `phi0`, then branches
on `phi_a0 <= phi0 + ...`: GB0170, realcode round 29). An item that holds a Python number, or
that a store has rebound to one, is not. Checked statically and run under Dynamo (its
graph-break log)."""

from __future__ import annotations

import pytest
import torch

from difftest import assert_case_breaks, load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import torch


def run(case: str, x: torch.Tensor):
    if case == "list-item":
        norms = [x.norm() ** 2]
        if norms[0] > 1:  # reported
            return x * 2
        return x
    if case == "tuple-items":
        pair = (x.sum(), 3)
        if pair[1] > 2:
            x = x + 1
        if pair[0] > 0:  # reported
            return x * 3
        return x
    if case == "item-rebound":
        vals = [x.sum()]
        vals[0] = 2
        if vals[0] > 1:
            return x * 4
        return x
    return x
'''

CASES = ["list-item", "tuple-items", "item-rebound"]


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "display_items.py", Settings(scope="module")).findings


@pytest.mark.parametrize("case", CASES)
def test_items_of_displays(case, findings, tmp_path):
    mod = load_module(SOURCE, tmp_path, "display_items")
    broke = logged_break_lines(mod.run, case, torch.randn(2, 3), path=mod.__file__)
    assert_case_breaks(SOURCE, case, findings, ("if case ==", "    return x\\n"), broke)
