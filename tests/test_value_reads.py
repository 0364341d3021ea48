"""Where a tensor's value is read into Python, found in realcode round 31 (code nobody tuned
GraphMend on) and measured there against Dynamo:

* a tensor method given a tensor as a size (`x.reshape(-1, n)`, `x.view(n, -1)`, `x.new_zeros(n)`,
  `x.narrow(0, 0, n)`, `x.repeat(n, 1)`) or a numpy value (pythae's `x.reshape(-1,
  np.prod(self.input_dim))`, `torch.zeros(np.prod(dims))`: Dynamo traces numpy as tensors), while a
  torch function of Python numbers is a value Dynamo computes (longformer's `torch.div(seq_len,
  window_overlap, rounding_mode="trunc")` as a size) and several elements summed are not;
* `%`-formatting of a tensor (torchsparsegradutils' `"Initial residual = %8.2e" % residNorm0`),
  which an f-string is not;
* `.type(torch.bool)` casts (a tensor, pythae's rejection sampler), and builtin `sum` of a list of
  torch results is a tensor (pyhessian's `group_product(...).cpu().item()`).

Each case is checked statically and run under Dynamo (its graph-break log)."""

from __future__ import annotations

import pytest
import torch

from difftest import assert_case_breaks, load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import numpy as np
import torch


def group_product(xs, ys):
    return sum([torch.sum(x * y) for (x, y) in zip(xs, ys)])


def run(case: str, x: torch.Tensor):
    if case == "reshape-data":
        n = (x > 0).sum()
        return x.reshape(-1, n)  # reported
    if case == "view-data":
        n = (x > 0).sum() // 3
        return x.view(n, -1)  # reported
    if case == "new-zeros-data":
        n = (x > 0).sum()
        return x.new_zeros((n, 2))  # reported
    if case == "narrow-data":
        n = (x > 0).sum() // 3
        return x.narrow(0, 0, n)  # reported
    if case == "reshape-numpy":
        return x.reshape(-1, np.prod((2, 3)))  # reported
    if case == "zeros-numpy":
        return torch.zeros(np.prod((2, 3))) + x.sum()  # reported
    if case == "reshape-constant":
        return x.view(2, torch.div(x.size(1), 3, rounding_mode="trunc"), 3)
    if case == "reshape-constant-tensor":
        k = torch.sqrt(torch.tensor(9.0)).long()  # a name bound once: what Dynamo computes is known
        return x.reshape(-1, k)
    if case == "reshape-summed":
        n = torch.arange(4).sum()
        return x.reshape(n - 4, -1)  # reported
    if case == "percent":
        text = "residual %8.2e" % x.sum()  # reported
        return x * 2, text
    if case == "percent-tuple":
        text = "%s of %d" % (x.max(), 3)  # reported
        return x * 2, text
    if case == "percent-shape":
        text = "%s" % (x.shape,)
        return x * 2, text
    if case == "type-cast":
        mask = torch.ones_like(x).type(torch.bool)
        if mask.sum() > 0:  # reported
            return x + 1
        return x
    if case == "summed-products":
        return x * group_product([x, x], [x, x]).cpu().item()  # reported
    return x
'''

CASES = ["reshape-data", "view-data", "new-zeros-data", "narrow-data", "reshape-numpy", "zeros-numpy",
         "reshape-constant", "reshape-constant-tensor", "reshape-summed", "percent", "percent-tuple",
         "percent-shape", "type-cast", "summed-products"]


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "value_reads.py", Settings(scope="module")).findings


@pytest.mark.parametrize("case", CASES)
def test_value_reads(case, findings, tmp_path):
    mod = load_module(SOURCE, tmp_path, "value_reads_" + case.replace("-", "_"))
    broke = logged_break_lines(mod.run, case, torch.ones(2, 3), path=mod.__file__)
    assert_case_breaks(SOURCE, case, findings, ("if case ==", "    return x\\n"), broke)
