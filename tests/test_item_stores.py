"""Two forms realcode rounds 23 and 24 showed, each checked statically and run under Dynamo (its
graph-break log): the reported lines are exactly the lines Dynamo breaks on.

- An item stored under a constant key holds what was stored there, later in the same function:
  madgrad 1.3's `self.state['k'] = torch.tensor([0])`, then `k = self.state['k'].item()`
  (madgrad.py:95, GB0124), also of a local dict. Not after the key, or the dict, is stored again.
- Builtin `any` / `all` of a tensor takes the truth of each item: torchsurv 0.2's
  `if any(torch.isinf(nll)):` (weibull.py:284, GB0170). Not of a list of Python bools.
"""

from __future__ import annotations

import pytest
import torch

from difftest import load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import torch


class Counter(torch.optim.Optimizer):
    def __init__(self, params):
        super().__init__(params, {})

    def step(self, closure=None):
        if 'k' not in self.state:
            self.state['k'] = torch.tensor([0], dtype=torch.long)
        k = self.state['k'].item()  # reported
        self.state['k'] += 1
        return k


def run(case, x):
    state = {}
    if case == "local-item":
        state['k'] = x.sum()
        return state['k'].item()  # reported
    if case == "restored-item":
        state['k'] = x.sum()
        state['k'] = 3
        if state['k'] > 2:
            return x
        return -x
    if case == "rebound-dict":
        state['k'] = x.sum()
        state = {'k': 2}
        if state['k'] > 1:
            return x
        return -x
    if case == "builtin-any":
        if any(torch.isinf(x)):  # reported
            return x * 0
        return x
    if case == "any-of-bools":
        if any([len(r) > 3 for r in x.unsqueeze(0)]):
            return x * 0
        return x
    if case == "optimizer-state":
        opt = Counter([torch.nn.Parameter(x.clone())])
        return x + opt.step()
    return x
'''

CASES = ["local-item", "restored-item", "rebound-dict", "builtin-any", "any-of-bools", "optimizer-state"]
STEP = range(8, 14)  # Counter.step


def _block(case: str) -> tuple[range, list[int]]:
    lines = SOURCE.splitlines()
    if case == "optimizer-state":
        return STEP, [i for i in STEP if lines[i - 1].endswith("# reported")]
    start = next(i for i, s in enumerate(lines, 1) if s.strip() == f'if case == "{case}":')
    end = next((i for i, s in enumerate(lines[start:], start + 1) if s.strip().startswith(("if case ==", "return x"))
                and not s.startswith("        ")), len(lines))
    return range(start, end), [i for i in range(start, end) if lines[i - 1].endswith("# reported")]


@pytest.fixture(scope="module")
def findings():
    fa = analyze_source(SOURCE, "item_stores.py", Settings(scope="module"))
    return [(f.code, f.span.start.line) for f in fa.findings]


@pytest.mark.parametrize("case", CASES)
def test_items_and_builtin_truth(case, findings, tmp_path):
    block, reported = _block(case)
    assert sorted(line for _, line in findings if line in block) == reported, (case, findings)
    mod = load_module(SOURCE, tmp_path, "item_stores")
    broke = logged_break_lines(mod.run, case, torch.tensor([1.0, float("inf")]), path=mod.__file__)
    assert sorted(n for n in broke if n in block) == reported, (case, broke)
