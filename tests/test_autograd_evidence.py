"""What autograd differentiates is a tensor: a name passed as the outputs of
`torch.autograd.grad` (or `autograd.grad`, `torch.autograd.backward`) counts as used like one.
pytorch-minimize 0.1.0's ScalarFunction.dir_evaluate (realcode round 13, torchmin/function.py:153)
calls a user's objective, differentiates its result and reads it into Python:

    with torch.enable_grad():
        f = self.fun(x)
    grad = autograd.grad(f, x)[0]
    return de_value(f=float(f), grad=grad)

`float(f)` breaks (GB0124) though the walk cannot see into the callback. The same read of a
callback's result that nothing differentiates stays unreported: it may be a Python number.
Checked statically and under Dynamo (its graph-break log): the same lines.

`.backward()` alone is no such evidence: a user class may define it (cooper's LagrangianStore,
tests/test_autograd_in_graph.py's `State`), so skorch's and pytorch-ignite's `loss.backward()` of a
loss a callback made stay unreported (realcode round 22).
"""

from __future__ import annotations

import torch

from difftest import load_module
from graphmend.analysis import analyze_source
from test_callers import logged_break_lines

SOURCE = '''\
import torch


def dir_evaluate(fun, x, t, d):
    x = x + d.mul(t)
    x = x.detach().requires_grad_(True)
    with torch.enable_grad():
        f = fun(x)
    grad = torch.autograd.grad(f, x)[0]
    return float(f), grad


def value_only(fun, x):
    f = fun(x)
    return float(f) + x


def run(x, d):
    return dir_evaluate(lambda z: (z * z).sum(), x, 0.5, d)


def run_number(x):
    return value_only(lambda z: 2.0, x)


compiled = torch.compile(run)
compiled_number = torch.compile(run_number)
'''


def test_what_autograd_differentiates_is_a_tensor(tmp_path):
    found = sorted((f.span.start.line, f.code) for f in analyze_source(SOURCE, "autograd_evidence.py").findings)
    # the leaf made in the graph (GM405), autograd.grad (GM403), float() of the objective (GM401)
    assert found == [(6, "GM405"), (9, "GM403"), (10, "GM401")], found
    mod = load_module(SOURCE, tmp_path, "autograd_evidence")
    broke = logged_break_lines(mod.run, torch.randn(3), torch.randn(3), path=mod.__file__)
    assert sorted(broke) == [line for line, _ in found], broke
    # a callback's result nothing differentiates: a Python number here, nothing breaks or is reported
    assert logged_break_lines(mod.run_number, torch.randn(3), path=mod.__file__) == set()
