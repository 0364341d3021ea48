"""Buffers registered under a formatted name and read back by the same one are tensors (realcode
round 21, e2cnn 0.2.3's InnerBatchNorm and GroupPooling):

    self.register_buffer('indices_{}'.format(s), torch.LongTensor([...]))    # __init__
    indices = getattr(self, f"indices_{s}")                                    # forward
    input.tensor[:, indices[0]:indices[1], :, :]                               # GB0124

Slicing with a tensor-valued bound reads it into Python (GM401) whatever is sliced: also a value
the walk does not know (`input.tensor`, an attribute of a wrapper object). What stays unreported:
a name formatted like no registered buffer (a submodule added with `add_module`, a Python list
kept with `setattr`), whose items are Python ints. Each case is checked statically and run under
Dynamo (its graph-break log): the reported lines are exactly the lines Dynamo breaks on.
"""

from __future__ import annotations

import pytest
import torch

from difftest import case_block, load_module
from graphmend.analysis import analyze_source
from test_callers import logged_break_lines

SOURCE = '''\
import torch


class Wrapped:
    def __init__(self, tensor):
        self.tensor = tensor


class Pick(torch.nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.sizes = list(sizes)
        for s in self.sizes:
            self.register_buffer('indices_{}'.format(s), torch.LongTensor([0, 2 * s]))
            self.register_buffer(f"mask_{s}", torch.arange(8) < 2 * s)
            self.add_module(f"lin_{s}", torch.nn.Linear(2, 2))
            setattr(self, f"bounds_{s}", [0, 2 * s])

    def forward(self, x, case: str):
        out = x.new_zeros(x.shape)
        for s in self.sizes:
            if case == "format-buffer":
                indices = getattr(self, "indices_{}".format(s))
                out = out + x[:, indices[0]:indices[1]].sum()  # reported
            if case == "fstring-buffer":
                indices = getattr(self, f"indices_{s}")
                out = out + x[:, indices[0]:indices[1]].sum()  # reported
            if case == "unknown-value":
                indices = getattr(self, f"indices_{s}")
                w = Wrapped(x)
                out = out + w.tensor[:, indices[0]:indices[1]].sum()  # reported
            if case == "list-attribute":
                bounds = getattr(self, f"bounds_{s}")
                out = out + x[:, bounds[0]:bounds[1]].sum()
            if case == "submodule":
                lin = getattr(self, f"lin_{s}")
                out = out + lin(x[:, :2]).sum()
        return out


model = Pick([2])


def run(x, case):
    return model(x, case) * 1


compiled = torch.compile(run)
'''

CASES = ["format-buffer", "fstring-buffer", "unknown-value", "list-attribute", "submodule"]


@pytest.fixture(scope="module")
def findings():
    return [(f.code, f.span.start.line) for f in analyze_source(SOURCE, "formatted_buffers.py").findings]


@pytest.mark.parametrize("case", CASES)
def test_formatted_buffer_names(case, findings, tmp_path):
    block, reported = case_block(SOURCE, case)
    assert sorted(line for _, line in findings if line in block) == reported, (case, findings)
    assert all(code == "GM401" for code, line in findings if line in block), findings
    mod = load_module(SOURCE, tmp_path, "formatted_buffers")
    broke = logged_break_lines(mod.run, torch.randn(2, 8), case, path=mod.__file__)
    assert sorted(n for n in broke if n in block) == reported, (case, broke)
