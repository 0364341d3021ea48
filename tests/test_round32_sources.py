"""Sources of data-dependent values that realcode round 32 found unknown to the analysis, each
measured against Dynamo's graph-break log:

- a mask made by `any`/`all` over a dimension (torchstain's `OD[~torch.any(OD < beta, dim=1)]`,
  GB0036); `any()` over everything is 0-dim, no mask;
- the total norm `nn.utils.clip_grad_norm_` returns (lampe's `if norm.isfinite():`, GB0170);
- `timeit.default_timer()` and the `_ns` clocks, skipped like `time.perf_counter()` (poutyne, GB0007);
- an optimizer's `zero_grad()`, which Dynamo skips (lampe, poutyne, GB0008), not a module's nor
  that of an instance of a class of the file named like one (`opt = Accumulator()`);
- numpy's comparisons, arrays under Dynamo even of Python numbers (`if np.less(a, np.inf):`), also
  through an attribute that holds one (poutyne's `self.monitor_op = np.less`, GB0170);
- no tensor where `isinstance(x, Iterable)` fails, nor where `isinstance(x, Mapping)` holds
  (poutyne's `_get_metric`: `else: float(metrics)` was a false alarm)."""

from __future__ import annotations

import pytest
import torch

from difftest import assert_case_breaks, assert_span_breaks, function_span, load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import time
import timeit
from collections.abc import Iterable, Mapping
from typing import Optional

import numpy as np
import torch
import torch.nn as nn

PARAMS = [nn.Parameter(torch.ones(3))]
PARAMS[0].grad = torch.ones(3)
optimizer = torch.optim.SGD(PARAMS, lr=0.1)
LINEAR = nn.Linear(3, 1)

class Stop:
    def __init__(self, mode="min"):
        if mode == "min":
            self.monitor_op = np.less
        else:
            self.monitor_op = np.greater
        self.best = np.inf

    def improved(self, current):
        if self.monitor_op(current - 0.0, self.best):  # reported
            return True
        return False


class Accumulator:
    def __init__(self):
        self.total = 0.0

    def zero_grad(self):
        self.total = 0.0


def step_with(o: Optional[torch.optim.Optimizer], x):
    o.zero_grad(set_to_none=True)  # reported
    return x * 2


def metric(m):
    if torch.is_tensor(m) and len(m.shape) == 0:
        return [float(m)]  # reported
    elif isinstance(m, Mapping):
        return [float(m[k]) for k in m]
    elif isinstance(m, Iterable):
        return [float(v) for v in m]
    else:
        return [float(m)]


def run(case: str, x: torch.Tensor):
    if case == "any-dim-mask":
        return x[~torch.any(x < 0.5, dim=1)]  # reported
    if case == "all-method-mask":
        return x[(x > 0.1).all(1)]  # reported
    if case == "any-everything":
        return x * (x > 0.5).any()
    if case == "clip-norm":
        norm = nn.utils.clip_grad_norm_(PARAMS, 1.0)
        if norm.isfinite():  # reported
            return x * 2
        return x
    if case == "timer":
        t0 = timeit.default_timer()  # reported
        return x * 2 + t0
    if case == "ns-clock":
        t0 = time.perf_counter_ns()  # reported
        return x * 2 + t0
    if case == "np-less":
        a = 0.5
        if np.less(a, np.inf):  # reported
            return x * 2
        return x
    if case == "optimizer-zero-grad":
        optimizer.zero_grad()  # reported
        return x * 2
    if case == "own-zero-grad":
        opt = Accumulator()
        opt.zero_grad()
        return x * 2
    if case == "module-zero-grad":
        LINEAR.zero_grad()
        return x * 2
    if case == "python-metric":
        return x * metric(0.75)[0]
    if case == "mapping-metric":
        return x * metric({"a": 0.5})[0]
    return x
'''

CASES = ["any-dim-mask", "all-method-mask", "any-everything", "clip-norm", "timer", "ns-clock", "np-less",
         "optimizer-zero-grad", "own-zero-grad", "module-zero-grad", "python-metric", "mapping-metric"]


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "round32_sources.py", Settings(scope="module")).findings


@pytest.mark.parametrize("case", CASES)
def test_case_breaks_where_reported(case, findings, tmp_path):
    mod = load_module(SOURCE, tmp_path, "round32_" + case.replace("-", "_"))
    x = torch.tensor([[0.2, 0.9, 0.3], [0.7, 0.8, 0.6], [0.4, 0.1, 0.95]])
    broke = logged_break_lines(mod.run, case, x, path=mod.__file__)
    assert_case_breaks(SOURCE, case, findings, ("if case ==", "    return x\\n"), broke)


def test_attribute_holding_a_numpy_comparison(findings, tmp_path):
    mod = load_module(SOURCE, tmp_path, "round32_stop")
    broke = logged_break_lines(mod.Stop().improved, 0.25, path=mod.__file__)
    lines = SOURCE.splitlines()
    start = next(i for i, t in enumerate(lines, 1) if "def improved" in t)
    end = next(i for i, t in enumerate(lines, 1) if t.strip() == "return False")
    assert_span_breaks(range(start, end + 1), [start + 1], findings, broke)


def test_metric_branches(findings, tmp_path):
    """Only the 0-dim tensor branch of `metric` reads a tensor; the Mapping and the last branch
    read Python numbers (the Iterable branch reads items of whatever iterates)."""
    block, reported = function_span(SOURCE, "metric")
    lines = SOURCE.splitlines()
    flagged = sorted(f.span.start.line for f in findings if f.span.start.line in block)
    mapping = next(i for i in block if "float(m[k])" in lines[i - 1])
    last = max(i for i in block if lines[i - 1].strip() == "return [float(m)]")
    assert reported[0] in flagged and mapping not in flagged and last not in flagged
    mod = load_module(SOURCE, tmp_path, "round32_metric")
    broke = logged_break_lines(lambda t: t * mod.metric(t)[0], torch.tensor(0.5), path=mod.__file__)
    assert reported[0] in broke


def test_parameter_annotated_as_an_optimizer(findings, tmp_path):
    mod = load_module(SOURCE, tmp_path, "round32_step_with")
    broke = logged_break_lines(mod.step_with, mod.optimizer, torch.ones(3), path=mod.__file__)
    lines = SOURCE.splitlines()
    start = next(i for i, t in enumerate(lines, 1) if t.startswith("def step_with("))
    assert_span_breaks(range(start, start + 3), [start + 1], findings, broke)
