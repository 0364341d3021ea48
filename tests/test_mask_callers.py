"""A boolean mask passed down to a helper is a mask there (realcode round 25: tensordict's
`_get_item(tensor, index)` returns `tensor[index]`, the mask coming from the caller):

    def helper(t, idx):
        return t[idx]                     # GB0036 when a caller passes `x > 0`

The callers' pass (analysis/callers.py) walks a helper again with the parameters its callers pass
tensors to seeded as tensors; an argument that is a mask where the call is made (a comparison,
`~`/`&`/`|` of masks, a name bound to one) now seeds the parameter as a mask too, also where the
helper annotates it as a tensor (which alone says nothing of its dtype). What stays unreported:
an index tensor passed (no mask), and a mask parameter rebound before it indexes. Each case is
checked statically and run under Dynamo (its graph-break log): the reported lines are exactly
the lines Dynamo breaks on.
"""

from __future__ import annotations

import pytest
import torch

from difftest import function_span, load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import torch


def helper(t, idx):
    return t[idx]  # reported


def gather(t: torch.Tensor, idx: torch.Tensor):
    return t[idx] * 2  # reported


def take(t, idx):
    return t[idx] + 1


def rebound(t, idx):
    idx = idx.long()
    return t[idx] - 1


def nested(t, keep):
    return helper(t * 2, keep)


def run(case, t: torch.Tensor, x: torch.Tensor):
    if case == "comparison":
        return helper(t, x > 0)
    if case == "annotated":
        done = x < 0
        return gather(t, ~done)
    if case == "index":
        return take(t, torch.tensor([0, 2]))
    if case == "rebound":
        return rebound(t, x > 0)
    if case == "two-calls":
        return nested(t, (x > 0) & (t < 1))
'''

FUNCTIONS = {"comparison": "helper", "annotated": "gather", "index": "take", "rebound": "rebound",
             "two-calls": "helper"}


@pytest.fixture(scope="module")
def findings():
    found = analyze_source(SOURCE, "mask_callers.py", Settings(scope="module")).findings
    return [(f.code, f.span.start.line, f.note) for f in found]


@pytest.mark.parametrize("case", list(FUNCTIONS))
def test_a_mask_passed_to_a_helper(case, findings, tmp_path):
    block, reported = function_span(SOURCE, FUNCTIONS[case])
    mod = load_module(SOURCE, tmp_path, "mask_callers")
    broke = logged_break_lines(mod.run, case, torch.randn(5), torch.randn(5), path=mod.__file__)
    assert sorted(n for n in broke if n in block) == reported, (case, broke)
    if reported:
        here = [(code, note) for code, line, note in findings if line in block]
        assert [code for code, _ in here] == ["GM402"], (case, findings)
        assert "is a boolean mask here" in here[0][1] or "(`idx` a boolean mask) here" in here[0][1], here
    else:
        assert not [f for f in findings if f[1] in block], (case, findings)


def test_the_finding_names_the_mask_and_its_caller(findings):
    block, _ = function_span(SOURCE, "gather")
    (note,) = [note for _, line, note in findings if line in block]
    call = next(i for i, s in enumerate(SOURCE.splitlines(), 1) if "gather(t, ~done)" in s)
    assert note == f"`idx` is a boolean mask here: `run()` passes `~done` (line {call})"
