"""A tqdm bar kept in an attribute and driven from other methods (pytorch-accelerated's progress
callback: `self.pbar = None` in `__init__`, `self.pbar = tqdm(...)` at the epoch's start,
`self.pbar.update(1)` at each step, realcode round 33): Dynamo skips tqdm's methods (GB0008), so
each call breaks. An attribute also stored as something else says nothing. Checked statically and
against Dynamo's graph-break log."""

from __future__ import annotations

import torch

from difftest import load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
from tqdm import tqdm


class Progress:
    def __init__(self):
        self.pbar = None
        self.other = None

    def start(self, total, other):
        self.pbar = tqdm(total=total, disable=True)
        self.other = other

    def step(self):
        self.pbar.update(1)
        self.other.update(1)

    def end(self):
        self.pbar.close()


class Counter:
    def __init__(self):
        self.n = 0

    def update(self, k):
        self.n += k


def run(cb, x):
    x = x * 2
    cb.step()
    x = x + 1
    cb.end()
    return x * 3
'''

LINES = {name: i for i, line in enumerate(SOURCE.splitlines(), 1)
         for name in ("self.pbar.update", "self.other.update", "self.pbar.close") if name in line}


def test_calls_on_a_bar_attribute_are_reported():
    found = {f.span.start.line: f for f in analyze_source(SOURCE, "p.py", Settings(scope="module")).findings}
    for name in ("self.pbar.update", "self.pbar.close"):
        f = found[LINES[name]]
        assert f.code == "GM403" and f.gb_id == "GB0008" and "tqdm" in f.message, f
    assert LINES["self.other.update"] not in found


def test_dynamo_agrees(tmp_path):
    mod = load_module(SOURCE, tmp_path, "progress_bar_attr")
    cb = mod.Progress()
    cb.start(4, mod.Counter())
    broke = logged_break_lines(mod.run, cb, torch.randn(4), path=mod.__file__)
    assert {LINES["self.pbar.update"], LINES["self.pbar.close"]} <= broke, broke
    assert LINES["self.other.update"] not in broke
