"""Where `hasattr(x, "__len__")` (or `shape`, `dtype`, ... any attribute every tensor has) is false,
x is no tensor: deepctr-torch's `slice_arrays` (realcode round 33) calls `start.tolist()` in the
branch where `start` has a shape, which made `start` a tensor to the analysis, and slices
`arrays[0][start:stop]` where it has no `__len__` (a false alarm: the bounds are Python ints).
The `.tolist()` itself stays reported. Checked statically and against Dynamo."""

from __future__ import annotations

import pytest
import torch

from difftest import Counter, compiled, load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import numpy as np
import torch


def slice_arrays(arrays, start=None, stop=None):
    if isinstance(arrays, np.ndarray):
        arrays = [arrays]
    if hasattr(start, "__len__"):
        if hasattr(start, "shape"):
            start = start.tolist()
        return [x[start] for x in arrays]
    else:
        return arrays[0][start:stop]


def run(x, start, stop):
    return slice_arrays([x, x * 2], start, stop)
'''

LINES = {name: i for i, line in enumerate(SOURCE.splitlines(), 1)
         for name in ("start.tolist()", "arrays[0][start:stop]") if name in line}


def test_no_tensor_where_hasattr_fails():
    found = {f.span.start.line: f.code for f in analyze_source(SOURCE, "s.py", Settings(scope="module")).findings}
    assert found == {LINES["start.tolist()"]: "GM401"}, found


@pytest.mark.parametrize("start,stop,line,breaks", [
    (1, 3, "arrays[0][start:stop]", False), (torch.tensor([0, 2]), None, "start.tolist()", True)])
def test_dynamo_agrees(start, stop, line, breaks, tmp_path):
    mod = load_module(SOURCE, tmp_path, "hasattr_narrowing")
    x = torch.randn(4)
    broke = logged_break_lines(mod.run, x, start, stop, path=mod.__file__)
    assert (LINES[line] in broke) is breaks, broke
    if not breaks:
        counter = Counter()
        out = compiled(mod.run, counter, fullgraph=True)(x, start, stop)
        assert len(counter.graphs) == 1 and all(torch.equal(a, b) for a, b in zip(out, mod.run(x, start, stop)))
