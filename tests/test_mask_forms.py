"""Boolean masks in the forms realcode round 21 showed (GM402, GB0036: the result's shape depends on
how many entries the mask keeps):

- reshaped or combined inside the brackets: torchani 2.9's `pairs[:, mask.view(-1)]`
  (neighbors.py:1060), `x[~m]`, `x[m1 & m2]`;
- built with dtype torch.bool: `torch.ones(b, t, dtype=torch.bool)`, `m.to(torch.bool)`;
- bound on two paths, to a mask on one and to `&` of a parameter's slices on the other:
  torch-rechub 0.9's DIEN auxiliary loss (dien.py:121), `valid = mask[:, :-1] & mask[:, 1:]` if a
  mask is given, else `torch.ones(..., dtype=torch.bool)`;
- the target of an augmented assignment, read before it is stored (round 22, roma 1.8's
  `q1[cos_omega < 0, :] *= -1`);
- chosen by a conditional expression whose arms are masks, or a tensor of a list of Python bools
  (round 23, torchsurv 0.2's concordance index and Cox losses).

What stays unreported: an integer index built the same ways (`idx.view(-1)`, `a & b` of integer
tensors, `torch.ones(..., dtype=torch.long)`), which gathers (a static shape), and an assignment
through a mask (an index_put, which traces). Each case is checked statically and run under Dynamo
(its graph-break log): the reported lines are exactly the lines Dynamo breaks on.
"""

from __future__ import annotations

import pytest
import torch

from difftest import load_module
from graphmend.analysis import analyze_source
from test_callers import logged_break_lines

HEAD = """\
import torch


def f(x: torch.Tensor, sizes: torch.Tensor, mask, ints: torch.Tensor):
"""
HEAD_LINES = HEAD.count("\n")

# name -> (body, lines of the body GraphMend reports and Dynamo breaks on)
CASES = {
    "reshaped-in-the-brackets": (
        "m = torch.arange(4) < sizes.view(-1, 1)\n"
        "pairs = torch.arange(4).repeat(1, sizes.shape[0])\n"
        "return pairs[:, m.view(-1)]", [3]),
    "inverted-in-the-brackets": (
        "m = x > 0\n"
        "return x[~m]", [2]),
    "combined-in-the-brackets": (
        "m = x > 0\n"
        "return x[m & (x < 5)]", [2]),
    "bool-builder": (
        "valid = torch.ones(x.shape[0], x.shape[1], dtype=torch.bool)\n"
        "return x[valid]", [2]),
    "converted-to-bool": (
        "valid = (x * 0 + 1).to(torch.bool)\n"
        "return x[valid]", [2]),
    "two-paths": (
        "if mask is not None:\n"
        "    valid = mask[:, :-1] & mask[:, 1:]\n"
        "else:\n"
        "    valid = torch.ones(x.shape[0], x.shape[1] - 1, dtype=torch.bool)\n"
        "h = x[:, :-1]\n"
        "return h[valid]", [6]),
    # integer indices built alike: a gather, whose shape is static
    "integer-reshaped": (
        "idx = ints.view(-1)\n"
        "return x[:, idx.view(-1)]", []),
    "integer-bitwise": (
        "return x[:, ints & ints]", []),
    "integer-builder": (
        "idx = torch.ones(2, dtype=torch.long)\n"
        "return x[:, idx]", []),
    # bound twice, never to a certain mask: its dtype is not known
    "two-paths-no-mask": (
        "if mask is not None:\n"
        "    valid = ints & ints\n"
        "else:\n"
        "    valid = ints | ints\n"
        "return x[:, valid]", []),
    # an augmented assignment reads its target first (roma 1.8's slerp, realcode round 22:
    # `q1[cos_omega < 0, :] *= -1`)
    "augmented-through-a-mask": (
        "y = x.clone()\n"
        "y[x.sum(dim=1) > 0, :] *= -1\n"
        "return y", [2]),
    # round 23, torchsurv 0.2.0: a mask chosen by a conditional expression (cindex.py:855), and a
    # tensor of a list of Python bools bound beside a comparison (cox.py:132)
    "conditional-expression": (
        "valid = torch.ones_like(x).bool() if mask is None else x > 0\n"
        "return x[valid]", [2]),
    "list-of-bools": (
        "if x.shape[0] > 2:\n"
        "    keep = torch.tensor([len(r) > 3 for r in x])\n"
        "else:\n"
        "    keep = sizes > 0\n"
        "return x[keep]", [5]),
    "list-of-ints": (
        "keep = torch.tensor([len(r) - 4 for r in x])\n"
        "return x[keep]", []),
    # an assignment through a mask is an index_put, which traces
    "store-through-a-mask": (
        "y = x.clone()\n"
        "y[(x > 0).view(x.shape)] = 0\n"
        "return y", []),
}


def _args():
    x = torch.arange(12.0).reshape(3, 4) - 4
    return x, torch.tensor([0, 1, 3]), torch.tensor([[1, 0, 1, 1], [0, 1, 1, 0], [1, 1, 1, 1]]) > 0, \
        torch.tensor([0, 1, 3])


@pytest.mark.parametrize("body,expected", CASES.values(), ids=CASES.keys())
def test_mask_forms(body, expected, tmp_path):
    import textwrap

    text = HEAD + textwrap.indent(body + "\n", "    ") + "\n\ncompiled = torch.compile(f)\n"
    fa = analyze_source(text, "case.py")
    assert sorted((fd.code, fd.span.start.line - HEAD_LINES) for fd in fa.findings) == \
        [("GM402", n) for n in expected], text
    mod = load_module(text, tmp_path, "mask_forms")
    broke = logged_break_lines(mod.f, *_args(), path=mod.__file__)
    assert sorted(n - HEAD_LINES for n in broke) == expected, text


DOCUMENTED = '''\
import torch


def efron(log_hz: torch.Tensor, event: torch.Tensor, idx: torch.Tensor, shifted: torch.Tensor):
    """Cox partial likelihood.

    Args:
        log_hz (torch.Tensor, float): log hazards.
        event (torch.Tensor, bool):
            whether the event occurred (True) or was censored (False).
        idx (torch.Tensor, int): positions.
        shifted (torch.Tensor, bool): a mask the body replaces.
    """
    shifted = idx
    return log_hz[event].sum() + log_hz[idx].sum() + log_hz[shifted].sum()
'''


def test_a_parameter_documented_as_a_boolean_tensor_is_a_mask(tmp_path):
    """torchsurv 0.2's `event_sorted (torch.Tensor, bool)`, then `time_to_k[event_sorted]`
    (cox.py:95, realcode round 23). Not an integer index documented so, and not a documented
    mask the body rebinds."""
    from graphmend.config import Settings

    fa = analyze_source(DOCUMENTED, "documented.py", Settings(scope="module"))
    line = len(DOCUMENTED.splitlines())
    assert [(f.code, f.span.start.line, f.span.start.col) for f in fa.findings] == [("GM402", line, 11)]
    mod = load_module(DOCUMENTED, tmp_path, "documented_mask")
    x = torch.arange(4.0)
    broke = logged_break_lines(mod.efron, x, x > 1, torch.tensor([0, 2]), x > 0, path=mod.__file__)
    assert broke == {line}
