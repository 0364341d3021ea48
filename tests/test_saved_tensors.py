"""What an autograd Function's backward unpacks from `ctx.saved_tensors` is a tensor (realcode
round 28, torch-linode 0.3.0's adjoint: `t, *param_values = ctx.saved_tensors`, then
`float(t[i])`, GB0124 unreported). Also `(t,) = ctx.saved_tensors` and `ctx.saved_tensors[0]`;
a starred rest stays a list. Each case is checked statically and run under Dynamo, which traces
the backward when it compiles the Function's `apply` (its graph-break log).
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


class Unpacked(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y0, t):
        ctx.save_for_backward(t, y0)
        return y0 * t.sum()

    @staticmethod
    def backward(ctx, g):
        t, *rest = ctx.saved_tensors
        total = 0.0
        for i in range(len(t) - 1, 0, -1):
            total += float(t[i]) - float(t[i - 1])  # reported
        if len(rest) > 1:
            total = total * 2
        return g * total, None


class Single(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y0, t):
        ctx.save_for_backward(t)
        return y0 * t.sum()

    @staticmethod
    def backward(ctx, g):
        (t,) = ctx.saved_tensors
        if t[0] > 0:  # reported
            g = g * 2
        return g, None


class Indexed(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y0, t):
        ctx.save_for_backward(t)
        return y0 * t.sum()

    @staticmethod
    def backward(ctx, g):
        t = ctx.saved_tensors[0]
        return g * float(t[1]), None  # reported
'''


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "saved_tensors.py", Settings(scope="module")).findings


@pytest.mark.parametrize("name", ["Unpacked", "Single", "Indexed"])
def test_saved_tensors_are_tensors(name, findings, tmp_path):
    lines = SOURCE.splitlines()
    start = lines.index(f"class {name}(torch.autograd.Function):") + 1
    end = next((i for i in range(start + 1, len(lines) + 1) if lines[i - 1].startswith("class ")), len(lines) + 1)
    block = range(start, end)
    reported = [i for i in block if lines[i - 1].endswith("# reported")]
    assert sorted({f.span.start.line for f in findings if f.span.start.line in block}) == reported, findings
    mod = load_module(SOURCE, tmp_path, "saved_tensors")
    fn = getattr(mod, name)
    y0 = torch.ones(3, requires_grad=True)
    broke = logged_break_lines(lambda y, t: fn.apply(y, t).sum(), y0, torch.tensor([0.5, 1.0, 2.0]),
                               path=mod.__file__)
    assert sorted(n for n in broke if n in block) == reported, broke
