"""torch functions that take a Python number as a length, a size or a spacing: a 0-dim tensor
there is read into Python (explain: "Data dependent operator", GB0033), measured on torch 2.13
for each one below (realcode round 29: torch-pme's `torch.fft.fftfreq(ns[0], ...)` with `ns` an
annotated tensor parameter). The same calls with Python ints trace, and so do they with a
tensor the function builds from Python numbers (`torch.tensor(m)`, arithmetic of it with
numbers): Dynamo knows its value; `int()` of such a tensor, or an item of `torch.tensor([m, ...])`,
still breaks. Checked statically and run under Dynamo (its graph-break log)."""

from __future__ import annotations

import pytest
import torch

from difftest import assert_case_breaks, load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import torch


def run(case: str, x: torch.Tensor, ns: torch.Tensor, m: int = 3):
    if case == "fftfreq":
        return torch.fft.fftfreq(ns[0], dtype=x.dtype) + x.sum()  # reported
    if case == "rfftfreq-spacing":
        return torch.fft.rfftfreq(4, d=ns[0].float()) + x.sum()  # reported
    if case == "randperm":
        return torch.randperm(ns[0]).float().sum() + x.sum()  # reported
    if case == "window":
        return torch.hann_window(ns[0]).sum() + torch.kaiser_window(x.shape[0]).sum()  # reported
    if case == "tril-indices":
        return torch.tril_indices(ns[0], ns[0]).float().sum() + x.sum()  # reported
    if case == "python-ints":
        n = x.shape[0]
        return torch.fft.fftfreq(n) + torch.randperm(n).float() + torch.hamming_window(n) + x
    if case == "built-from-numbers":
        built = torch.tensor(m)
        return torch.arange(built * 2).sum() + torch.zeros(torch.as_tensor(m, dtype=torch.long)).sum() + x
    if case == "item-of-a-built-list":
        pair = torch.tensor([m, m + 1])
        return torch.arange(pair[1]).sum() + x  # reported
    if case == "int-of-a-built-tensor":
        k = int(torch.tensor(m))  # reported
        return x * k
    return x
'''

CASES = ["fftfreq", "rfftfreq-spacing", "randperm", "window", "tril-indices", "python-ints", "built-from-numbers",
         "item-of-a-built-list", "int-of-a-built-tensor"]


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "size_functions.py", Settings(scope="module")).findings


@pytest.mark.parametrize("case", CASES)
def test_tensor_sizes_of_size_taking_functions(case, findings, tmp_path):
    mod = load_module(SOURCE, tmp_path, "size_functions")
    broke = logged_break_lines(mod.run, case, torch.randn(4), torch.tensor([4, 5]), path=mod.__file__)
    assert_case_breaks(SOURCE, case, findings, ("if case ==", "    return x\\n"), broke)
