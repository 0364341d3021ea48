"""A boolean buffer of a submodule is a mask where it is read (rtdl-num-embeddings 0.0.12's
PiecewiseLinearEncoding, realcode round 35):

    self.register_buffer('mask', None if all(...) else torch.row_stack([torch.cat([torch.ones(..., dtype=torch.bool), ...]) ...]))
    ...
    return x.flatten(-2) if self.impl.mask is None else x[:, self.impl.mask]     # GB0036

The buffer may be None: it counts as a mask only where a test around the read shows it is not
(the conditional expression's arm, `if self.impl.mask is not None:`); joined masks (`torch.cat`,
`torch.row_stack` of masks) are masks. Checked statically and run under Dynamo (its graph-break log).
"""

from __future__ import annotations

import pytest
import torch

from difftest import findings_by_line, load_module
from test_callers import logged_break_lines

SOURCE = '''\
import torch


class Impl(torch.nn.Module):
    def __init__(self, bins):
        super().__init__()
        self.register_buffer(
            "mask",
            None
            if all(len(x) == len(bins[0]) for x in bins)
            else torch.row_stack([torch.cat([torch.ones(len(x) - 1, dtype=torch.bool),
                                             torch.zeros(3 - len(x), dtype=torch.bool)]) for x in bins]),
        )


class Encoding(torch.nn.Module):
    def __init__(self, bins):
        super().__init__()
        self.impl = Impl(bins)

    def forward(self, x, case):
        if case == "arm":
            return x.flatten(-2) if self.impl.mask is None else x[:, self.impl.mask]  # arm
        if case == "guarded":
            if self.impl.mask is not None:
                return x[:, self.impl.mask]  # guarded
            return x
        return x[:, self.impl.mask].sum()  # unguarded


uneven = Encoding([[0, 1, 2], [0, 1]])
even = Encoding([[0, 1], [0, 1]])


def run(case, x):
    if case == "unguarded-none":
        return even(x.reshape(2, 2, 1), case)
    return uneven(x.reshape(1, 2, 2), case)
'''

LINES = {name: i for i, line in enumerate(SOURCE.splitlines(), 1)
         for name in ("arm", "guarded", "unguarded") if line.endswith(f"# {name}")}


@pytest.fixture(scope="module")
def by_line():
    return findings_by_line(SOURCE, "buffer_masks.py")


def test_a_submodule_mask_read_where_it_is_not_none(by_line):
    for name in ("arm", "guarded"):
        assert [f.code for f in by_line.get(LINES[name], [])] == ["GM402"], (name, by_line)


def test_a_read_no_test_shows_not_none_is_not_claimed(by_line):
    assert LINES["unguarded"] not in by_line, by_line


@pytest.mark.parametrize("case,line,breaks", [
    ("arm", "arm", True), ("guarded", "guarded", True), ("unguarded-none", "unguarded", False)])
def test_dynamo_agrees(case, line, breaks, tmp_path):
    mod = load_module(SOURCE, tmp_path, "buffer_masks")
    broke = logged_break_lines(mod.run, case, torch.randn(4), path=mod.__file__)
    assert (LINES[line] in broke) is breaks, broke
