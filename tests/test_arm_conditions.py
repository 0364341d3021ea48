"""A break in one arm of a conditional expression happens only where the test sends the run
there: higher's `p if p.requires_grad else torch.tensor([], requires_grad=True)` (GB0225, only
for frozen parameters; realcode round 30, a false alarm on a model with none) is named "breaks
only when not `p.requires_grad`" and is Information; a dtype test in the test is named as an
`if`'s is. A guard of an empty input (`int(i.max()) + 1 if i.numel() > 0 else 0`) is no condition
worth naming: that break stays an error (nor is `len(v) == 0`'s else arm). A comparison with a
number is named, as in an operand of `and` (poutyne's `tuple(m.tolist()) if len(m) <= 1 else
(m,)`, realcode round 32: a false alarm with two metrics), unless the other arm reads the same
way (`t.item() if t.numel() == 1 else t[0].item()` breaks either way). Checked statically and run under Dynamo (its
graph-break log), both ways through the arm."""

from __future__ import annotations

import pytest
import torch

from difftest import load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from graphmend.findings import severity
from test_callers import logged_break_lines

SOURCE = '''\
import torch


def targets(params):
    return [p if p.requires_grad else torch.tensor([], requires_grad=True) for p in params]


def count(mask):
    return int(mask.sum()) if mask.dtype == torch.bool else mask.size(0)


def size(index):
    return int(index.max()) + 1 if index.numel() > 0 else 0


def metrics_tuple(loss, metrics):
    return (loss,) + (tuple(metrics.tolist()) if len(metrics) <= 1 else (metrics,))


def first(t):
    return t.item() if t.numel() == 1 else t[0].item()


def mean(v):
    return float("nan") if len(v) == 0 else float(v.mean())


def run(case, x):
    if case == "one-metric":
        return metrics_tuple(x.sum(), x[:1]), x * 2
    if case == "two-metrics":
        return metrics_tuple(x.sum(), x[:2]), x * 2
    if case in ("first-one", "first-many"):
        return first(x[:1] if case == "first-one" else x), x * 2

    if case == "frozen":
        return [t.sum() for t in targets([x.detach()])], x * 2
    if case == "trainable":
        return [t.sum() for t in targets([x.detach().requires_grad_()])], x * 2
    if case == "bool-mask":
        return torch.zeros(count(x > 0)), x * 2
    if case == "index-mask":
        return torch.zeros(count(torch.tensor([1, 2]))), x * 2
    if case == "nonempty":
        return torch.zeros(size(torch.tensor([1, 2]) + x.long()[:2])), x * 2
    return x
'''

LINES = {name: i for i, line in enumerate(SOURCE.splitlines(), 1)
         for name in ("requires_grad else", "if mask.dtype", "if index.numel", "if len(metrics)", "if t.numel()",
                      "if len(v)") if name in line}


@pytest.fixture(scope="module")
def findings():
    return {f.span.start.line: f for f in analyze_source(SOURCE, "arm_conditions.py", Settings(scope="module")).findings}


def test_conditions_are_named(findings):
    grad = findings[LINES["requires_grad else"]]
    assert grad.code == "GM405" and grad.condition is not None and "requires_grad" in grad.message, grad
    assert "not `p.requires_grad`" in grad.message
    dtype = findings[LINES["if mask.dtype"]]
    assert dtype.code == "GM401" and dtype.condition is not None and "mask is bool" in dtype.message, dtype
    empty = findings[LINES["if index.numel"]]
    assert empty.code == "GM401" and empty.condition is None, empty
    assert findings[LINES["if len(v)"]].condition is None, findings[LINES["if len(v)"]]
    metrics = findings[LINES["if len(metrics)"]]
    assert metrics.code == "GM401" and "breaks only when `len(metrics) <= 1`" in metrics.message, metrics
    assert severity(metrics) == "information", metrics
    either = [f for f in analyze_source(SOURCE, "arm_conditions.py", Settings(scope="module")).findings
              if f.span.start.line == LINES["if t.numel()"]]
    assert len(either) == 2 and all(f.condition is None for f in either), either


@pytest.mark.parametrize("case,line,breaks", [
    ("frozen", "requires_grad else", True), ("trainable", "requires_grad else", False),
    ("bool-mask", "if mask.dtype", True), ("index-mask", "if mask.dtype", False),
    ("nonempty", "if index.numel", True), ("one-metric", "if len(metrics)", True),
    ("two-metrics", "if len(metrics)", False), ("first-one", "if t.numel()", True),
    ("first-many", "if t.numel()", True)])
def test_the_arm_breaks_only_where_the_test_sends_the_run(case, line, breaks, tmp_path):
    mod = load_module(SOURCE, tmp_path, "arm_conditions")
    broke = logged_break_lines(mod.run, case, torch.randn(4), path=mod.__file__)
    assert (LINES[line] in broke) is breaks, broke
