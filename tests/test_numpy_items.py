"""NumPy in compiled code is traced as tensors (torch._numpy), so one value of an array used as an
index, and the truth of an array numpy makes, are reads of a tensor's value (realcode round 28,
tntorch 1.1.2: `for d in np.arange(t.dim())` then `t.shape[d]`, GB0033). What stays unreported: a
whole array as an advanced index (pytorch-wavelets' `x[:, :, i, j]` with `np.outer` grids), an
assert on an array with a constant message (Dynamo traces it), numpy's shape functions. Each case
is checked statically and run under Dynamo (its graph-break log).
"""

from __future__ import annotations

import pytest
import torch

from difftest import case_span, load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import numpy as np
import torch


def run(case: str, x: torch.Tensor):
    if case == "loop-item":
        out = x
        for d in np.arange(x.dim()):
            out = out * x.shape[d]  # reported
        return out
    if case == "comprehension-item":
        sizes = [x.shape[d] for d in np.arange(x.dim())]  # reported
        return x * len(sizes)
    if case == "reduction":
        return x[0, np.argmax([3, 1, 2])] + 1  # reported
    if case == "grid":
        i = np.outer(np.arange(2), np.ones(3, dtype=np.int64))
        j = np.outer(np.ones(2, dtype=np.int64), np.arange(3))
        return x[i, j] * 2
    if case == "any-list":
        if np.any([s > 2 for s in x.shape]):  # reported
            return x + 1
        return x
    if case == "all-array":
        if np.all(np.array(x.shape) > 0):  # reported
            return x + 2
        return x
    if case == "assert":
        assert np.all(np.array(x.shape) > 0), "empty"
        return x + 3
    if case == "shape":
        if np.shape(np.zeros(x.shape))[0] == 2:
            return x + 4
        return x
    return x
'''

CASES = ["loop-item", "comprehension-item", "reduction", "grid", "any-list", "all-array", "assert", "shape"]


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "numpy_items.py", Settings(scope="module")).findings


@pytest.mark.parametrize("case", CASES)
def test_numpy_values_in_compiled_code(case, findings, tmp_path):
    block, reported = case_span(SOURCE, case, ("if case ==", "    return x\\n"))
    assert sorted({f.span.start.line for f in findings if f.span.start.line in block}) == reported, (case, findings)
    mod = load_module(SOURCE, tmp_path, "numpy_items")
    broke = logged_break_lines(mod.run, case, torch.randn(2, 4), path=mod.__file__)
    assert sorted(n for n in broke if n in block) == reported, (case, broke)


OPTIONAL = '''\
import numpy as np
import torch


def total(x: torch.Tensor, dim=None):
    if dim is None:
        dim = np.arange(x.dim())
    if not hasattr(dim, "__len__"):
        dim = [dim]
    return [x.shape[d] * x.sum() for d in dim]  # reported: breaks only when `dim is None`
'''


@pytest.mark.parametrize("dim", [None, 1, [0, 1]])
def test_an_array_on_one_side_of_a_test_names_it(dim, tmp_path):
    """tntorch's `sum(t, dim=None)`: `dim` is an array only when it was None, so the finding names
    that condition (a false alarm in `tn.sum(t, dim=1)` before, realcode round 28), and Dynamo
    breaks exactly when it holds."""
    (f,) = analyze_source(OPTIONAL, "optional_dim.py", Settings(scope="module")).findings
    assert f.code == "GM401" and f.condition is not None and f.condition.text == "`dim is None`", f
    mod = load_module(OPTIONAL, tmp_path, "optional_dim")
    broke = f.span.start.line in logged_break_lines(mod.total, torch.randn(2, 3), dim, path=mod.__file__)
    assert broke == (dim is None), (dim, broke)
