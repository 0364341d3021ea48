"""The keys of a dict annotated as keyed by ints are Python ints, and an element of a tensor taken
by one is a 0-dim index (realcode round 23, torchsurv 0.2.0's ConcordanceIndex):

    estimate = ConcordanceIndex._update_cindex_estimate(estimate)   # `-> torch.Tensor`
    comparable = self._get_comparable_and_tied_time(event, time)    # `-> dict[int, torch.Tensor]`
    order = torch.argsort(time)
    for ind, mask in comparable.items():
        est_i = estimate[order[ind], order[ind]]                    # GB0033

The key is an int where the dict is a parameter annotated `dict[int, ...]` / `Dict[int, ...]`,
or every binding of it is a call of a function of the file annotated to return one; and a
method called through its class (`Cls.m(x)`) gives a tensor where it is annotated to. What stays
unreported: keys of a dict keyed by ranges (what `order` gives for a range is a 1-d index,
advanced indexing), of a dict the function also rebinds to something else. Each case is checked
statically and run under Dynamo (its graph-break log): the reported lines are exactly the lines
Dynamo breaks on.
"""

from __future__ import annotations

import pytest
import torch

from difftest import case_block, findings_by_line, load_module
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
from typing import Dict

import torch


class Scorer:
    @staticmethod
    def _square(estimate: torch.Tensor) -> torch.Tensor:
        if estimate.ndim == 1:
            estimate = estimate.unsqueeze(1).expand(estimate.shape[0], estimate.shape[0])
        return estimate

    @staticmethod
    def _groups(time: torch.Tensor) -> dict[int, torch.Tensor]:
        comparable = {}
        for j in range(len(time) - 1):
            mask = torch.zeros_like(time).bool()
            mask[j + 1:] = True
            comparable[j] = mask
        return comparable

    @staticmethod
    def _windows(time: torch.Tensor) -> dict[range, torch.Tensor]:
        return {range(0, 2): time[:2], range(1, 3): time[1:3]}

    def run(self, estimate, time, by_index: Dict[int, torch.Tensor], case: str):
        out = time.sum()
        order = torch.argsort(time)
        if case == "annotated-return":
            estimate = Scorer._square(estimate)
            comparable = self._groups(time)
            for ind, mask in comparable.items():
                out = out + estimate[order[ind], order[ind]] + mask.sum()  # reported
        if case == "annotated-parameter":
            for k in by_index:
                out = out + time[order[k]] * by_index[k].sum()  # reported
        if case == "keys-view":
            keyed = self._groups(time)
            for i in keyed.keys():
                out = out + time[order[i]]  # reported
        if case == "method-by-its-class":
            if Scorer._square(estimate).sum() > 0:  # reported
                out = out * 2
        if case == "range-keys":
            windows = self._windows(time)
            for s, v in windows.items():
                out = out + time[order[s]].sum() + v.sum()
        if case == "rebound":
            groups = self._groups(time)
            n = len(groups)
            groups = self._windows(time)
            for w, v in groups.items():
                out = out + time[order[w]].sum() + n
        return out


scorer = Scorer()


def run(estimate, time, case):
    by_index = {0: torch.ones(2), 2: torch.zeros(2)}
    return scorer.run(estimate, time, by_index, case) * 1
'''

CASES = ["annotated-return", "annotated-parameter", "keys-view", "method-by-its-class", "range-keys", "rebound"]


@pytest.fixture(scope="module")
def by_line():
    return findings_by_line(SOURCE, "int_keyed.py")


@pytest.mark.parametrize("case", CASES)
def test_keys_of_dicts_keyed_by_ints(case, by_line, tmp_path):
    block, reported = case_block(SOURCE, case)
    assert sorted(line for line, fs in by_line.items() for _ in fs if line in block) == reported, (case, by_line)
    mod = load_module(SOURCE, tmp_path, "int_keyed")
    broke = logged_break_lines(mod.run, torch.randn(4), torch.tensor([3.0, 1.0, 2.0, 0.5]), case, path=mod.__file__)
    assert sorted(n for n in broke if n in block) == reported, (case, broke)


def test_an_edit_of_the_annotation_is_seen(tmp_path):
    """In the editor: changing the callee's annotation to `dict[str, ...]` takes the finding in
    its caller away, as a full check does."""
    from graphmend.analysis.workspace import Workspace
    from graphmend.lsp.checker import check

    path = str(tmp_path / "int_keyed.py")
    ws, settings = Workspace(), Settings(scope="module")
    c0 = check(SOURCE, path, 0, settings, ws, {})
    edited = SOURCE.replace("-> dict[int, torch.Tensor]:", "-> dict[str, torch.Tensor]:")
    c1 = check(edited, path, 1, settings, ws, {}, c0)
    full = check(edited, path, 1, settings, ws, {})
    assert [f.to_json() for f in c1.shown] == [f.to_json() for f in full.shown]
    block, reported = case_block(SOURCE, "annotated-return")
    assert [f for f in c0.findings if f.span.start.line in reported]
    assert not [f for f in c1.findings if f.span.start.line in block]
