"""Arrays a tensor's `.numpy()` gives, and what numpy's functions make of them, read into Python:
Dynamo traces them as tensors (torch._numpy), so `float()` of one is a data-dependent operator
(GB0033) and a branch on one jumps on a tensor (GB0170, "generic_jump NumpyNdarrayVariable()").
pfrl 0.4.0 (realcode round 19): DQN.update's

    self.loss_record.append(float(loss.detach().cpu().numpy()))

and clip_l2_grad_norm_'s

    total_norm = np.linalg.norm([np.linalg.norm(p.grad.detach().cpu().numpy()) for p in parameters])
    clip_coef = max_norm / (total_norm + 1e-6)
    if clip_coef < 1:

Each case is checked statically and run under Dynamo (its graph-break log): the lines GraphMend
reports are exactly the lines Dynamo breaks on. A branch on such an array is not mended: in eager
mode it is numpy's, which torch.where does not take.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from difftest import load_module
from graphmend.analysis import analyze_source
from test_callers import logged_break_lines

HEAD = """\
import numpy as np
import torch


def f(x: torch.Tensor, ps: list, max_norm: float):
"""
HEAD_LINES = HEAD.count("\n")

# name -> (body returning a tensor, [(code, line of the body)] GraphMend reports and Dynamo breaks on)
CASES = {
    "float-of-numpy-of-a-loss": (
        "loss = (x * 2).sum()\n"
        "v = float(loss.detach().cpu().numpy())\n"
        "return x * v", [("GM401", 2)]),
    "branch-on-a-name-bound-to-numpy": (
        "v = x.sum().detach().numpy()\n"
        "if v < 1:\n"
        "    return x + 1\n"
        "return x", [("GM201", 2)]),
    # pfrl's clip_l2_grad_norm_: the items of `ps` are unknown to the walk; only a tensor has `.numpy()`
    "branch-on-a-norm-of-numpy-norms": (
        "ps = [p for p in ps if p is not None]\n"
        "total = np.linalg.norm([np.linalg.norm(p.detach().cpu().numpy()) for p in ps])\n"
        "coef = max_norm / (total + 1e-6)\n"
        "if coef < 1:\n"
        "    return x * 2\n"
        "return x", [("GM201", 4)]),
    "numpy-reduction-in-the-condition": (
        "if np.sum(x.numpy()) > 0:\n"
        "    return x + 1\n"
        "return x", [("GM201", 1)]),
    # an array bound on one side of an if is not one on the other (POT's partial solvers: `if m is
    # None: m = np.min((np.sum(p), np.sum(q)))`, then `elif m < 0:` on the given number) ...
    "else-side-of-an-array-binding": (
        "m = max_norm\n"
        "if m is None:\n"
        "    m = np.min((np.sum(x.numpy()), 1.0))\n"
        "elif m < 0:\n"
        "    return x - 1\n"
        "return x * 2", []),
    # ... and after the if, a name either side made an array may be one
    "array-from-one-side-after-the-if": (
        "if max_norm > 0:\n"
        "    c = np.sum(x.numpy())\n"
        "else:\n"
        "    c = 0.0\n"
        "if c > 1:\n"
        "    return x + 1\n"
        "return x", [("GM201", 5)]),
    # no value read into Python: no break
    "numpy-fed-back-to-torch": (
        "a = x.detach().numpy()\n"
        "return torch.from_numpy(a) * 2", []),
    "shape-of-numpy": (
        "a = x.numpy()\n"
        "return x[: a.shape[0] - 1] * 2", []),
    # numpy's own shape of the array, known at trace time (`np.ndim(a)`, `np.size(a)` break, on
    # another count: "torch.* op returned non-Tensor", GB0208, which GraphMend does not name)
    "static-numpy-function": (
        "a = x.numpy()\n"
        "if np.shape(a)[0] == 3:\n"
        "    return x + 1\n"
        "return x", []),
    "none-test-of-numpy": (
        "a = x.numpy()\n"
        "if a is not None:\n"
        "    return x + 1\n"
        "return x", []),
}


@pytest.mark.parametrize("body,expected", CASES.values(), ids=CASES.keys())
def test_numpy_of_tensors_read_into_python(body, expected, tmp_path):
    text = HEAD + textwrap.indent(body + "\n", "    ") + "\n\ncompiled = torch.compile(f)\n"
    fa = analyze_source(text, "case.py")
    assert [(fd.code, fd.span.start.line - HEAD_LINES) for fd in fa.findings] == expected, text
    for fd in fa.findings:
        if fd.code == "GM201":
            assert not fd.fixable and "numpy array" in fd.decline_reason, text
    mod = load_module(text, tmp_path, "numpy_of_tensors")
    broke = logged_break_lines(mod.f, torch.arange(1.0, 4.0), [torch.ones(3), torch.ones(2)], 1.0,
                               path=mod.__file__)
    assert sorted(n - HEAD_LINES for n in broke) == [line for _, line in expected], text
