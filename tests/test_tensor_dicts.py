"""A dict a function fills with tensors only (`d = {}`, then `d[k] = <tensor>` and nothing else)
holds tensors: its `.values()` and the values of its `.items()` are tensors, in the function, in
a function it returns it to, and in one a caller passes it to (dasp-pytorch 0.0.1's
`Processor.process_normalized`, realcode round 34, a miss):

    param_dict = self.extract_param_dict(param_tensor)      # {} filled with param_tensor[:, i]
    denorm_param_dict = self.denormalize_param_dict(param_dict)
    ...
    for param_name, param_tensor in param_dict.items():      # in denormalize_param_dict
        if param_tensor.min() < 0 or param_tensor.max() > 1:  # GB0170
            raise ValueError(...)

A dict that also holds something else (a Python number) is not claimed. Checked statically and
run under Dynamo (its graph-break log)."""

from __future__ import annotations

import pytest
import torch

from difftest import findings_by_line, load_module, marked_lines
from test_callers import logged_break_lines

SOURCE = '''\
import torch


class Processor:
    def __init__(self):
        self.param_ranges = {"a": (0.0, 2.0), "b": (-1.0, 1.0)}

    def process_normalized(self, x: torch.Tensor, param_tensor: torch.Tensor):
        param_dict = self.extract_param_dict(param_tensor)
        denorm = self.denormalize_param_dict(param_dict)
        return x * denorm["a"] + denorm["b"]

    def extract_param_dict(self, param_tensor: torch.Tensor):
        param_dict = {}
        for param_idx, param_name in enumerate(self.param_ranges.keys()):
            param_dict[param_name] = param_tensor[:, param_idx]
        return param_dict

    def denormalize_param_dict(self, param_dict: dict):
        denorm_param_dict = {}
        for param_name, param_tensor in param_dict.items():
            if param_tensor.min() < 0 or param_tensor.max() > 1:
                raise ValueError(f"Parameter {param_name} of is out of range.")
            lo, hi = self.param_ranges[param_name]
            denorm_param_dict[param_name] = param_tensor * (hi - lo) + lo
        return denorm_param_dict

    def local_values(self, x: torch.Tensor):
        out = dict()
        out["a"] = x * 2
        out["b"] = x + 1
        for v in out.values():
            if v.sum() > 0:
                x = x + 1
        return x

    def mixed(self, x: torch.Tensor, n: int):
        out = {}
        out["a"] = x * 2
        out["n"] = n
        total = 0
        for k, v in out.items():
            total = total + v
        return x + total


proc = Processor()


def run(case, x):
    if case == "passed":
        return proc.process_normalized(x, torch.rand(3, 2))
    if case == "values":
        return proc.local_values(x)
    return proc.mixed(x, 3)
'''

LINES = marked_lines(SOURCE, ("param_tensor.min() < 0", "v.sum() > 0", "total = total + v"))


@pytest.fixture(scope="module")
def by_line():
    return findings_by_line(SOURCE, "tensor_dicts.py")


def test_values_of_a_dict_of_tensors_are_tensors(by_line):
    got = by_line.get(LINES["v.sum() > 0"], [])
    assert [f.code for f in got] == ["GM201"], by_line


def test_a_dict_of_tensors_a_caller_passes(by_line):
    got = by_line.get(LINES["param_tensor.min() < 0"], [])
    assert [f.code for f in got] == ["GM301"], by_line
    assert "`param_dict` holds tensors only here: `process_normalized()` passes `param_dict` (line 10)" in got[0].note
    assert got[0].fix_title is None  # a caller's fact: no mend of the callee


def test_a_dict_holding_a_number_too_is_not_claimed(by_line):
    start = SOURCE.splitlines().index("    def mixed(self, x: torch.Tensor, n: int):") + 1
    assert not [ln for ln in by_line if start <= ln <= start + 8], by_line


@pytest.mark.parametrize("case,line", [("passed", "param_tensor.min() < 0"), ("values", "v.sum() > 0")])
def test_dynamo_agrees(case, line, tmp_path):
    mod = load_module(SOURCE, tmp_path, "tensor_dicts")
    broke = logged_break_lines(mod.run, case, torch.randn(3), path=mod.__file__)
    assert LINES[line] in broke, broke
