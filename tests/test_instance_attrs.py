"""An attribute of a local bound only to instances of one class of the file holds a tensor where
that class constructs one there (`self.remaining = torch.ones(m, dtype=torch.bool)` in its
`__init__`): `if not sol.remaining.any():` is a branch on a tensor value (GB0170;
pytorch-kinematics' PseudoInverseIK.solve, realcode round 29). A local bound to instances of two
classes (each name is bound once here: bindings are counted per function), or to a parameter,
says nothing. Checked statically and run under Dynamo (its graph-break
log)."""

from __future__ import annotations

import pytest
import torch

from difftest import assert_case_breaks, load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import torch


class Solution:
    def __init__(self, m):
        self.remaining = torch.ones(m, dtype=torch.bool)
        self.size = m


class Other:
    def __init__(self, m):
        self.remaining = [True] * m


def run(case: str, x: torch.Tensor):
    if case == "tensor-attribute":
        sol = Solution(3)
        if not sol.remaining.any():  # reported
            return x
        return x * 2
    if case == "python-attribute":
        small = Solution(3)
        if small.size > 2:
            return x * 3
        return x
    if case == "two-classes":
        either = Solution(3) if x.dim() == 1 else Other(3)
        if either.remaining:
            return x * 4
        return x
    return x
'''

CASES = ["tensor-attribute", "python-attribute", "two-classes"]


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "instance_attrs.py", Settings(scope="module")).findings


@pytest.mark.parametrize("case", CASES)
def test_attributes_of_local_instances(case, findings, tmp_path):
    mod = load_module(SOURCE, tmp_path, "instance_attrs")
    broke = logged_break_lines(mod.run, case, torch.randn(2, 3), path=mod.__file__)
    assert_case_breaks(SOURCE, case, findings, ("if case ==", "    return x\\n"), broke)
