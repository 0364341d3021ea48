"""A break behind a type test is named with it (realcode round 37, brevitas 0.13's flags and
QuantTensor handlers, each a Python value at run time there):

- in a conditional expression's arm: `bool(signed.item()) if isinstance(signed, Tensor) else
  signed` breaks only when `signed` is a tensor;
- after `isinstance(x, C) and`: `isinstance(bias, QT) and not torch.allclose(bias.scale, s)` breaks
  only when `bias` is a `QT` (the test short-circuits otherwise), in an `if` test too, and in one
  that is an `or` of such tests;
- after an `if` on a tensor test: what the tensor side binds to a tensor and the other side does
  not (`head_dim = embed_dim.div(...)` / `embed_dim // num_heads`) is a tensor only on that side,
  and so is the tested name: a size read from them breaks only when they are (a size read off a
  tensor's shape, `q.shape[0]`, is no tensor of the condition).

Each is checked statically (the finding and its condition) and under Dynamo's graph-break log,
on the path where the test fails (no break) and where it holds (a break)."""

from __future__ import annotations

import pytest
import torch

from difftest import findings_by_line, load_module, marked_lines
from test_callers import logged_break_lines

SOURCE = '''\
from typing import Union

import torch
from torch import Tensor


class QT:
    def __init__(self, value, scale):
        self.value, self.scale = value, scale


def max_int(bit_width: Tensor, signed: Union[bool, Tensor]) -> Tensor:
    is_signed = bool(signed.item()) if isinstance(signed, Tensor) else signed
    return 2 ** (bit_width - 1) - 1 if is_signed else 2 ** bit_width - 1


def handler(x, bias, scale):
    out = x * scale
    if (isinstance(bias, QT) and not torch.allclose(bias.scale, scale)) or not isinstance(bias, QT):
        out = out + (bias.value if isinstance(bias, QT) else bias)
    if isinstance(bias, QT) and (bias.value != 0.0).any():
        out = out - 1
    if (isinstance(x, QT) and (x.value != 0.0).any()) or (isinstance(bias, QT) and (bias.scale > 1).any()):
        out = out * 2
    return out


def heads(q, embed_dim, num_heads):
    n, b, _ = q.shape
    if isinstance(embed_dim, Tensor):
        head_dim = embed_dim.div(num_heads, rounding_mode="trunc")
    else:
        head_dim = embed_dim // num_heads
    assert head_dim * num_heads == embed_dim, "not divisible"
    k = q.contiguous().view(q.shape[0], b * num_heads, head_dim)
    return q.contiguous().view(n, b * num_heads, head_dim) * 2 + k


EMBED = torch.tensor(4)  # a tensor the compiled code is given (of `torch.tensor(4)` in it, Dynamo knows the value)


def run(case, x):
    if case == "flag-bool":
        return max_int(x.sum().round(), True)
    if case == "flag-tensor":
        return max_int(x.sum().round(), torch.tensor(True))
    if case == "bias-tensor":
        return handler(x, x + 1, torch.tensor(0.5))
    if case == "bias-qt":
        return handler(x, QT(x + 1, torch.tensor(0.25)), torch.tensor(0.5))
    if case == "embed-int":
        return heads(x.reshape(2, 1, 4), 4, 2)
    return heads(x.reshape(2, 1, 4), EMBED, 2)
'''

MARKS = ("bool(signed.item())", "torch.allclose(bias.scale", "(bias.value != 0.0).any()", "(bias.scale > 1).any()",
         ".view(q.shape[0]", ".view(n, b * num_heads")
LINES = marked_lines(SOURCE, MARKS)
CONDITIONS = {"bool(signed.item())": "`signed` is a tensor", "torch.allclose(bias.scale": "`bias` is an instance of `QT`",
              "(bias.value != 0.0).any()": "`bias` is an instance of `QT`", ".view(n, b * num_heads": "`head_dim` is a tensor",
              ".view(q.shape[0]": "`head_dim` is a tensor",
              "(bias.scale > 1).any()": "`isinstance(x, QT) or isinstance(bias, QT)`"}


@pytest.mark.parametrize("mark", MARKS)
def test_named_with_the_type_test(mark):
    got = findings_by_line(SOURCE, "type_tests.py").get(LINES[mark], [])
    assert len(got) == 1 and got[0].condition is not None, got
    assert got[0].condition.text == CONDITIONS[mark], got[0].condition


@pytest.mark.parametrize("case,marks", [
    ("flag-bool", ()), ("flag-tensor", ("bool(signed.item())",)),
    ("bias-tensor", ()), ("bias-qt", ("torch.allclose(bias.scale", "(bias.value != 0.0).any()", "(bias.scale > 1).any()")),
    # the second view traces: after the first one's break, `head_dim` is an input of the frame Dynamo
    # resumes in, and a 0-dim input as a size traces
    ("embed-int", ()), ("embed-tensor", (".view(q.shape[0]",))])
def test_dynamo_breaks_only_where_the_test_holds(case, marks, tmp_path):
    mod = load_module(SOURCE, tmp_path, "type_tests")
    broke = logged_break_lines(mod.run, case, torch.randn(8), path=mod.__file__)
    assert sorted(LINES[m] for m in MARKS if LINES[m] in broke) == sorted(LINES[m] for m in marks), (case, broke)


def test_a_test_of_several_classes_is_named_with_each():
    import ast

    from graphmend.analysis.conditions import _value_text
    test = ast.parse("isinstance(element, (int, np.integer))", mode="eval").body
    assert _value_text(test, True) == "`element` is one of `int` or `np.integer`"
    assert _value_text(test, False) == "`element` is not one of `int` or `np.integer`"
