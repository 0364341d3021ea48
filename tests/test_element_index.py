"""An element of a tensor taken by a Python int, used as an index, is a 0-dim tensor when that
tensor is 1-d, and Dynamo reads its value into Python (GB0033; realcode round 23, torchsurv
0.2.0's concordance index):

    order = torch.argsort(time)
    i = 0
    while i < n_samples - 1:
        time_i = time[order[i]]           # GB0033
        ...
        i = end

The int is a literal, a `range` loop's target, a name every binding of which is an int
expression (`i = 0`, `i += 1`, `i = end`), a parameter annotated `int`. Where the code makes the
tensor 1-d (`torch.randperm`, `.view(-1)`), a break; where it makes it 2-d (`x.nonzero()`) or a
tuple (`torch.where(c)`), none (an element is a 1-d index: advanced indexing, which traces). Where
the rank is not in the code, the finding names its condition (`order.dim() == 1`), and only for an
int that varies: by a literal (`edge_index[0]`) it is most often a row. A slice is not an
element. Each case is checked statically and run under Dynamo (its graph-break log).
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


def run(case, time: torch.Tensor, k: int = 2):
    order = torch.argsort(time)
    if case == "randperm":
        perm = torch.randperm(time.shape[0])
        return time[perm[0]] * 2  # reported
    if case == "range":
        s = time.new_zeros(())
        for j in range(3):
            s = s + time[order[j]]  # reported: breaks only when `order.dim() == 1`
        return s
    if case == "while":
        i, out = 0, []
        while i < 4:
            end = i + 2
            out.append(time[order[i]])  # reported: breaks only when `order.dim() == 1`
            i = end
        return torch.stack(out)
    if case == "int-parameter":
        return time[order[k - 1]] + 1  # reported: breaks only when `order.dim() == 1`
    if case == "flattened":
        flat = order.view(-1)
        return time[flat[k]] - 1  # reported
    if case == "literal":
        return time[order[0]] * 2  # not reported, though it breaks: by a literal, most often a row
    if case == "row":
        rows = torch.stack([order, order])
        return time[rows[0]] * 3  # not reported
    if case == "nonzero":
        idx = (time > 0).nonzero()
        return time[idx[0]] * 5  # not reported
    if case == "tuple":
        found = torch.where(time > -10)
        return time[found[0]] * 6  # not reported
    if case == "loop-row":
        out = []
        rows = torch.stack([order, order])
        for j in range(2):
            out.append(time[rows[j]])  # reported: breaks only when `rows.dim() == 1`
        return torch.stack(out)
    if case == "stated-rank":
        table = torch.stack([order, order])
        assert table.dim() == 2 and time.dim() == 1
        out = []
        for j in range(2):
            out.append(time[table[j]])  # not reported: the assert states `table` is 2-d
        return torch.stack(out)
    if case == "stated-1d":
        seq = order.clone()
        n, = seq.shape
        return time[seq[k]] * 7  # reported: `n, = seq.shape` states it is 1-d
    if case == "batch-loop":
        rows = torch.stack([order, order])
        grid = torch.stack([time, time])
        out = []
        for b in range(2):
            out.append(grid[b][rows[b]])  # not reported: `b` indexes the batch too
        return torch.stack(out)
    if case == "slice":
        return time[order[1:3]] * 4  # not reported
'''

CASES = ["randperm", "range", "while", "int-parameter", "flattened", "literal", "row", "nonzero", "tuple",
         "loop-row", "stated-rank", "stated-1d", "batch-loop", "slice"]


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "element_index.py", Settings(scope="module")).findings


@pytest.mark.parametrize("case", CASES)
def test_an_element_of_a_tensor_as_an_index(case, findings, tmp_path):
    block, reported = case_span(SOURCE, case)
    lines = SOURCE.splitlines()
    (marked,) = [n for n in block if "reported" in lines[n - 1]]  # the case's element index
    here = [f for f in findings if f.span.start.line in block and "an element of" in f.message]
    assert [f.span.start.line for f in here] == reported, (case, here)
    assert all(f.code == "GM401" and f.gb_id == "GB0033" for f in here), here
    mod = load_module(SOURCE, tmp_path, "element_index")
    broke = marked in logged_break_lines(mod.run, case, torch.randn(6), path=mod.__file__)
    text = lines[marked - 1]
    if "breaks only when" in text:  # the rank is not in the code: named
        (f,) = here
        assert f.condition is not None and "dim() == 1" in f.condition.text, f
        held = f.condition.text.split(".dim()")[0].strip("`")
        assert broke == (held == "order"), (case, broke, f)  # `order` is 1-d here, `rows` 2-d
    elif reported:  # 1-d for certain: a break
        assert here[0].condition is None and broke, (case, here)
    else:
        assert broke == ("though it breaks" in text), (case, broke)


PARAM_SOURCE = '''\
import torch


def pick(time: torch.Tensor, table: torch.Tensor):
    out = []
    for j in range(2):
        out.append(time[table[j]].sum())  # reported
    return torch.stack(out)
'''


@pytest.mark.parametrize("table", ["1-d long", "2-d long", "2-d bool"])
def test_the_named_condition_holds_where_it_breaks(table, tmp_path):
    """The condition named for a tensor whose rank and dtype the code leaves open: an element of a
    1-d one is read into Python, a row of a boolean one is a mask (vector-quantize's
    `samples[seq_mask[ind]]`, which broke with a 2-d mask while the condition named the rank only);
    a row of a 2-d integer one is advanced indexing, no break. The condition, evaluated on the
    argument, says whether Dynamo breaks."""
    (f,) = [f for f in analyze_source(PARAM_SOURCE, "pick.py", Settings(scope="module")).findings]
    assert f.condition is not None
    values = {"1-d long": torch.tensor([0, 2, 1]), "2-d long": torch.tensor([[0, 1], [2, 0]]),
              "2-d bool": torch.tensor([[True, False, True], [False, True, True]])}
    arg = values[table]
    holds = eval(f.condition.text.strip("`"), {"torch": torch, "table": arg})
    mod = load_module(PARAM_SOURCE, tmp_path, "pick")
    broke = f.span.start.line in logged_break_lines(mod.pick, torch.randn(3), arg, path=mod.__file__)
    assert broke == holds == (table != "2-d long"), (table, f.condition.text, broke)
