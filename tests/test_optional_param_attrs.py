"""An attribute every store of which stores a parameter annotated as a tensor, where the store is
under a test that proves it not None (`if ns_mesh is not None: self.ns_mesh = ns_mesh` in an
`update` method, `ns_mesh: torch.Tensor | None = None`; or after `if p is None: raise`), holds a
tensor: `int(self.ns_mesh[0])` reads a tensor's value (GB0124; torch-pme's MeshInterpolator,
realcode round 29). An unguarded store of a parameter whose default is None, or of a Union with a
Python number, says nothing. Checked statically and run under Dynamo (its graph-break log)."""

from __future__ import annotations

import pytest
import torch

from difftest import assert_span_breaks, function_span, load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
from typing import Optional, Union

import torch


class Mesh:
    def __init__(self, cell: torch.Tensor, ns_mesh: torch.Tensor, scale: Union[torch.Tensor, float] = 2.0,
                 bias: torch.Tensor = None):
        self.update(cell, ns_mesh)
        if scale is not None:
            self.scale = scale
        self.bias = bias

    def update(self, cell: Optional[torch.Tensor] = None, ns_mesh: torch.Tensor | None = None) -> None:
        if cell is None:
            raise ValueError("no cell")
        self.cell = cell
        if ns_mesh is not None and ns_mesh.dim() == 1:
            self.ns_mesh = ns_mesh

    def points(self, x):
        n = int(self.ns_mesh[0])  # reported
        return x[:, :n]

    def cells(self, x):
        if self.cell.sum() > 0:  # reported
            return x * 2
        return x

    def scaled(self, x):
        if self.scale > 1:
            return x * 3
        return x

    def biased(self, x):
        if self.bias:
            return x + 1
        return x


def run(case: str, x: torch.Tensor):
    mesh = Mesh(torch.ones(3), torch.tensor([2, 2, 2]))
    if case == "guarded-store":
        return mesh.points(x)
    if case == "store-after-raise":
        return mesh.cells(x)
    if case == "union-with-float":
        return mesh.scaled(x)
    if case == "none-default":
        return mesh.biased(x)
    return x
'''

CASES = ["guarded-store", "store-after-raise", "union-with-float", "none-default"]
METHOD = {"guarded-store": "points", "store-after-raise": "cells", "union-with-float": "scaled",
          "none-default": "biased"}


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "optional_param_attrs.py", Settings(scope="module")).findings


@pytest.mark.parametrize("case", CASES)
def test_attributes_stored_from_parameters(case, findings, tmp_path):
    mod = load_module(SOURCE, tmp_path, "optional_param_attrs")
    broke = logged_break_lines(mod.run, case, torch.randn(2, 3), path=mod.__file__)
    assert_span_breaks(*function_span(SOURCE, METHOD[case]), findings, broke)
