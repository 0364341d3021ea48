"""Lists of lists of tensors indexed by a tensor: torch-interpol's `pull` unpacks `coords`, the
`List[List[Tensor]]` that `get_weights` returns in an annotated tuple, then gathers
`[c[n] for c, n in zip(coords, nodes)]` with `n` an element of a row of `torch.cartesian_prod`:
a Python list indexed by a 0-dim tensor reads it with `Tensor.__index__` (GB0124, realcode round
28). What a `List[List[Tensor]]` holds is a list of tensors: its items (`coords[0]`), what a loop
or a comprehension takes from it, directly or through `zip`. A Python int index, or an index into
a tensor, does not break. Checked statically and run under Dynamo (its graph-break log)."""

from __future__ import annotations

import pytest
import torch

from difftest import assert_case_breaks, load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
from typing import List, Tuple

import torch
from torch import Tensor


def get_weights(grid: Tensor, n: int) -> Tuple[List[List[Tensor]], List[List[Tensor]]]:
    weights: List[List[Tensor]] = []
    coords: List[List[Tensor]] = []
    for d in range(grid.shape[-1]):
        g = grid[..., d]
        weights.append([g * k for k in range(n)])
        coords.append([g.floor().long() + k for k in range(n)])
    return weights, coords


def run(case: str, grid: Tensor, nodes: Tensor):
    weights, coords = get_weights(grid, 2)
    if case == "zip-comprehension":
        idx = [c[n] for c, n in zip(coords, nodes)]  # reported
        return idx[0] + idx[1]
    if case == "loop":
        out = grid.sum()
        for c in coords:
            out = out + c[nodes[0]]  # reported
        return out
    if case == "item":
        return coords[0][nodes[1]] * 2  # reported
    if case == "outer":
        return coords[nodes[0]][0] * 3  # reported
    if case == "annotated-local":
        rows: List[List[Tensor]] = [[grid[0], grid[1]], [grid[1], grid[0]]]
        return rows[1][nodes[0]] + 1  # reported
    if case == "int-index":
        return [c[1] for c, n in zip(coords, nodes)][0] * 4
    if case == "tensor-rows":
        stacked = torch.stack([torch.stack(c) for c in coords])
        return stacked[0][nodes] * 5
    return grid
'''

CASES = ["zip-comprehension", "loop", "item", "outer", "annotated-local", "int-index", "tensor-rows"]


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "nested_lists.py", Settings(scope="module")).findings


@pytest.mark.parametrize("case", CASES)
def test_nested_lists(case, findings, tmp_path):
    mod = load_module(SOURCE, tmp_path, "nested_lists_" + case.replace("-", "_"))
    grid = torch.tensor([[0.5, 1.5], [1.2, 0.3], [2.5, 0.1]])
    broke = logged_break_lines(mod.run, case, grid, torch.tensor([1, 0]), path=mod.__file__)
    assert_case_breaks(SOURCE, case, findings, ("if case ==", "    return grid\\n"), broke)
