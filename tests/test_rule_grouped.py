"""[Route] GM605: a grouped expert dispatch (tokens sorted by expert, cut by `.tolist()` counts),
original vs mended on the hand-written example: random routing, experts with no rows, ties, an
unrouted expert that overflows, a nan token; outputs within the stated tolerance (bitwise where the
rows' arithmetic is the same), one FX graph under fullgraph=True, and the precise decline reasons."""

from __future__ import annotations

import pytest
import torch

from difftest import Counter, compiled, load_module
from graphmend.analysis import analyze_source
from graphmend.findings import Applicability
from graphmend.rewrite import fix_source
from graphmend.rules import grouped

EX = grouped.EXAMPLES[0]
MENDED = [ex for ex in grouped.EXAMPLES if ex.fixed is not None]
DECLINED = [ex for ex in grouped.EXAMPLES if ex.fixed is None]
TOL = {torch.float32: (1e-5, 1e-6), torch.float16: (2e-3, 2e-3)}
KINDS = ["random", "some-experts-unused", "ties", "unused-expert-overflows", "nan-token"]


def _top(mod):
    classes = [v for v in vars(mod).values() if isinstance(v, type) and issubclass(v, torch.nn.Module)
               and v.__module__ == mod.__name__]
    return classes[-1]  # the model is defined last


def _pair(tmp_path, ex=EX, dtype=torch.float32):
    orig = load_module(ex.source, tmp_path, "g_orig")
    text = fix_source(ex.source, unsafe=True).text
    assert text == ex.fixed
    mended = load_module(text, tmp_path, "g_mended")
    torch.manual_seed(0)
    a = _top(orig)().eval().to(dtype)
    b = _top(mended)().eval().to(dtype)
    b.load_state_dict(a.state_dict())
    return a, b


def _of(model, cls: str):
    return [m for m in model.modules() if type(m).__name__ == cls]


def _prepare(model, dtype, kind):
    torch.manual_seed(1)
    x = torch.randn(10, 8).to(dtype)
    w = _of(model, "SortRouter")[0].proj.weight
    with torch.no_grad():
        if kind == "some-experts-unused":  # every token picks experts 0 and 1: 2 and 3 get no row
            x = x.abs() + 0.1
            w.zero_()
            w[0], w[1] = 1.0, 0.5
            w[2:] = -1.0
        elif kind == "ties":  # equal scores: topk breaks the ties
            w.zero_()
        elif kind == "unused-expert-overflows":  # expert 3 gets no row and overflows on every row
            x = x.abs() + 0.1
            w.zero_()
            w[0], w[1], w[2] = 1.0, 0.5, 0.25
            w[3] = -1.0
            for bank in _of(model, "ExpertBank"):
                bank.w[3].mul_(1e38 if dtype == torch.float32 else 6e4)
                bank.b[3].fill_(float("inf"))
        elif kind == "nan-token":
            x[3] = float("nan")
    return x


def _close(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype
    assert torch.equal(a.isnan(), b.isnan()), "nan in other places"
    assert torch.equal(a.isinf(), b.isinf()), "inf in other places"
    rtol, atol = TOL[a.dtype]
    torch.testing.assert_close(a, b, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("ex", MENDED, ids=["sorted", "planned"])
@pytest.mark.parametrize("kind", KINDS)
def test_mended_matches_original_in_one_graph(ex, kind, tmp_path):
    a, b = _pair(tmp_path, ex)
    x = _prepare(a, torch.float32, kind)
    _prepare(b, torch.float32, kind)
    with torch.no_grad():
        want, got = a(x), b(x)
        _close(want, got)
        if kind == "unused-expert-overflows":
            assert torch.isfinite(want).all() and torch.isfinite(got).all(), \
                "an unrouted expert's inf leaked into the mended output"
        counter = Counter()
        out = compiled(b, counter, fullgraph=True)(x)
        assert len(counter.graphs) == 1
        _close(got, out)


@pytest.mark.parametrize("ex", MENDED, ids=["sorted", "planned"])
def test_original_breaks(ex, tmp_path):
    a, _ = _pair(tmp_path, ex)
    counter = Counter()
    with torch.no_grad():
        compiled(a, counter)(_prepare(a, torch.float32, "random"))
    # the default mode breaks at the `.tolist()` (GB0033 on `_local_scalar_dense`): 3 graphs here.
    # Measured, torch 2.13: under fullgraph=True Dynamo captures the original too (the counts
    # become unbacked sizes with runtime asserts), so the break is the default mode's.
    assert len(counter.graphs) > 1


def test_fp16(tmp_path):
    a, b = _pair(tmp_path, EX, torch.float16)
    x = _prepare(a, torch.float16, "random")
    with torch.no_grad():
        _close(a(x), b(x))


def test_the_experts_still_accept_a_list(tmp_path):
    """Another caller that passes Python-int counts gets the original's rows, bitwise here (each
    row's product is over the same row), and the mended bank agrees with the original bank."""
    orig = load_module(EX.source, tmp_path, "g_orig2")
    mended = load_module(EX.fixed, tmp_path, "g_mended2")
    torch.manual_seed(0)
    a, b = orig.ExpertBank(), mended.ExpertBank()
    b.load_state_dict(a.state_dict())
    rows = torch.randn(9, 8)
    for counts in ([2, 0, 4, 3], [0, 0, 9, 0], [9, 0, 0, 0]):
        with torch.no_grad():
            want = a(rows, counts)
            _close(want, b(rows, counts))
            _close(want, b(rows, torch.tensor(counts)))


def test_fix_is_unsafe_and_states_the_cost():
    (f,) = analyze_source(EX.source).findings
    assert f.code == "GM605" and f.applicability is Applicability.UNSAFE
    for words in ("E x N", "FLOPs", "assumed, not checked", "tensor"):
        assert words in f.decline_reason
    assert fix_source(EX.source).text == EX.source  # needs --unsafe-fixes


@pytest.mark.parametrize("ex,why", [
    (DECLINED[0], "packed into a tuple at line"),
    (DECLINED[1], "may not act per row"),
])
def test_declines_with_reason(ex, why):
    (f,) = analyze_source(ex.source).findings
    assert f.code == "GM605" and f.applicability is Applicability.NONE
    assert why in f.decline_reason, f.decline_reason


def test_declines_when_the_counts_are_read_in_the_router():
    src = EX.source.replace("        order = top_e", "        self.load = counts\n        order = top_e")
    (f,) = [f for f in analyze_source(src).findings if f.code == "GM605"]
    assert f.applicability is Applicability.NONE and "also read at line" in f.decline_reason


def test_a_tolist_that_reaches_no_split_stays_gm401():
    src = EX.source.replace("chunks = rows.split(counts, dim=0)", "chunks = [rows] * 4")
    codes = [f.code for f in analyze_source(src).findings]
    assert codes == ["GM401"], codes


def test_declines_when_the_counts_are_read_after_travelling_in_a_tuple():
    """The flow is followed through the returned tuple and its unpacking in another method: a
    read of the counts there (which experts got how many rows) forbids the mend."""
    src = grouped.PLANNED_SOURCE.replace("        token, weight, counts = plan\n",
                                         "        token, weight, counts = plan\n        self.n = len(counts)\n")
    (f,) = [f for f in analyze_source(src).findings if f.code == "GM605"]
    assert f.applicability is Applicability.NONE
    assert "`counts` is passed at line" in f.decline_reason and "`len`" in f.decline_reason, f.decline_reason
