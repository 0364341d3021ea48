"""A field a base class in another module declares a tensor (`class QuantTensorBase(NamedTuple):
signed_t: Tensor`) is a tensor in a subclass' methods: brevitas 0.13's `IntQuantTensor`, whose
property `signed` returns `self.signed_t.item()` (GB0124, realcode round 37). Found through the
package's re-export too (`from pkg import QuantTensorBase`); a field declared as something else
(`bit_width: int`) is not a tensor. Checked statically with the workspace, and under Dynamo."""

from __future__ import annotations

import importlib

import torch

from graphmend.analysis import analyze_source
from graphmend.analysis.workspace import Workspace
from graphmend.config import Settings
from test_callers import logged_break_lines

BASE = '''\
from typing import NamedTuple

import torch


class QuantTensorBase(NamedTuple):
    value: torch.Tensor
    signed_t: torch.Tensor
    bit_width: int
'''

USER = '''\
from gm_r37pkg import QuantTensorBase


class QT(QuantTensorBase):
    @property
    def signed(self):
        return self.signed_t.item()

    @property
    def bits(self):
        return int(self.bit_width)


def run(x, signed):
    q = QT(x, signed, 8)
    return q.value * q.bits if q.signed else q.value
'''


def test_a_tensor_field_of_a_base_in_another_module(tmp_path, monkeypatch):
    pkg = tmp_path / "gm_r37pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from gm_r37pkg.base import QuantTensorBase\n")
    (pkg / "base.py").write_text(BASE)
    (pkg / "qt.py").write_text(USER)
    ws = Workspace(roots=[str(tmp_path)])
    got = [(f.code, f.span.start.line) for f in
           analyze_source(USER, str(pkg / "qt.py"), Settings(scope="module"), workspace=ws).findings]
    assert got == [("GM401", 7)], got
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("gm_r37pkg.qt")
    broke = logged_break_lines(mod.run, torch.randn(3), torch.tensor(True), path=mod.__file__)
    assert 7 in broke and 11 not in broke, broke
