"""Three forms realcode round 36 showed, each checked statically and run under Dynamo (its
graph-break log):

- A function of `math` given a tensor reads it into a Python float (GB0033): ranger21 0.1's
  `variance_normalized = math.sqrt(variance_ma_sum / param_size)`, the sum a float that a
  tensor's `.sum()` was added to in a loop. `math.prod` of tensors multiplies them (a tensor, no
  break), and a function of math given Python numbers (a shape) is no break.
- A name an `if` binds to a tensor on one side and to a Python number on the other is either after
  it: ranger21's `torch.pow(...)` under `if self.use_madgrad:`, `math.sqrt(...)` else, then
  `if math.isnan(variance_normalized):`, which breaks only when the tensor side ran (reported
  "breaks only when `variance_normalized` is a tensor").
- A numpy array indexed by a comparison of arrays (torch-ac 1.4's `indexes = indexes[(indexes +
  self.recurrence) % self.num_frames_per_proc != 0]`): Dynamo traces numpy as tensors, and the
  mask's nonzero has a data-dependent shape (GB0036).
"""

from __future__ import annotations

import pytest
import torch

from difftest import findings_by_line, load_module, marked_lines
from test_callers import logged_break_lines

SOURCE = '''\
import math

import numpy
import torch


def accumulated(params):
    param_size = 0
    total = 0.0
    for p in params:
        param_size += p.numel()
        total += (p * p).sum()
    v = math.sqrt(total / param_size)
    return [p * v for p in params]


def arms(params, use_madgrad):
    total = params[0].square().sum() + params[1].square().sum()
    n = params[0].numel() + params[1].numel()
    if use_madgrad:
        v = torch.pow(total / n, 1 / 3)
    else:
        v = math.sqrt(n)
    if math.isnan(v):
        raise RuntimeError("nan")
    return [p * v for p in params]


def of_numbers(params):
    scale = math.sqrt(params[0].shape[0]) * math.log(2)
    return [p * scale for p in params]


def product(params):
    return math.prod([params[0].sum(), params[1].sum()]) * params[0]


def batches(x, num_frames=8, recurrence=2):
    indexes = numpy.arange(0, num_frames, recurrence)
    indexes = indexes[(indexes + recurrence) % num_frames != 0]
    return x * 2, indexes


def formatted(x, n=3):
    label = "%d rows" % n
    return x * 2, label


def run(case, x):
    params = [x[:2], x[2:]]
    if case == "accumulated":
        return accumulated(params)
    if case == "madgrad":
        return arms(params, True)
    if case == "adam":
        return arms(params, False)
    if case == "numbers":
        return of_numbers(params)
    if case == "product":
        return product(params)
    if case == "numpy-mask":
        return batches(x)
    return formatted(x)
'''

MARKS = ("v = math.sqrt(total / param_size)", "if math.isnan(v):", "scale = math.sqrt", "math.prod(",
         "indexes = indexes[", '"%d rows" % n')
LINES = marked_lines(SOURCE, MARKS)


@pytest.fixture(scope="module")
def by_line():
    return findings_by_line(SOURCE, "forms.py")


def test_a_math_function_of_a_tensor(by_line):
    [f] = by_line[LINES["v = math.sqrt(total / param_size)"]]
    assert f.code == "GM401" and f.condition is None and "`math.sqrt()` of a tensor" in f.message, f


def test_a_name_a_tensor_on_one_side_and_a_number_on_the_other(by_line):
    [f] = by_line[LINES["if math.isnan(v):"]]
    assert f.code == "GM401" and f.condition is not None, f
    assert f.condition.text == "`v` is a tensor" and f.condition.kinds == ("value",)


def test_a_numpy_array_indexed_by_a_comparison_of_arrays(by_line):
    [f] = by_line[LINES["indexes = indexes["]]
    assert f.code == "GM402" and "numpy array" in f.message, f


@pytest.mark.parametrize("mark", ["scale = math.sqrt", "math.prod(", '"%d rows" % n'])
def test_not_reported(mark, by_line):
    assert not by_line.get(LINES[mark]), by_line


@pytest.mark.parametrize("case,mark,breaks", [
    ("accumulated", "v = math.sqrt(total / param_size)", True), ("madgrad", "if math.isnan(v):", True),
    ("adam", "if math.isnan(v):", False), ("numbers", "scale = math.sqrt", False),
    ("product", "math.prod(", False), ("numpy-mask", "indexes = indexes[", True),
    ("formatted", '"%d rows" % n', False)])
def test_dynamo_agrees(case, mark, breaks, tmp_path):
    mod = load_module(SOURCE, tmp_path, "math_numpy_forms")
    broke = logged_break_lines(mod.run, case, torch.randn(5), path=mod.__file__)
    assert (LINES[mark] in broke) is breaks, (case, broke)
