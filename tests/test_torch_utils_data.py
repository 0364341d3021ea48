"""Dynamo skips torch.utils (GB0008, "marked as skipped"): building a torch.utils.data dataset or
loader in compiled code breaks, and so does `len()` of one, which runs its `__len__`
(deepctr-torch's `fit`, realcode round 33: `TensorDataset(...)`, `DataLoader(...)` and a deferred
`print(... .format(len(train_tensor_data)))` that still broke at the `len()`). A dataset class of
the user's own is traced. Checked statically and against Dynamo's graph-break log."""

from __future__ import annotations

import pytest
import torch

from difftest import findings_by_line, load_module, marked_lines
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import torch
import torch.utils.data as Data
from torch.utils.data import DataLoader


class Pairs(Data.Dataset):
    def __init__(self, x):
        self.x = x

    def __len__(self):
        return self.x.shape[0]


def build(x, y):
    ds = Data.TensorDataset(x, y)
    z = x * 2
    return z, ds


def measure(x, ds):
    n = len(ds)
    return x + n


def loader(x, ds):
    dl = DataLoader(ds, batch_size=2)
    return x * 3, dl


def own(x):
    ds = Pairs(x)
    return x + len(ds)


def run(case, x, ds):
    if case == "build":
        return build(x, x)
    if case == "measure":
        return measure(x, ds)
    if case == "loader":
        return loader(x, ds)
    return own(x)
'''

LINES = marked_lines(SOURCE, ("ds = Data.TensorDataset", "n = len(ds)", "dl = DataLoader", "x + len(ds)"))


@pytest.fixture(scope="module")
def by_line():
    return findings_by_line(SOURCE, "data.py")


def test_torch_utils_data_calls_are_reported(by_line):
    for name in ("ds = Data.TensorDataset", "dl = DataLoader"):
        (f,) = by_line[LINES[name]]
        assert f.code == "GM403" and f.gb_id == "GB0008" and "torch.utils.data" in f.message, f
        assert not f.fixable
    assert LINES["x + len(ds)"] not in by_line, by_line[LINES["x + len(ds)"]]


def test_len_of_a_local_dataset_is_reported():
    src = SOURCE.replace("def measure(x, ds):\n", "def measure(x, y):\n    ds = Data.TensorDataset(x, y)\n")
    lines = src.splitlines()
    at = next(i for i, line in enumerate(lines, 1) if "n = len(ds)" in line)
    found = [f for f in analyze_source(src, "data.py", Settings(scope="module")).findings if f.span.start.line == at]
    assert [(f.code, f.gb_id) for f in found] == [("GM403", "GB0008")] and "TensorDataset" in found[0].message


@pytest.mark.parametrize("case,line,breaks", [
    ("build", "ds = Data.TensorDataset", True), ("measure", "n = len(ds)", True),
    ("loader", "dl = DataLoader", True), ("own", "x + len(ds)", False)])
def test_dynamo_agrees(case, line, breaks, tmp_path):
    mod = load_module(SOURCE, tmp_path, "torch_utils_data")
    x = torch.randn(4)
    ds = torch.utils.data.TensorDataset(x, x)  # built outside: Dynamo logs a repeated break's stack once
    broke = logged_break_lines(mod.run, case, x, ds, path=mod.__file__)
    assert (LINES[line] in broke) is breaks, broke
