"""Autograd inside compiled code: GM405 (`requires_grad` changed on a tensor the compiled frame
computed) and GM403's `Tensor.backward()`.

Each case is a small function checked statically and traced by Dynamo (`torch._dynamo.explain`):
the lines GraphMend reports GM405 on must be exactly the lines Dynamo breaks on. Changing the
flag of an input traces, as does `requires_grad_(False)`; every case with a break has tensor work
after it that uses the tensor (as the gradient code that follows such a line does).
"""

from __future__ import annotations

import logging
import textwrap

import pytest
import torch

from difftest import load_module
from test_callers import logged_break_lines
from graphmend.analysis import analyze_source

HEAD = """\
import torch


def f(x: torch.Tensor, flag: bool):
"""
HEAD_LINES = HEAD.count("\n")

# name -> (body returning a tensor, lines of the body GraphMend reports and Dynamo breaks on, flag)
CASES = {
    "setattr-intermediate": ("y = x * 2\ny.requires_grad = True\nreturn (y * 3).sum()", [2], False),
    "setattr-false-intermediate": ("y = x * 2\ny.requires_grad = False\nreturn (y * 3).sum()", [2], False),
    "setattr-chunk": ("a, b = torch.chunk(x * 1, 2)\na.requires_grad = True\nreturn (a * b).sum()", [2], False),
    "setattr-input": ("x.requires_grad = True\nreturn (x * 3).sum()", [], False),
    "detach-requires-grad": ("y = x.detach().requires_grad_()\nreturn (y * y).sum()", [1], False),
    "zeros-requires-grad": ("y = torch.zeros(4).requires_grad_(True)\nreturn (x * y).sum()", [1], False),
    "name-requires-grad": ("y = x.clone()\ny.requires_grad_()\nreturn (y * 2).sum()", [2], False),
    "input-requires-grad": ("x.requires_grad_()\nreturn (x * 2).sum()", [], False),
    "requires-grad-false": ("y = x * 2\ny.requires_grad_(False)\nreturn y.sum()", [], False),
    "flag-true": ("y = x * 2\ny.requires_grad_(flag)\nreturn y.sum()", [2], True),
    # `.float()` of a float tensor, an in-place method: the same tensor in eager, a new one to Dynamo
    "float-of-float-input": ("y = x.float()\ny.requires_grad_()\nreturn (y * 2).sum()", [2], False),
    "in-place-of-the-input": ("y = x.mul_(1)\ny.requires_grad_()\nreturn (y * 2).sum()", [2], False),
}


@pytest.mark.parametrize("body,lines,flag", CASES.values(), ids=CASES.keys())
def test_requires_grad_findings_are_dynamo_breaks(body, lines, flag, tmp_path):
    text = HEAD + textwrap.indent(body + "\n", "    ") + "\n\ncompiled = torch.compile(f)\n"
    fa = analyze_source(text, "case.py")
    got = [fd.span.start.line - HEAD_LINES for fd in fa.findings]
    assert [fd.code for fd in fa.findings] == ["GM405"] * len(lines), text
    assert got == lines, text
    mod = load_module(text, tmp_path, "requires_grad")
    torch._dynamo.reset()
    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
    try:
        ex = torch._dynamo.explain(mod.f)(torch.arange(4.0), flag)
    finally:
        torch._dynamo.reset()
    broke = sorted({r.user_stack[-1].lineno - HEAD_LINES for r in ex.break_reasons})
    assert broke == lines, [r.reason.splitlines()[0] for r in ex.break_reasons]


def test_a_conditional_flag_names_its_condition():
    text = HEAD + "    y = x * 2\n    y.requires_grad_(flag)\n    return y.sum()\n\n\ncompiled = torch.compile(f)\n"
    (fd,) = analyze_source(text, "case.py").findings
    assert fd.condition is not None and "flag" in fd.message
    assert fd.decline_reason.startswith("no rewrite keeps the meaning")


BACKWARD = """\
import torch


def step(x: torch.Tensor, w: torch.Tensor):
    loss = (x * w).sum()
    loss.backward(retain_graph=True)
    (loss * 2 + w.sum()).backward()
    return w.grad * 2
"""


def test_tensor_backward_is_a_break(tmp_path):
    """A compiled train step's `loss.backward()`: Dynamo breaks there (GB0123), both calls found."""
    found = analyze_source(BACKWARD + "\n\ncompiled = torch.compile(step)\n", "step.py").findings
    assert [(f.code, f.span.start.line) for f in found] == [("GM403", 6), ("GM403", 7)]
    assert found[1].message.startswith("`(loss * 2 + w.sum()).backward()`")
    mod = load_module(BACKWARD, tmp_path, "backward_step")
    torch._dynamo.reset()
    try:
        w = torch.ones(3, requires_grad=True)
        ex = torch._dynamo.explain(mod.step)(torch.arange(3.0), w)
    finally:
        torch._dynamo.reset()
    assert {r.user_stack[-1].lineno for r in ex.break_reasons} == {6, 7}


CREATED = """\
import torch


def leaf(x):
    t = torch.tensor(0.0, requires_grad=True)
    return x + t


def maybe_leaf(x, flag: bool):
    u = torch.zeros_like(x, requires_grad=flag)
    v = torch.ones(3, requires_grad=False)
    return x + u + v


def outer(x, flag: bool):
    return leaf(x * 2) * 3


def outer_flag(x, flag: bool):
    return maybe_leaf(x * 2, flag) * 3


def top(x):
    t = torch.tensor(0.0, requires_grad=True)
    return x * 2 + t
"""


def test_a_tensor_created_with_requires_grad_in_an_inlined_frame(tmp_path):
    """routing-transformer's `torch.tensor(0., requires_grad=True, ...)` in a submodule's forward
    (realcode round 15, GB0225): Dynamo breaks there when it inlines the frame, not in the
    compiled function's own frame; the finding says so, and a non-literal flag is its condition."""
    text = CREATED + "\n\nc = torch.compile(outer), torch.compile(outer_flag), torch.compile(top)\n"
    found = analyze_source(text, "created.py").findings
    assert [(f.code, f.span.start.line) for f in found] == [("GM405", 5), ("GM405", 10), ("GM405", 24)]
    assert all("inlined" in (f.note or "") for f in found)
    assert found[1].condition is not None and "flag" in found[1].message
    mod = load_module(CREATED, tmp_path, "created")
    x = torch.arange(3.0)
    for fn, args, lines in ((mod.outer, (x, True), {5}), (mod.outer_flag, (x, True), {10}),
                            (mod.outer_flag, (x, False), set()), (mod.top, (x,), set())):
        torch._dynamo.reset()
        try:
            ex = torch._dynamo.explain(fn)(*args)
        finally:
            torch._dynamo.reset()
        assert {r.user_stack[-1].lineno for r in ex.break_reasons} == lines, (fn.__name__, args)


DECLARED = """\
from dataclasses import dataclass
from typing import Optional

import torch


@dataclass
class State:
    lagrangian: Optional[torch.Tensor] = None
    count: int = 0

    def backward(self) -> None:
        if self.lagrangian is not None:
            self.lagrangian.backward()


def step(x: torch.Tensor, w: torch.Tensor):
    s = State((x * w).sum())
    s.backward()
    return w.grad * 2
"""


def test_a_method_called_on_a_field_the_class_declares_a_tensor():
    """cooper's `CMPState.backward()` (realcode round 13, a miss once `.backward()` was named):
    `self.lagrangian`, a dataclass field declared `Optional[torch.Tensor]`, is a tensor where a
    method is called on it; Dynamo breaks at that backward (GB0123)."""
    from graphmend.config import Settings

    found = analyze_source(DECLARED, "state.py", settings=Settings(scope="module")).findings
    assert [(f.code, f.span.start.line) for f in found] == [("GM403", 14)]
    import importlib.util
    import sys
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "gm_state_case.py"
        path.write_text(DECLARED)
        spec = importlib.util.spec_from_file_location("gm_state_case", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["gm_state_case"] = mod  # dataclasses look their module up
        try:
            spec.loader.exec_module(mod)
            w = torch.ones(3, requires_grad=True)
            broke = logged_break_lines(mod.step, torch.arange(3.0), w, path=str(path))
        finally:
            sys.modules.pop("gm_state_case", None)
    assert 14 in broke, broke
