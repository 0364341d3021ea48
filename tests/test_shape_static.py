"""GM401/GM402 on the arguments Dynamo really reads as Python values.

Each case is a small compiled function: the static analysis must report exactly the expected
codes, and torch.compile with a counting backend must give the expected number of FX graphs
(1: Dynamo traced the call into the graph, so a finding there would be a false alarm; 2: Dynamo
broke there, so the finding must stay). Every function does tensor work before and after the
call, so a break always shows as a second graph; the tensor arguments are intermediates, as in
model code (Dynamo may specialize a 0-dim tensor that is an input of the compiled frame).
"""

from __future__ import annotations

import logging
import textwrap

import pytest
import torch

from difftest import Counter, load_module
from test_callers import break_lines
from graphmend.analysis import analyze_source

HEAD = """\
import torch


def f(x: torch.Tensor, r: torch.Tensor, n: torch.Tensor, t: torch.Tensor, pos, k: int):
    x, r, n, t = x * 2, r + 0, n + 0, t * 1  # intermediates: a 0-dim graph INPUT can be specialized
"""
TAIL = "    return y * 3\n"
HEAD_LINES = HEAD.count("\n")


def source(body: str) -> str:
    return HEAD + textwrap.indent(textwrap.dedent(body).strip("\n") + "\n", "    ") + TAIL + \
        "\n\ncompiled = torch.compile(f)\n"


def args():
    # x (2, 3, 4); r: per-index repeats for dim 1; n: a 0-dim int tensor; t: a 0-dim float
    return (torch.arange(24.0).reshape(2, 3, 4), torch.tensor([1, 2, 3]), torch.tensor(3),
            torch.tensor(1.5), 4, 2)


# name -> (body assigning y, expected (code, line in body), graphs under torch.compile)
CASES = {
    # --- repeat_interleave: static repeats or output_size= keep the shape static
    "ri-int": ("y = x.repeat_interleave(2, dim=1)", [], 1),
    "ri-python-int-param": ("y = x.repeat_interleave(k, dim=1)", [], 1),
    "ri-shape": ("y = x.repeat_interleave(x.shape[2], dim=1)", [], 1),
    "ri-int-output-size": ("y = x.repeat_interleave(2, dim=1, output_size=x.shape[1] * 2)", [], 1),
    "torch-ri-int": ("y = torch.repeat_interleave(x, 2, dim=0)", [], 1),
    "torch-ri-repeats-kw": ("y = torch.repeat_interleave(x, repeats=x.size(0), dim=0)", [], 1),
    "ri-tensor-output-size": ("y = x.repeat_interleave(r, dim=1, output_size=6)", [], 1),
    "torch-ri-one-arg-output-size": ("y = torch.repeat_interleave(r, output_size=6) * x.sum()", [], 1),
    # tensor repeats without output_size: a data-dependent shape (GB0036), still reported
    "ri-tensor": ("y = x.repeat_interleave(r, dim=1)", [("GM402", 1)], 2),
    "torch-ri-tensor-kw": ("y = torch.repeat_interleave(x, repeats=r, dim=1)", [("GM402", 1)], 2),
    "torch-ri-one-arg": ("y = torch.repeat_interleave(r) * x.sum()", [("GM402", 1)], 2),
    "ri-output-size-none": ("y = x.repeat_interleave(r, dim=1, output_size=None)", [("GM402", 1)], 2),
    # --- factories: only the size/bound parameters are read as Python numbers
    "arange-shape": ("y = x + torch.arange(x.shape[-1])", [], 1),
    "arange-int": ("y = x + torch.arange(k, 6)", [], 1),
    "linspace-tensor-bounds": ("y = x + torch.linspace(t, t + 1, 4)", [], 1),
    "logspace-tensor-start": ("y = x + torch.logspace(t, 2.0, 4)", [], 1),
    "full-tensor-fill": ("y = x + torch.full((4,), t)", [], 1),
    "zeros-shape-tuple": ("y = x + torch.zeros((x.shape[0], 1, 1))", [], 1),
    "isinstance-int": ("if isinstance(pos, int):\n    pos = torch.arange(pos)\ny = x + pos.float()",
                       [], 1),
    "arange-tensor": ("y = x.sum() + torch.arange(n)", [("GM401", 1)], 2),
    "arange-end-kw-tensor": ("y = x.sum() + torch.arange(end=n)", [("GM401", 1)], 2),
    "linspace-tensor-steps": ("y = x.sum() + torch.linspace(0, 1, n)", [("GM401", 1)], 2),
    "linspace-steps-kw-tensor": ("y = x.sum() + torch.linspace(0, 1, steps=n)", [("GM401", 1)], 2),
    "zeros-tuple-with-tensor": ("y = x.sum() + torch.zeros((n, 2))", [("GM401", 1)], 2),
    "full-tensor-size": ("y = x.sum() + torch.full((n,), 1.0)", [("GM401", 1)], 2),
    "one-hot-int-classes": ("y = x + torch.nn.functional.one_hot(r, 4).sum()", [], 1),
    "one-hot-tensor-classes": ("y = x.sum() + torch.nn.functional.one_hot(r, n + 1).sum()",
                               [("GM401", 1)], 2),
    "arange-item": ("y = x.sum() + torch.arange(int(x.sum().item()))", [("GM401", 1)], 2),
    # a size from a tensor built of Python numbers: Dynamo knows its value
    "arange-built-tensor": ("y = x + torch.arange(torch.tensor(k) * 2).sum()", [], 1),
    # --- aten.linalg_lstsq is tagged dynamic_output_shape (torchimize's solvers, realcode round 30)
    "lstsq": ("y = x.sum() + torch.linalg.lstsq(x[0], x[0, :, :1], rcond=None, driver=None)[0].sum()",
              [("GM402", 1)], 2),
    "lstsq-solution": ("y = x.sum() + torch.linalg.lstsq(x[0].double(), x[0, :, :1].double()).solution.sum()",
                       [("GM402", 1)], 2),
    "pinv-instead": ("y = x + (torch.linalg.pinv(x[0]) @ x[0, :, :1]).sum()", [], 1),
    # --- boolean masks: an assignment is an index_put Dynamo traces; a read is dynamic
    "mask-store": ("y = x.clone()\ny[x > 10] = 0.0", [], 1),
    "mask-store-tensor-value": ("y = x.clone()\ny[x > 10] = t", [], 1),
    # a masked sum: reported by [masked] GM602, which mends it (rules/masked.py)
    "mask-read": ("y = x[x > 10].sum() * x", [("GM602", 1)], 2),
    "mask-read-into-store": ("y = x.clone()\ny[x > 10] = x[x > 10] * 2", [("GM402", 2)], 2),
}


@pytest.mark.parametrize("body,expected,graphs", CASES.values(), ids=CASES.keys())
def test_static_finding_matches_dynamo(body, expected, graphs, tmp_path):
    text = source(body)
    fa = analyze_source(text, "case.py")
    got = [(fd.code, fd.span.start.line - HEAD_LINES) for fd in fa.findings]
    assert got == expected, text
    mod = load_module(text, tmp_path, "shape_static")
    counter = Counter()
    torch._dynamo.reset()
    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
    try:
        compiled = torch.compile(mod.f, backend=counter)
        out = compiled(*args())
    finally:
        torch._dynamo.reset()
    assert torch.equal(out, mod.f(*args()))
    assert len(counter.graphs) == graphs, text


JIT_IGNORED = """\
import torch


@torch.jit.ignore
def scaled(x):
    return x * 5


@torch.jit.unused
def shifted(x):
    return x + 6


@torch.compiler.disable
def skipped(x):
    return x - 1


def f(x):
    x = x * 2
    y = scaled(x) + shifted(x)
    return y * 3


def g(x):
    x = x * 2
    y = skipped(x)
    return y * 3


compiled = torch.compile(f), torch.compile(g)
"""


def test_jit_ignored_functions_are_inlined_not_skipped(tmp_path):
    """`torch.jit.ignore`/`unused` are TorchScript markers: Dynamo inlines those functions (one
    graph), so their calls are no GM403; `torch.compiler.disable` does make Dynamo skip (two
    graphs) and stays reported."""
    fa = analyze_source(JIT_IGNORED, "jit.py")
    assert [(fd.code, fd.span.start.line) for fd in fa.findings] == [("GM403", 27)]
    mod = load_module(JIT_IGNORED, tmp_path, "jit_ignored")
    for fn, graphs in ((mod.f, 1), (mod.g, 2)):
        counter = Counter()
        torch._dynamo.reset()
        try:
            out = torch.compile(fn, backend=counter)(torch.arange(3.0))
        finally:
            torch._dynamo.reset()
        assert torch.equal(out, fn(torch.arange(3.0)))
        assert len(counter.graphs) == graphs, fn.__name__


ROW_LOOP = """\
import torch


def segments(ids: torch.Tensor, n: int):
    idxs = torch.nonzero(ids == 101)
    mask = torch.eye(n, dtype=torch.bool)
    prev = 0
    for i in range(idxs.shape[0]):
        row, col = idxs[i]
        mask[prev + 1: col + 1, prev + 1: col + 1] = True
        prev = col
    return mask


def plain(x: torch.Tensor):
    return torch.nonzero(x > 0) * 2
"""


def test_a_nonzero_whose_rows_drive_a_loop_says_what_the_loop_does(tmp_path):
    """grounding-dino's text masks: the decline names the loop, the state it carries and the slice
    writes, not a generic hint; Dynamo breaks at that nonzero."""
    text = ROW_LOOP + "\n\nc_segments = torch.compile(segments)\nc_plain = torch.compile(plain)\n"
    found = {(f.code, f.span.start.line): f for f in analyze_source(text, "rows.py").findings}
    why = found[("GM402", 5)].decline_reason
    assert why.startswith("the rows of `idxs` drive a Python loop (line 8)")
    assert "carries `prev` from one row to the next" in why and "writes slices bounded by a row's values" in why
    assert "GM604" in why and "capture_dynamic_output_shape_ops" in why
    assert found[("GM402", 16)].decline_reason.startswith("no rewrite keeps the meaning")  # no loop: the hint
    mod = load_module(text, tmp_path, "rows")
    ids = torch.tensor([[101, 5, 6, 101, 7]])
    torch._dynamo.reset()
    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
    try:
        ex = torch._dynamo.explain(mod.segments)(ids, 5)
    finally:
        torch._dynamo.reset()
    assert {(r.user_stack[-1].lineno, r.reason.splitlines()[0]) for r in ex.break_reasons} == \
        {(5, "Dynamic shape operator")}


# realcode round 10 (auraloss): random draws. numpy's is a traced 0-dim array that `y * h` reads
# as a Python number; `random`'s are functions Dynamo skips. The others Dynamo traces.
RANDOM_BREAKS = ["np.random.rand()", "np.random.randn()", "np.random.randint(1, 5)", "np.random.choice([1.0, 0.5])",
                 "np.random.uniform(0.5, 1.5)", "np.random.normal()", "np.random.permutation(4)[0]",
                 "np.random.random()", "np.random.random_sample()", "np.random.standard_normal()",
                 "random.random()", "random.choice([1, 2])", "random.gauss(0, 1)", "random.sample([1, 2], 1)[0]",
                 "random.betavariate(1, 1)", "random.normalvariate(0, 1)", "random.getrandbits(3)"]
RANDOM_TRACED = ["random.randint(1, 5)", "random.uniform(0.5, 1.5)", "random.randrange(1, 5)"]


@pytest.mark.parametrize("draw", RANDOM_BREAKS + RANDOM_TRACED)
def test_random_draws_dynamo_cannot_trace(draw, tmp_path):
    text = ("import random\n\nimport numpy as np\nimport torch\n\n\n"
            f"def f(x):\n    y = x + 1\n    h = {draw}\n    return y * h\n\n\ncompiled = torch.compile(f)\n")
    got = [(fd.code, fd.span.start.line) for fd in analyze_source(text, "draw.py").findings]
    assert got == ([("GM403", 9)] if draw in RANDOM_BREAKS else []), draw
    mod = load_module(text, tmp_path, "random_draw")
    counter = Counter()
    torch._dynamo.reset()
    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
    try:
        torch.compile(mod.f, backend=counter)(torch.ones(3))
    finally:
        torch._dynamo.reset()
    assert len(counter.graphs) == (2 if draw in RANDOM_BREAKS else 1), draw


# realcode rounds 9 and 14: calls Dynamo skips (GB0007), each breaking the graph where it runs
SKIPPED = {
    "get_rng_state": ("s = torch.get_rng_state()", 8),
    "set_rng_state": ("torch.set_rng_state(torch.get_rng_state())", 8),
    "manual_seed": ("torch.manual_seed(0)", 8),
    "autograd_grad": ("y = y * torch.autograd.grad(y.sum(), x, create_graph=True)[0]", 8),
    "autograd_backward": ("torch.autograd.backward(y.sum(), retain_graph=True)", 8),
    "tqdm": ("for _ in tqdm(range(2)):\n        y = y * 2", 8),
}


@pytest.mark.parametrize("body,line", SKIPPED.values(), ids=SKIPPED.keys())
def test_calls_dynamo_skips(body, line, tmp_path):
    """Each is GM403 on its line, and Dynamo's graph-break log names that line (a tqdm loop makes
    Dynamo skip the frame: explain() and the graph count would not show it)."""
    from test_callers import logged_break_lines

    text = ("import torch\nfrom tqdm import tqdm\n\n\n"
            f"def f(x):\n    y = x * 3\n    z = y.sin()\n    {body}\n    return y + z\n\n\ncompiled = torch.compile(f)\n")
    got = {(fd.code, fd.span.start.line) for fd in analyze_source(text, "skipped.py").findings}
    assert got == {("GM403", line)}, text
    mod = load_module(text, tmp_path, "skipped_call")
    assert logged_break_lines(mod.f, torch.ones(3, requires_grad=True), path=mod.__file__) == {line}


NUMPY_VALUES = """\
import numpy as np
import torch


def flat(x):
    n = int(np.prod(x.shape[1:]))
    return x.reshape(x.shape[0], n) * 2


def starts(x, lst):
    c = np.cumsum([0] + lst)
    s = list(map(int, c))
    return x[s[-1]:] * 2


def last(x, lst):
    c = np.cumsum([0] + lst)
    return x[: int(c[-1])] * 2


def total(x):
    return x * int(np.sum([1, 2, 3]))


def root(x):
    return x * int(np.sqrt(x.shape[-1]))
"""


def test_a_value_read_from_a_numpy_array_is_a_data_dependent_operator(tmp_path):

    """Dynamo traces numpy's reductions and array builders as tensors (deepxde's
    `list(map(int, np.cumsum(...)))`, realcode round 9; `int(np.prod(x.shape[1:]))`): reading a
    value of what they return breaks (GB0033). numpy's scalar math on a Python number does not."""
    text = NUMPY_VALUES + ("\n\nc = torch.compile(flat), torch.compile(starts), torch.compile(last), "
                           "torch.compile(total), torch.compile(root)\n")
    found = analyze_source(text, "np_values.py").findings
    assert [(f.code, f.span.start.line) for f in found] == [("GM401", 6), ("GM401", 12), ("GM401", 18),
                                                            ("GM401", 22)]
    mod = load_module(NUMPY_VALUES, tmp_path, "np_values")
    x = torch.arange(24.0).reshape(2, 3, 4)
    for fn, args, lines in ((mod.flat, (x,), {6}), (mod.starts, (x.flatten(), [1, 2]), {12}),
                            (mod.last, (x.flatten(), [1, 2]), {18}), (mod.total, (x,), {22}),
                            (mod.root, (x,), set())):
        assert break_lines(fn, *args, path=mod.__file__) == lines, fn.__name__
