"""Items of a numpy array read into Python (GM401, GB0033): Dynamo traces numpy as tensors
(torch._numpy), so iterating an array the function built gives 0-dim tensors, and a `slice()`
or `int()` of one is a data-dependent operator. monai's `dense_patch_slices`:

    out = np.asarray([x.flatten() for x in np.meshgrid(*starts, indexing="ij")]).T
    return [tuple(slice(s, s + patch_size[d]) for d, s in enumerate(x)) for x in out]

Each case is checked statically and run under Dynamo (its graph-break log): the lines GraphMend
reports are exactly the lines Dynamo breaks on.
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


def f(x: torch.Tensor, starts: list, patch: list):
"""
HEAD_LINES = HEAD.count("\n")

# name -> (body returning a tensor, lines of the body GraphMend reports and Dynamo breaks on)
CASES = {
    "monai-rows-of-a-transpose": (
        'out = np.asarray([g.flatten() for g in np.meshgrid(*starts, indexing="ij")]).T\n'
        "sl = [tuple(slice(s, s + patch[d]) for d, s in enumerate(r)) for r in out]\n"
        "return x[sl[0]] * 2", [2]),
    "comprehension-over-an-array": (
        "out = np.asarray(starts[0])\n"
        "sl = [slice(s, s + 2) for s in out]\n"
        "return x[sl[-1]] * 2", [2]),
    "item-by-index": (
        "out = np.asarray(starts[0])\n"
        "s = out[1]\n"
        "return x[slice(s, s + 2)] * 2", [3]),
    "array-call-in-the-slice": ("return x[slice(np.asarray(starts[0])[1], 4)] * 2", [1]),
    "int-of-an-item-in-a-comprehension": (
        "out = np.asarray(starts[0])\n"
        "n = [int(s) for s in out]\n"
        "return x * n[-1]", [2]),
    "for-loop-over-an-array": (
        "out = np.cumsum(starts[0])\n"
        "y = x\n"
        "for s in out:\n"
        "    y = y[slice(0, s + 1)] * 2\n"
        "return y", [4]),
    # monai's _create_buffered_slices: `[tuple(slice(c[0], c[1]) for c in i) for i in slices_np]`
    "rows-of-a-reindexed-array": (
        "a = np.asarray([[[0, 2], [0, 3]], [[2, 4], [1, 3]]])\n"
        "a = a[np.argsort(a[:, 0, 0])]\n"
        "sl = [tuple(slice(c[0], c[1]) for c in r) for r in a]\n"
        "return x[sl[0]] * 2", [3]),
    # monai's PatchEmbeddingBlock: `int(in_channels * np.prod(patch_size))`
    "int-of-a-number-times-a-product": (
        "n = int(3 * np.prod(starts[0][1:]))\n"
        "return x * n", [1]),
    # Python numbers: Dynamo specializes them, no break
    "comprehension-over-a-list": (
        "sl = [slice(s, s + 2) for s in starts[0]]\n"
        "return x[sl[-1]] * 2", []),
    "len-of-an-array": (
        "out = np.asarray(starts[0])\n"
        "return x[slice(0, len(out))] * 2", []),
    "shape-of-an-array": (
        "out = np.asarray(starts[0]).T\n"
        "return x[slice(0, out.shape[0])] * 2", []),
    "loop-target-rebound": (
        "out = np.asarray(starts[0])\n"
        "y = x\n"
        "for s in out:\n"
        "    s = 1\n"
        "    y = y[slice(0, s + 1)] * 2\n"
        "return y", []),
    "comprehension-rebinds-the-name": (
        "s = np.asarray(starts[0])[0]\n"
        "sl = [slice(s, s + 2) for s in range(2)]\n"
        "return x[sl[-1]] * 2", []),
    "name-rebound-after-the-array": (
        "out = np.asarray(starts[0])\n"
        "out = [0, 2]\n"
        "sl = [slice(s, s + 2) for s in out]\n"
        "return x[sl[-1]] * 2", []),
}


@pytest.mark.parametrize("body,lines", CASES.values(), ids=CASES.keys())
def test_numpy_items_read_into_python(body, lines, tmp_path):
    text = HEAD + textwrap.indent(body + "\n", "    ") + "\n\ncompiled = torch.compile(f)\n"
    fa = analyze_source(text, "case.py")
    got = [fd.span.start.line - HEAD_LINES for fd in fa.findings]
    assert [(fd.code, fd.gb_id) for fd in fa.findings] == [("GM401", "GB0033")] * len(lines), text
    assert got == lines, text
    mod = load_module(text, tmp_path, "numpy_items")
    broke = logged_break_lines(mod.f, torch.arange(36.0).reshape(6, 6), [[0, 2], [0, 3]], [2, 2],
                               path=mod.__file__)
    assert sorted(n - HEAD_LINES for n in broke) == lines, text
