"""The items of iterating a tensor used as an index (GM401, GB0033): iterating a 1-d tensor gives
0-dim tensors, and indexing with one reads its value into Python; Dynamo then skips the loop's
frame. Iterating a 2-d tensor gives 1-d rows, an advanced index, which traces. The rank is not in
the code, so the finding names its condition (`perm.dim() == 1`). Realcode round 20, torch-struct
0.5's DependencyCRF:

    torch.stack([final[:, i, l] for i, l in enumerate(lengths)])

Each case is checked statically and run under Dynamo (its graph-break log), with 1-d and with 2-d
tensors: the reported lines are the lines Dynamo breaks on when the condition holds, and it breaks
nowhere when it does not.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from difftest import load_module
from graphmend.analysis import analyze_source
from test_callers import logged_break_lines

HEAD = """\
from typing import cast

import torch


def f(x: torch.Tensor, idx: torch.Tensor, table: dict):
"""
HEAD_LINES = HEAD.count("\n")

# name -> (body returning a tensor, lines of the body GraphMend reports (conditionally), whether
# the body runs with a 2-d `idx` too: then Dynamo breaks nowhere)
CASES = {
    "loop-store": (
        "y = torch.zeros_like(x)\n"
        "for i in idx:\n"
        "    y[..., i] = x[..., i] * 2\n"
        "return y", [3], True),
    "enumerate-in-a-comprehension": (
        "return torch.stack([x[j, i] for j, i in enumerate(idx)])", [1], True),
    # a call that gives a tensor (performer-pytorch's repetition penalty iterates torch.unique(ctx))
    "loop-over-a-call": (
        "w = torch.ones(x.shape[-1])\n"
        "for i in idx.flip(0):\n"
        "    w[i] = 2.0\n"
        "return x / w", [3], False),
    # the items used otherwise: no index, no break
    "items-in-arithmetic": (
        "s = x.sum() * 0\n"
        "for i in idx:\n"
        "    s = s + i\n"
        "return x + s", [], False),
    # a name rebound in the body is no item any more
    "rebound-item": (
        "y = torch.zeros_like(x)\n"
        "for i in idx:\n"
        "    i = 0\n"
        "    y[..., i] = x[..., i] * 2\n"
        "return y", [], True),
    # a value the walk does not know, cast to a tensor type (flowtorch 0.8's autoregressive
    # inverse: `for idx in cast(torch.LongTensor, permutation)`, realcode round 17)
    "cast-to-a-tensor-type": (
        "perm = table['perm']\n"
        "y = torch.zeros_like(x)\n"
        "for i in cast(torch.LongTensor, perm):\n"
        "    y[..., i] = x[..., i] * 2\n"
        "return y", [4], False),
    # a mapping iterated for its keys (`d[k] for k in d`), whatever the walk took it for
    "keys-of-a-mapping": (
        "t = table['weights']\n"
        "return torch.stack([t[k] for k in t])", [], False),
}


def _args(two_d: bool):
    x = torch.arange(20.0).reshape(4, 5)
    idx = torch.tensor([[0, 1], [2, 3]]) if two_d else torch.tensor([2, 0, 1, 3])
    return x, idx, {"weights": {"a": torch.ones(2), "b": torch.zeros(2)}, "perm": idx}


@pytest.mark.parametrize("body,expected,two_d", CASES.values(), ids=CASES.keys())
def test_items_of_a_tensor_as_an_index(body, expected, two_d, tmp_path):
    text = HEAD + textwrap.indent(body + "\n", "    ") + "\n\ncompiled = torch.compile(f)\n"
    fa = analyze_source(text, "case.py")
    assert [(fd.code, fd.span.start.line - HEAD_LINES) for fd in fa.findings] == [("GM401", n) for n in expected], text
    for fd in fa.findings:
        assert fd.condition is not None and ".dim() == 1" in fd.condition.text and fd.gb_id == "GB0033", text
    mod = load_module(text, tmp_path, "tensor_items")
    if "for k in t" in body:  # the mapping case: the walk's view of `table` only, nothing compiled breaks
        assert logged_break_lines(mod.f, *_args(False), path=mod.__file__) == set(), text
        return
    one_d = logged_break_lines(mod.f, *_args(False), path=mod.__file__)
    assert sorted(n - HEAD_LINES for n in one_d) == expected, text
    if two_d:  # the condition's other side: rows of indices, which trace
        assert logged_break_lines(mod.f, *_args(True), path=mod.__file__) == set(), text
