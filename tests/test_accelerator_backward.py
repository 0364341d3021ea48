"""Accelerate's `accelerator.backward(loss)` (Lightning Fabric's `fabric.backward(loss)` alike) runs
`loss.backward()`, which Dynamo does not trace (GB0123): torchkeras' step and pytorch-accelerated's
`backward_step` (`self._accelerator.backward(loss)`), realcode round 33, a miss. An accelerator is
a local bound to `accelerate.Accelerator(...)`, or a name or attribute called `accelerator` or
`fabric`. A `backward` of something else with one argument is not taken for one. Checked
statically, and against Dynamo with a stand-in whose `backward` runs the loss's, as Accelerate's
does."""

from __future__ import annotations

import torch

from difftest import load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import torch
from accelerate import Accelerator


class StandIn:
    def backward(self, loss):
        loss.backward()


class Step:
    def __init__(self, net):
        self.net = net
        self._accelerator = StandIn()
        self.schedule = StandIn()

    def __call__(self, x):
        loss = self.net(x).sum()
        self._accelerator.backward(loss)
        return loss.detach()


def local(x):
    acc = Accelerator()
    loss = x.sum()
    acc.backward(loss)


def other(schedule, x):
    schedule.backward(x)
'''

LINES = {name: i for i, line in enumerate(SOURCE.splitlines(), 1)
         for name in ("self._accelerator.backward", "acc.backward", "schedule.backward(x)", "loss.backward()")
         if name in line}


def test_an_accelerators_backward_is_reported():
    found = {f.span.start.line: f for f in analyze_source(SOURCE, "a.py", Settings(scope="module")).findings}
    for name in ("self._accelerator.backward", "acc.backward"):
        f = found[LINES[name]]
        assert (f.code, f.gb_id) == ("GM403", "GB0123") and "runs `.backward()`" in f.message, f
    assert LINES["schedule.backward(x)"] not in found, found


def test_dynamo_breaks_under_the_call(tmp_path):
    mod = load_module(SOURCE.replace("from accelerate import Accelerator\n", ""), tmp_path, "accelerator_backward")
    step = mod.Step(torch.nn.Linear(3, 2))
    broke = logged_break_lines(step, torch.randn(4, 3), path=mod.__file__)
    assert LINES["loss.backward()"] - 1 in broke, broke  # the stand-in's `loss.backward()` (one import fewer)
