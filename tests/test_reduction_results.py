"""What a reduction over a dim gives, `(values, indices)`, holds tensors, and so does what
`torch.utils._foreach_utils` groups (realcode round 27):

    matched = dist.min(dim=1).values < 3.0           # torch-kf's association: a mask
    mean[matched]                                    # GB0036

    grouped = torch.utils._foreach_utils._group_tensors_by_device_and_dtype([params, grads])
    for (_, _), ((ps, gs), _) in grouped.items():
        for g in gs:
            ... g.mean().sqrt().item() ...           # optimi's StableAdamW: GB0124

Before, `.values` of a tensor was not known to be a tensor, and everything `torch.utils` returns
was taken for a static value. What stays unreported: `.shape` of such a result (static). Each case
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
import torch


def run(case, mean: torch.Tensor, dist: torch.Tensor):
    if case == "values-mask":
        matched = dist.min(dim=1).values < 3.0
        return mean[matched]  # reported
    if case == "indices-shape":
        n = dist.max(dim=1).indices.shape[0]
        if n > 2:
            return mean * 2
        return mean
    if case == "foreach-groups":
        grouped = torch.utils._foreach_utils._group_tensors_by_device_and_dtype([[mean], [dist]])
        out = []
        for (_, _), ((ps, gs), _) in grouped.items():
            for g in gs:
                out.append(1.0 / max(1, g.abs().mean().sqrt().item()))  # reported
        return mean * out[0]
'''

CASES = ["values-mask", "indices-shape", "foreach-groups"]


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "reduction_results.py", Settings(scope="module")).findings


@pytest.mark.parametrize("case", CASES)
def test_reduction_results_hold_tensors(case, findings, tmp_path):
    block, reported = case_span(SOURCE, case)
    assert sorted(f.span.start.line for f in findings if f.span.start.line in block) == reported, (case, findings)
    mod = load_module(SOURCE, tmp_path, "reduction_results")
    broke = logged_break_lines(mod.run, case, torch.randn(4, 3), torch.rand(4, 5) * 6, path=mod.__file__)
    assert sorted(n for n in broke if n in block) == reported, (case, broke)
