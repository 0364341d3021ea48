"""Calling a parameter annotated as a callable that returns a tensor gives a tensor (realcode round
22, pytorch-ignite 0.5.5's supervised_training_step):

    def supervised_training_step(model, optimizer,
                                 loss_fn: Callable[[Any, Any], torch.Tensor] | torch.nn.Module, ...):
        def update(engine, batch):
            ...
            loss = loss_fn(y_pred, y)
            loss.backward()                       # GB0123

The parameter may be the function's own or an enclosing function's (a closure). What stays
unreported: a callable annotated to return anything else, and a name rebound after the header.
Each case is checked statically and run under Dynamo (its graph-break log): the reported lines
are exactly the lines Dynamo breaks on.
"""

from __future__ import annotations

import pytest
import torch

from difftest import load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
from typing import Any, Callable, Union

import torch


class Store:
    def __init__(self, value):
        self.value = value

    def backward(self):
        self.value = self.value * 2


def training_step(model, loss_fn: Callable[[Any, Any], torch.Tensor] | torch.nn.Module, steps: int = 2):
    def update(x, y):
        loss = loss_fn(model(x), y)
        if steps > 1:
            loss = loss / steps
        loss.backward()  # reported
        return loss
    return update


def direct(x, y, crit: Union[Callable[..., torch.Tensor], torch.nn.Module]):
    loss = crit(x, y)
    loss.backward()  # reported
    return loss


def any_result(x, y, crit: Callable[..., Any]):
    loss = crit(x, y)
    loss.backward()
    return loss.value


def rebound(x, y, crit: Callable[..., torch.Tensor]):
    crit = lambda a, b: Store(a)  # noqa: E731
    loss = crit(x, y)
    loss.backward()
    return loss.value


model = torch.nn.Linear(3, 1)
step = training_step(model, torch.nn.functional.mse_loss)


def run(case, x, y):
    if case == "closure":
        return step(x, y)
    if case == "parameter":
        return direct(model(x), y, torch.nn.functional.mse_loss)
    if case == "any-result":
        return any_result(x, y, lambda a, b: Store(a))
    return rebound(x, y, torch.nn.functional.mse_loss)
'''

FUNCTIONS = {"closure": "training_step", "parameter": "direct", "any-result": "any_result", "rebound": "rebound"}


def _block(case: str) -> tuple[range, list[int]]:
    lines = SOURCE.splitlines()
    start = next(i for i, s in enumerate(lines, 1) if s.startswith(f"def {FUNCTIONS[case]}("))
    end = next(i for i, s in enumerate(lines[start:], start + 1) if s.startswith(("def ", "model =")))
    return range(start, end), [i for i in range(start, end) if lines[i - 1].endswith("# reported")]


@pytest.fixture(scope="module")
def findings():
    found = analyze_source(SOURCE, "tensor_callables.py", Settings(scope="module")).findings
    return [(f.code, f.span.start.line) for f in found]


@pytest.mark.parametrize("case", list(FUNCTIONS))
def test_calling_a_callable_annotated_to_return_a_tensor(case, findings, tmp_path):
    block, reported = _block(case)
    assert sorted(line for _, line in findings if line in block) == reported, (case, findings)
    assert all(code == "GM403" for code, line in findings if line in block), findings
    mod = load_module(SOURCE, tmp_path, "tensor_callables")
    broke = logged_break_lines(mod.run, case, torch.randn(4, 3), torch.randn(4, 1), path=mod.__file__)
    assert sorted(n for n in broke if n in block) == reported, (case, broke)
