"""`not t` of a tensor outside a condition reads the tensor's truth into a Python bool: Dynamo
breaks at the `not`, and the name it binds is no tensor, so a later `if p:` neither breaks nor
takes a tensor mend (realcode round 29: xitorch's RK45 `prev_rejected = not accepted`, then `if
prev_rejected:`, which the unsafe fix turned into `torch.cond((prev_rejected).bool(), ...)`, and
the mended run raised AttributeError on a bool). In a condition (`if not t:`, `x if not t else
y`, `while not t:`) the `not` is the condition's, reported once with it. Each case is checked
statically and run under Dynamo (its graph-break log); the mended text runs like the original.
"""

from __future__ import annotations

import pytest
import torch

from difftest import assert_case_breaks, load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from graphmend.rewrite import fix_source
from test_callers import logged_break_lines

SOURCE = '''\
import torch


def run(case: str, x: torch.Tensor):
    if case == "bound-then-branch":
        accepted = x.norm() < 1
        rejected = not accepted  # reported
        y = x * 2
        if rejected:
            y = y + 1
        return y
    if case == "in-condition":
        small = x.norm() < 1
        if not small:  # reported
            return x * 3
        return x
    if case == "conditional-expression":
        small = x.norm() < 1
        return x * 2 if not small else x  # reported
    if case == "returned":
        small = x.norm() < 1
        return x + 1, not small  # reported
    if case == "python-bool":
        flag = x.dim() == 2
        other = not flag
        if other:
            return x + 5
        return x
    return x
'''

CASES = ["bound-then-branch", "in-condition", "conditional-expression", "returned", "python-bool"]


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "not_truth.py", Settings(scope="module")).findings


@pytest.mark.parametrize("case", CASES)
def test_not_of_a_tensor_breaks_at_the_not(case, findings, tmp_path):
    mod = load_module(SOURCE, tmp_path, "not_truth")
    broke = [logged_break_lines(mod.run, case, x, path=mod.__file__)  # both sides of each test
             for x in (torch.full((2, 3), 0.1), torch.full((2, 3), 5.0))]
    assert_case_breaks(SOURCE, case, findings, ("if case ==", "    return x\\n"), *broke)


def test_the_branch_on_the_bool_is_not_mended(tmp_path):
    """The unsafe fixes leave `if rejected:` alone (it is a Python bool): the mended module
    gives what the original gives on both sides."""
    mended = fix_source(SOURCE, "not_truth.py", unsafe=True, settings=Settings(scope="module")).text
    assert "if rejected:" in mended and "torch.cond" not in mended
    orig, new = load_module(SOURCE, tmp_path, "not_truth_a"), load_module(mended, tmp_path, "not_truth_b")
    for case in CASES:
        for x in (torch.full((2, 3), 0.1), torch.full((2, 3), 5.0)):
            want, got = orig.run(case, x), new.run(case, x)
            want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
            assert len(want) == len(got) and all(
                torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b for a, b in zip(want, got)), case
