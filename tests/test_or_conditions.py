"""`A or T`: Python takes the truth of the tensor `T` only when the static operands before it are
false, so the break is conditional and named so (realcode round 24, torchbnn 1.2's
`if last_layer_only or n == 0:`, functional.py:61, which did not break in the entry passing
`last_layer_only=True`). An unannotated parameter defaulting to True or False is such a static
operand (a flag), unless the function uses it like a tensor.

Each case runs under Dynamo with the flag on and off: the reported line breaks exactly when the
named condition holds, and the finding says which condition that is.
"""

from __future__ import annotations

import pytest
import torch

from difftest import load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import torch


def kl(t, last_layer_only=False):
    n = t.sum()
    if last_layer_only or n == 0:
        return t
    return t * 2


class Gate(torch.nn.Module):
    def __init__(self, only):
        super().__init__()
        self.only = only

    def forward(self, t):
        if self.only or t.sum() > 0:
            t = t + 1
        return t


def value(t, only=False):
    return only or (t > 0).any()


def used_like_a_tensor(t, scale=False):
    if scale or t.sum() == 0:
        return t * scale.float()
    return t
'''


@pytest.fixture(scope="module")
def findings():
    fa = analyze_source(SOURCE, "or_conditions.py", Settings(scope="module"))
    return {f.span.start.line: f for f in fa.findings}


def _line(text: str) -> int:
    return next(i for i, s in enumerate(SOURCE.splitlines(), 1) if s.strip() == text)


@pytest.mark.parametrize("call,line,named", [
    ("kl", "if last_layer_only or n == 0:", "not `last_layer_only`"),
    ("gate", "if self.only or t.sum() > 0:", "not `self.only`"),
])
def test_a_tensor_after_static_or_operands_breaks_only_when_they_are_false(call, line, named, findings, tmp_path):
    at = _line(line)
    f = findings[at]
    assert f.code == "GM201" and f.condition is not None and named in f.condition.text, f
    mod = load_module(SOURCE, tmp_path, "or_conditions")
    t = torch.tensor([1.0, -1.0])
    for flag, breaks in ((True, False), (False, True)):
        fn = (lambda x: mod.kl(x, flag)) if call == "kl" else mod.Gate(flag)
        broke = logged_break_lines(fn, t, path=mod.__file__)
        assert (at in broke) is breaks, (call, flag, broke)


def test_the_value_of_an_or_takes_no_truth_of_its_last_operand(findings):
    """`only or (t > 0).any()` gives the tensor itself when `only` is false: no jump."""
    assert _line("return only or (t > 0).any()") not in findings


def test_a_flag_used_like_a_tensor_is_no_flag(findings):
    """`scale=False`, then `scale.float()`: a tensor may come in; `scale or ...` is then the jump
    itself, not a condition on a Python flag."""
    f = findings[_line("if scale or t.sum() == 0:")]
    assert f.condition is None, f.condition
