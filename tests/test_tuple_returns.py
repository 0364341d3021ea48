"""The items of a tuple a function of the same file returns, item by item: where every `return`
gives a tensor at a position, the name unpacked from it is a tensor (and iterating it gives
tensors), whatever the call as a whole is to the walk. Realcode round 20, torch-struct 0.5's
DepTree.logpartition:

    arc_scores_in, batch, N, lengths = self._check_potentials(arc_scores_in, lengths)
    ...
    v = torch.stack([final[:, i, l] for i, l in enumerate(lengths)], dim=1)

and, found with it, monai's conjugate gradient (`x, p, r, rsold = self.update(...)`, then
`if rsold < 1e-10: break`). A position where a return gives a list (diffusers' Lumina2 rope
embedder's `seq_lengths`) or a Python number stays what it was.

Each case is checked statically and run under Dynamo (its graph-break log): the reported lines are
exactly the lines Dynamo breaks on.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from difftest import load_module
from graphmend.analysis import analyze_source
from test_callers import logged_break_lines

SOURCE = '''\
import torch


def split_state(x, lengths=None):
    if lengths is None:
        lengths = torch.full((x.shape[0],), x.shape[1] - 1)
    return x * 2, x.shape[0], lengths


def list_lengths(x):
    return x + 1, [x.shape[1] - 1] * x.shape[0]


class Model(torch.nn.Module):
    def check(self, x, lengths=None):
        if lengths is None:
            lengths = torch.full((x.shape[0],), x.shape[1] - 1)
        return x + 1, x.shape[0], lengths

    def step(self, x):
        r = x - 1
        return x * 0.5, r, torch.sum(r * r)

    def forward(self, x, lengths, case: str):
        if case == "method-items":
            z, b, lengths = self.check(x, lengths)
            return torch.stack([z[i, n] for i, n in enumerate(lengths)])  # reported
        if case == "function-items":
            z, b, lengths = split_state(x, lengths)
            out = torch.zeros(b)
            for i, n in enumerate(lengths):
                out[i] = z[i, n]  # reported
            return out
        if case == "branch-on-an-item":
            for _ in range(3):
                x, r, rs = self.step(x)
                if rs < 1e-10:  # reported
                    break
            return x
        if case == "list-items":
            z, lengths = list_lengths(x)
            return torch.stack([z[i, n] for i, n in enumerate(lengths)])
        if case == "number-item":
            z, b, lengths = self.check(x, lengths)
            if b > 1:
                z = z * 2
            return z
        raise ValueError(case)


model = Model()


def run(x, lengths, case):
    return model(x, lengths, case) * 1


compiled = torch.compile(run)
'''

CASES = ["method-items", "function-items", "branch-on-an-item", "list-items", "number-item"]


def _case_lines(case: str) -> tuple[range, list[int]]:
    """The lines of the case's block in SOURCE, and those marked `# reported` in it."""
    lines = SOURCE.splitlines()
    start = next(i for i, s in enumerate(lines, 1) if s.strip() == f'if case == "{case}":')
    end = next((i for i, s in enumerate(lines[start:], start + 1) if s.strip().startswith("if case ==")
                or s.strip().startswith("raise ValueError")), len(lines))
    return range(start, end), [i for i in range(start, end) if lines[i - 1].endswith("# reported")]


@pytest.fixture(scope="module")
def findings():
    fa = analyze_source(SOURCE, "tuple_returns.py")
    return [(f.code, f.span.start.line, f.condition.text if f.condition else None) for f in fa.findings]


@pytest.mark.parametrize("case", CASES)
def test_items_of_a_returned_tuple(case, findings, tmp_path):
    block, reported = _case_lines(case)
    found = sorted(line for _, line, _ in findings if line in block)
    assert found == reported, (case, findings)
    for code, line, condition in findings:
        if line in block and "items" in case:  # the rank is not in the code: named as the condition
            assert code == "GM401" and condition == "`lengths.dim() == 1 or lengths.dtype == torch.bool`", \
                (case, findings)
    mod = load_module(SOURCE, tmp_path, "tuple_returns")
    x = torch.arange(12.0).reshape(3, 4)
    broke = logged_break_lines(mod.run, x, torch.tensor([1, 2, 0]), case, path=mod.__file__)
    assert sorted(n for n in broke if n in block) == reported, (case, broke)


def test_a_return_of_another_shape_says_nothing():
    """A callee whose returns are not all tuple displays of the unpacked length: nothing known
    item by item (the walk falls back to what it knew of the call)."""
    src = textwrap.dedent('''\
        import torch


        def pick(x, flag):
            if flag:
                return x, x.sum()
            return (x, x.sum(), 0)[:2]


        def f(x, flag):
            a, b = pick(x, flag)
            if b > 0:
                return a
            return -a


        compiled = torch.compile(f)
        ''')
    assert analyze_source(src, "other_shape.py").findings == []
