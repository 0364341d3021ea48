"""Attributes every method of the class stores a tensor in are tensors in the other methods
(realcode round 23, torchsurv 0.2.0's KaplanMeierEstimator):

    def __call__(self, event: torch.Tensor, time: torch.Tensor, ...):
        self.time = time.to(self.device)
        ...
        self.time = uniq_times                      # a tensor _compute_counts returns
    def _compute_counts(self):
        order = torch.argsort(self.time, dim=0)
        groups = itertools.groupby(range(len(self.time)), key=lambda i: self.time[order[i]])  # GB0033

Each storing method is evaluated in order, as `__init__` is for the attributes it leaves
(test_init_attributes.py). What stays unreported: an attribute one method stores something else
in (a Python number), a store that may leave None, one from a parameter that may be something
else. Each case is checked statically and run under Dynamo (its graph-break log): the reported
lines are exactly the lines Dynamo breaks on.
"""

from __future__ import annotations

import pytest
import torch

from difftest import case_block, load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import itertools
from typing import Optional, Union

import torch


class Estimator:
    def __init__(self):
        self.device = torch.device("cpu")
        self.scale = 1.0

    def fit(self, event: torch.Tensor, time: torch.Tensor, ratio: Union[torch.Tensor, float] = 0.5,
            keep: bool = True):
        self.event = event.to(self.device)
        self.time = time.to(self.device)
        self.ratio = ratio
        self.kept = event.clone() if keep else None
        self.count = event.sum()
        uniq = torch.unique(self.time)
        self.time = uniq

    def rescale(self):
        self.scale = 2.0
        self.count = 0

    def describe(self):
        self.label = "km"

    def run(self, x, case: str):
        if case == "every-store-a-tensor":
            order = torch.argsort(self.time, dim=0)
            keys = [k for k, _ in itertools.groupby(range(len(self.time)), key=lambda i: self.time[order[i]])]  # reported
            x = x + len(keys)
        if case == "branch-on-the-attribute":
            if self.event.any():  # reported
                x = x * 2
        if case == "loose-parameter":
            if self.ratio < 1.0:
                x = x / 2
        if case == "maybe-none":
            if self.kept is not None:
                x = x + 3
        if case == "stored-elsewhere":
            if self.count:
                x = x + 4
        return x


est = Estimator()
est.fit(torch.tensor([1, 0, 1]), torch.tensor([3.0, 1.0, 2.0]))
est.rescale()


def run(x, case):
    return est.run(x, case) * 1
'''

CASES = ["every-store-a-tensor", "branch-on-the-attribute", "loose-parameter", "maybe-none",
         "stored-elsewhere"]


@pytest.fixture(scope="module")
def findings():
    return [(f.code, f.span.start.line) for f in analyze_source(SOURCE, "method_stores.py", Settings(scope="module")).findings]


@pytest.mark.parametrize("case", CASES)
def test_attributes_every_method_stores_a_tensor_in(case, findings, tmp_path):
    block, reported = case_block(SOURCE, case)
    assert sorted(line for _, line in findings if line in block) == reported, (case, findings)
    mod = load_module(SOURCE, tmp_path, "method_stores")
    broke = logged_break_lines(mod.run, torch.randn(3), case, path=mod.__file__)
    assert sorted(n for n in broke if n in block) == reported, (case, broke)


def test_an_edit_of_the_storing_method_is_seen(findings):
    """A method that stores a Python number there too makes the attribute no tensor."""
    edited = SOURCE.replace("        self.count = 0\n", "        self.count = 0\n        self.time = 0\n")
    got = [(f.code, f.span.start.line) for f in analyze_source(edited, "method_stores.py", Settings(scope="module")).findings]
    block, reported = case_block(edited, "every-store-a-tensor")
    assert reported and not [line for _, line in got if line in block], got


def test_an_edit_that_adds_a_store_rewalks_the_readers(tmp_path):
    """In the editor: typing a store of a string into a method that stored nothing the finding's
    method reads (one line, so the incremental path takes it) takes the finding away, as a full
    check does."""
    from graphmend.analysis.workspace import Workspace
    from graphmend.lsp.checker import check

    path = str(tmp_path / "method_stores.py")
    ws, settings = Workspace(), Settings(scope="module")
    c0 = check(SOURCE, path, 0, settings, ws, {})
    edited = SOURCE.replace('        self.label = "km"\n', '        self.time = "km"\n')
    c1 = check(edited, path, 1, settings, ws, {}, c0)
    full = check(edited, path, 1, settings, ws, {})
    assert c1.rewalked is not None and "Estimator.run" in c1.rewalked, c1.rewalked
    assert [f.to_json() for f in c1.shown] == [f.to_json() for f in full.shown]
    block, reported = case_block(SOURCE, "every-store-a-tensor")
    assert [f for f in c0.findings if f.span.start.line in reported]
    assert not [f for f in c1.findings if f.span.start.line in block]
