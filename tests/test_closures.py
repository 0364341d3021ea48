"""Tensors a nested function reads from the function it is defined in, and what it returns:
posteriors' `cg` binds `atol2 = torch.maximum(...)`, defines `cond_fun(value)` returning
`(rs > atol2) & (k < maxiter)`, then loops `while cond_fun(value):` (GB0170, realcode round 30).
A name the enclosing function binds twice, or the nested function binds itself, says nothing; and
what `torch.load` returns is whatever was saved (mambapy's state dict's keys compared with
strings, diffusers' checkpoint `global_step`), not a tensor. A nested function whose return may
be a Python bool (`t.numel() == 0 or (... and t[0] == 0)`, linear_operator) says nothing of the
call. Checked statically and run under
Dynamo (its graph-break log)."""

from __future__ import annotations

import pytest
import torch

from difftest import assert_case_breaks, load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import torch


def run(case: str, x: torch.Tensor, path: str):
    if case == "nested-return":
        atol = torch.maximum(x.abs().sum(), torch.tensor(0.5))

        def cond_fun(value):
            r, k = value
            return (r.sum() > atol) & (k < 3)
        if cond_fun((x, 0)):  # reported
            return x * 2
        return x
    if case == "free-variable":
        scale = x.sum()

        def grow(v):
            if scale > 1:  # reported
                return v * scale
            return v
        return grow(x)  # the call
    if case == "rebound-outside":
        level = x.sum()
        level = 2

        def shrink(v):
            if level > 1:
                return v / level
            return v
        return shrink(x)
    if case == "rebound-inside":
        bound = x.sum()

        def clip(v):
            bound = 3
            if bound > 1:
                return v.clamp(max=bound)
            return v
        return clip(x) + bound
    if case == "mixed-return":
        def is_empty(t):
            return t.numel() == 0 or (t.numel() == 1 and t[0] == 0)
        if is_empty(x):
            return x * 4
        return x
    if case == "loaded-dict":
        state = torch.load(path)  # reported
        if state["step"] > 2:
            return x * state["scale"]
        return x
    return x
'''

CASES = ["nested-return", "free-variable", "rebound-outside", "rebound-inside", "mixed-return", "loaded-dict"]


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "closures.py", Settings(scope="module")).findings


@pytest.mark.parametrize("case", CASES)
def test_closures(case, findings, tmp_path):
    path = tmp_path / "state.pt"
    torch.save({"step": 3, "scale": 0.5}, path)
    mod = load_module(SOURCE, tmp_path, "closures_" + case.replace("-", "_"))
    broke = logged_break_lines(mod.run, case, torch.ones(2, 3), str(path), path=mod.__file__)
    if case == "free-variable":
        # Dynamo logs the break in `grow` at its line, or (after other compiles in the process)
        # at the call in `run` whose inlining it stopped: either is the nested function's break
        call = next(i for i, line in enumerate(SOURCE.splitlines(), 1) if line.endswith("# the call"))
        inner = next(i for i, line in enumerate(SOURCE.splitlines(), 1) if "if scale > 1" in line)
        broke = {inner if n == call else n for n in broke}
    assert_case_breaks(SOURCE, case, findings, ("if case ==", "    return x\\n"), broke)
