"""A boolean mask a function or method of the file returns in a tuple, unpacked by its caller
(realcode round 27, torchdr 0.5's UMAP):

    source, target, edge_mask = self._flatten_padded_edges(self.NN_indices_)   # returns (..., mask)
    edge_affinity = self.affinity_in_[edge_mask]                                # GB0036

Before, only a local bound to a boolean expression in the same function was a mask. What stays
unreported: a position where some return gives something else (an index tensor), a name bound
again after the unpacking, an index tensor returned in the same place. (The caller's kinds are not
carried into the callee: a mask computed from an unannotated parameter the body gives no tensor
evidence for is not known to be a tensor there, as before.) Each case is checked
statically and run under Dynamo (its graph-break log).
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


def split_positive(x: torch.Tensor):
    keep = x > 0
    return x * 2, keep


class Edges(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.linspace(-1.0, 1.0, 6)

    def _flatten(self, idx):
        mask = idx >= 0
        counts = mask.sum()
        return counts, idx.clamp(min=0), mask

    @staticmethod
    def _nonzero(x: torch.Tensor):
        return x.sum(), x != 0

    def _order(self, x):
        return x, torch.argsort(x)

    def _either(self, x, flag: bool):
        if flag:
            return x, x > 0
        return x, torch.argsort(x)

    def run(self, case: str, x: torch.Tensor):
        if case == "method":
            counts, target, edge_mask = self._flatten(x)
            return self.weight[edge_mask] * 2  # reported
        if case == "function":
            doubled, keep = split_positive(x)
            return doubled[keep] + 1  # reported
        if case == "staticmethod":
            total, nz = Edges._nonzero(x)
            return x[nz] - total  # reported
        if case == "self-staticmethod":
            count, nonzero = self._nonzero(x)
            return x[nonzero] * count  # reported
        if case == "index":
            y, order = self._order(x)
            return y[order] * 3
        if case == "either":
            y, sel = self._either(x, False)
            return y[sel] - 1
        if case == "rebound":
            y, sel = self._either(x, True)
            sel = torch.argsort(y)
            return y[sel] + 2
        return x
'''

CASES = ["method", "function", "staticmethod", "self-staticmethod", "index", "either", "rebound"]


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "returned_masks.py", Settings(scope="module")).findings


@pytest.mark.parametrize("case", CASES)
def test_a_mask_returned_in_a_tuple(case, findings, tmp_path):
    block, reported = case_span(SOURCE, case, ("if case ==", "return x\n"))
    assert sorted(f.span.start.line for f in findings if f.span.start.line in block) == reported, (case, findings)
    mod = load_module(SOURCE, tmp_path, "returned_masks")
    x = torch.tensor([-1.0, 2.0, 0.0, 3.0, -4.0, 5.0])
    broke = logged_break_lines(mod.Edges().run, case, x, path=mod.__file__)
    assert sorted(n for n in broke if n in block) == reported, (case, broke)
