"""A lambda's body is traced where the lambda is called, so a break in it is a break: `lambda:
x.item()` over a tensor the function holds, and torchdiffeq's `interp_fn = lambda t:
self._linear_interp(t0, t1, y0, y1, t)`, which makes `_linear_interp`'s `if t == t0:` a branch
on a tensor (realcode round 23, two misses). A lambda's parameters are its own: `map(lambda t:
t.reshape(...), ...)` says nothing of the function's `t` (routing-transformer's `b, h, t, d =
*q.shape`, then `torch.ones((b, t))`, no break). A lambda given as a parameter's default runs
where the function calls the parameter, its parameters typed by a `Callable[[...], R]`
annotation: ignite's `output_transform: Callable[[Any, Any, Any, torch.Tensor], Any] = lambda x,
y, y_pred, loss: loss.item()` (realcode round 22, a miss). The parameter of a lambda a call
applies to a `range(...)` (`groupby(range(n), key=lambda i: time[order[i]])`, torchsurv's
Kaplan-Meier, realcode round 23) is an int, so `order[i]` is an element of a tensor. Checked
statically and run under Dynamo (its graph-break log and graph count)."""

from __future__ import annotations

import pytest
import torch

from difftest import Counter, compiled, findings_by_line, load_module, marked_lines
from test_callers import logged_break_lines

SOURCE = '''\
import itertools
from typing import Any, Callable

import torch


def closed_over(x):
    read = lambda: x.item()
    return x * 2, read()


class Interp:
    def _linear_interp(self, t0, t1, y0, y1, t):
        if t == t0:
            return y0
        return y0 + (t - t0) / (t1 - t0) * (y1 - y0)

    def run(self, t0: torch.Tensor, t1: torch.Tensor, y0, y1):
        interp_fn = lambda t: self._linear_interp(t0, t1, y0, y1, t)
        return interp_fn(t0 * 0.5 + t1 * 0.5)


def shapes(q, k):
    b, h, t, d = *q.shape, k.shape[2]
    q, k = map(lambda t: t.reshape(b, h, -1), (q, k))
    return torch.ones((b, t)) + q.sum() + k.sum()


def own_params(x):
    double = lambda x: x * 2
    return double(x.shape[0]) + x


def supervised_step(model, output_transform: Callable[[Any, Any, Any, torch.Tensor], Any] = lambda x, y, y_pred, loss: loss.item(),
                    untyped: Callable = lambda loss: loss.item()):
    def update(x, y):
        loss = model(x).sum()
        return output_transform(x, y, None, loss), untyped
    return update


def groups(time):
    order = torch.argsort(time)
    return [k for k, _ in itertools.groupby(range(len(time)), key=lambda i: time[order[i]])]


def run(case, x):
    if case == "groupby":
        return groups(x)
    if case == "default":
        return supervised_step(torch.nn.Identity())(x, x)
    if case == "closed-over":
        return closed_over(x.sum())
    if case == "interp":
        return Interp().run(x[0], x[1] + 1.0, x, x * 2)
    if case == "shapes":
        return shapes(x.reshape(1, 2, 2), x.reshape(1, 2, 2))
    return own_params(x)
'''

LINES = marked_lines(SOURCE, ("lambda: x.item()", "if t == t0", "torch.ones((b, t))", "double(x.shape[0])",
                              "loss: loss.item(),", "lambda loss: loss.item()", "key=lambda i"))


@pytest.fixture(scope="module")
def by_line():
    return findings_by_line(SOURCE, "lambda_bodies.py")


def test_sites_in_lambda_bodies_are_found(by_line):
    assert [f.code for f in by_line.get(LINES["lambda: x.item()"], [])] == ["GM401"], by_line
    assert [f.code for f in by_line.get(LINES["if t == t0"], [])] == ["GM201"], by_line
    assert [f.code for f in by_line.get(LINES["loss: loss.item(),"], [])] == ["GM401"], by_line
    assert LINES["lambda loss: loss.item()"] not in by_line  # no annotation types its parameter
    assert [f.code for f in by_line.get(LINES["key=lambda i"], [])] == ["GM401"], by_line


def test_lambda_parameters_are_not_the_functions_names(by_line):
    assert LINES["torch.ones((b, t))"] not in by_line, by_line[LINES["torch.ones((b, t))"]]
    assert LINES["double(x.shape[0])"] not in by_line, by_line


@pytest.mark.parametrize("case,line,breaks", [
    ("closed-over", "lambda: x.item()", True), ("interp", "if t == t0", True),
    ("shapes", "torch.ones((b, t))", False), ("own", "double(x.shape[0])", False),
    ("default", "loss: loss.item(),", True), ("groupby", "key=lambda i", True)])
def test_dynamo_agrees(case, line, breaks, tmp_path):
    mod = load_module(SOURCE, tmp_path, "lambda_bodies")
    broke = logged_break_lines(mod.run, case, torch.randn(4), path=mod.__file__)
    assert (LINES[line] in broke) is breaks, broke
    if not breaks:
        counter = Counter()
        compiled(mod.run, counter, fullgraph=True)(case, torch.randn(4))
        assert not broke and len(counter.graphs) == 1
