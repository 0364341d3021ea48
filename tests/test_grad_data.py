"""`p.grad.data` is a tensor whatever the walk knows of `p`: the gradient-norm idiom of training
loops (torch-ac 1.4's PPO, realcode round 36) reads each norm with `.item()` in a generator,

    grad_norm = sum(p.grad.data.norm(2).item() ** 2 for p in self.acmodel.parameters()) ** 0.5

and Dynamo breaks there (GB0124). Checked statically and under Dynamo (its graph-break log); an
attribute `data` of something else (`batch.data`) stays unknown."""

from __future__ import annotations

import pytest
import torch

from difftest import findings_by_line, load_module, marked_lines
from test_callers import logged_break_lines

SOURCE = '''\
import torch


class Batch:
    def __init__(self, data):
        self.data = data


def grad_norm(params):
    return sum(p.grad.data.norm(2).item() ** 2 for p in params) ** 0.5


def batch_size(batches):
    return sum(len(b.data) for b in batches)


def run(case, x):
    w = torch.nn.Parameter(x.clone())
    (w * w).sum().backward()
    if case == "grad-norm":
        return x * grad_norm([w])
    return x * batch_size([Batch([1, 2]), Batch([3])])
'''

LINES = marked_lines(SOURCE, ("p.grad.data.norm(2).item()", "len(b.data)"))


def test_the_gradient_norm_idiom_is_reported():
    by_line = findings_by_line(SOURCE, "grad_data.py")
    assert [f.code for f in by_line.get(LINES["p.grad.data.norm(2).item()"], [])] == ["GM401"], by_line
    assert not by_line.get(LINES["len(b.data)"]), by_line


@pytest.mark.parametrize("case,mark,breaks", [("grad-norm", "p.grad.data.norm(2).item()", True),
                                              ("batches", "len(b.data)", False)])
def test_dynamo_agrees(case, mark, breaks, tmp_path):
    mod = load_module(SOURCE, tmp_path, "grad_data")
    broke = logged_break_lines(mod.run, case, torch.randn(3), path=mod.__file__)
    assert (LINES[mark] in broke) is breaks, (case, broke)
