"""What a comprehension iterates over a tensor is a tensor (a row, or a 0-dim element), as a `for`
statement's target is; `self.m(...)` gives a tensor when the method (and each override of it in
the file) returns a call's result that is one; `isinstance(x, (list, range))` proves x no tensor
on its side of the test; functools' `lru_cache` leaves a method's return as it is. Realcode round 29: pytorch-kinematics' `{self.idx_to_frame[fi.item()]:
... for fi in frame_indices}` with `frame_indices = self.get_all_frame_indices()` (GB0124), and
tensordict's `int(p) for p in element` after `if not isinstance(element, (list, range)): element
= element.reshape(-1).tolist()` (no break: a list either way). Each case is checked statically
and run under Dynamo (its graph-break log).
"""

from __future__ import annotations

import pytest
import torch

from difftest import assert_case_breaks, load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import functools

import torch


class Chain:
    def __init__(self):
        self.names = {0: "a", 1: "b", 2: "c"}

    @functools.lru_cache
    def frame_indices(self):
        return torch.tensor([0, 2], dtype=torch.long)

    def all_frame_indices(self):
        idx = self.frame_indices()
        return idx

    def run(self, case: str, x: torch.Tensor):
        if case == "dict-over-method":
            frames = self.all_frame_indices()
            return {self.names[fi.item()]: x * fi for fi in frames}  # reported
        if case == "list-over-local":
            idx = torch.tensor([1, 2])
            return [x * fi.item() for fi in idx]  # reported
        if case == "nested-generators":
            rows = x.long().abs() % 3
            return [[self.names[v.item()] for v in row] for row in rows.unbind()]  # reported
        if case == "over-a-list":
            sizes = [1, 2]
            return [x * s for s in sizes]
        if case == "list-after-isinstance":
            element = x.long().abs().reshape(-1) % 3
            if not isinstance(element, (list, range)):
                element = element.tolist()  # reported
            return [int(p) % 3 for p in element]
        return x
'''

CASES = ["dict-over-method", "list-over-local", "nested-generators", "over-a-list", "list-after-isinstance"]


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "comprehension_tensors.py", Settings(scope="module")).findings


@pytest.mark.parametrize("case", CASES)
def test_comprehension_targets_over_tensors(case, findings, tmp_path):
    mod = load_module(SOURCE, tmp_path, "comprehension_tensors")
    broke = logged_break_lines(mod.Chain().run, case, torch.tensor([[1.0, 2.0], [3.0, 4.0]]), path=mod.__file__)
    assert_case_breaks(SOURCE, case, findings, ("if case ==", "return x\\n"), broke)


def test_a_method_whose_return_is_rebound_is_not_taken_for_a_tensor():
    """A method returning a value the body rebinds to other things (tntorch's `_process_key`: a
    tuple, a list or an array by turns) gives nothing known, whatever its parameter's annotation."""
    src = (
        "import torch\n\nclass T:\n"
        "    def key(self, key: torch.Tensor):\n"
        "        if not hasattr(key, '__len__'):\n            key = (key,)\n"
        "        key = list(key)\n        return key\n\n"
        "    def get(self, x, key):\n"
        "        key = self.key(key)\n"
        "        return [x[k] for k in key]\n"
    )
    assert analyze_source(src, "rebound.py", Settings(scope="module")).findings == []
