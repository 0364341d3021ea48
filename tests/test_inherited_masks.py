"""A mask attribute a base class of the same file stores (`self.m = torch.tensor(..., dtype=
torch.bool)` in its `__init__`) is a mask in a subclass's methods too: `q[..., self.m]` reads a
data-dependent number of entries (GB0036; pytorch-kinematics' PseudoInverseIK reading
InverseKinematics' `_revolute_mask`, realcode round 29). A subclass that stores something else
there makes it no mask. Checked statically and run under Dynamo (its graph-break log)."""

from __future__ import annotations

import torch

from difftest import load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import math
import torch


class IK:
    def __init__(self, kinds):
        self.mask = torch.tensor([k == "revolute" for k in kinds], dtype=torch.bool)


class SubIK(IK):
    def wrap(self, q):
        n = torch.round(q / (2 * math.pi))
        out = q.clone()
        out[..., self.mask] = q[..., self.mask] + n[..., self.mask] * 2 * math.pi  # reported
        return out


class Other(IK):
    def __init__(self, kinds):
        super().__init__(kinds)
        self.mask = torch.arange(len(kinds)) % 2

    def wrap(self, q):
        return q[..., self.mask] * 2
'''


def test_a_base_class_mask_read_in_a_subclass(tmp_path):
    found = analyze_source(SOURCE, "inherited_masks.py", Settings(scope="module")).findings
    lines = SOURCE.splitlines()
    reported = [i for i, s in enumerate(lines, 1) if s.endswith("# reported")]
    assert sorted({f.span.start.line for f in found if f.code == "GM402"}) == reported, found
    mod = load_module(SOURCE, tmp_path, "inherited_masks")
    kinds = ["revolute", "prismatic", "revolute"]
    q = torch.randn(2, 3) * 7
    assert reported[0] in logged_break_lines(mod.SubIK(kinds).wrap, q, path=mod.__file__)
    other = logged_break_lines(mod.Other(kinds).wrap, q, path=mod.__file__)
    assert not [n for n in other if n > reported[0]]  # an integer index traces
