"""`.item()` of what a callable the walk does not know returns is a read of a tensor's value: only
a tensor (or a numpy value, which Dynamo traces as one) has an `.item()`. torchkeras' step
(realcode round 33) reads `metric_fn(all_preds, all_labels).item()` for each metric of
`self.metrics_dict.items()` (GB0124, a miss). A method of the file's own class named `item` is
not taken for one. Checked statically and against Dynamo's graph-break log."""

from __future__ import annotations

import torch

from difftest import load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import torch


class Accuracy(torch.nn.Module):
    def forward(self, preds, labels):
        return (preds.argmax(-1) == labels).float().mean()


class StepRunner:
    def __init__(self):
        self.metrics_dict = torch.nn.ModuleDict({"acc": Accuracy()})

    def __call__(self, preds, labels):
        return {name: metric_fn(preds, labels).item() for name, metric_fn in self.metrics_dict.items()}
'''

LINES = {name: i for i, line in enumerate(SOURCE.splitlines(), 1)
         for name in ("metric_fn(preds, labels).item()",) if name in line}
OWN = SOURCE + '''

class Box:
    def item(self):
        return 1


def make_box():
    return Box().item()
'''


def test_item_of_an_unknown_call_is_reported():
    found = {f.span.start.line: f.code for f in analyze_source(SOURCE, "k.py", Settings(scope="module")).findings}
    assert found.get(LINES["metric_fn(preds, labels).item()"]) == "GM401", found
    own = {f.span.start.line for f in analyze_source(OWN, "k.py", Settings(scope="module")).findings}
    assert own == set(), own  # `item` may be the file's own method


def test_dynamo_agrees(tmp_path):
    mod = load_module(SOURCE, tmp_path, "item_of_unknown_call")
    broke = logged_break_lines(mod.StepRunner(), torch.randn(8, 3), torch.randint(0, 3, (8,)), path=mod.__file__)
    assert LINES["metric_fn(preds, labels).item()"] in broke, broke
