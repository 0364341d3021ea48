"""GM602-GM604 (boolean-mask code with a fixed-shape form): original vs mended on inputs with
empty and full masks, nan/inf, int and float dtypes; one FX graph with fullgraph=True; exact
where the arithmetic is the same, within a few ulps for float sums."""

from __future__ import annotations

import pytest
import torch

from difftest import Counter, compiled, load_module
from graphmend.rewrite import fix_source
from graphmend.rules import masked

MENDED = [ex for ex in masked.EXAMPLES if ex.fixed is not None]


def _fn(mod):
    f = mod.f
    return getattr(f, "_torchdynamo_orig_callable", f)


def _inputs(dtype):
    torch.manual_seed(0)
    base = torch.randn(4, 6) * 3
    cases = [base, -base.abs() - 1, base.abs() + 2]  # mixed, nothing selected, everything selected
    if dtype.is_floating_point:
        odd = base.clone()
        odd[0, 0], odd[1, 1], odd[2, 2] = float("nan"), float("inf"), float("-inf")
        cases.append(odd)
        return [c.to(dtype) for c in cases]
    big = torch.full((4, 6), 2 ** 40 + 1, dtype=torch.int64)  # above float32's exact integers
    return [c.round().to(dtype) for c in cases] + [big]


def _equal(a, b, exact):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert torch.equal(a.isnan(), b.isnan()) if a.is_floating_point() else True
    if exact or not a.is_floating_point():
        assert torch.equal(torch.nan_to_num(a) if a.is_floating_point() else a,
                           torch.nan_to_num(b) if b.is_floating_point() else b), (a, b)
    else:
        tol = 2e-3 if a.dtype == torch.float16 else 1e-5  # a few ulps of the dtype (the rule's docstring)
        torch.testing.assert_close(a, b, rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("ex", MENDED, ids=[e.name for e in MENDED])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64])
def test_original_vs_mended(ex, dtype, tmp_path):
    orig = _fn(load_module(ex.source, tmp_path, "orig"))
    mended = _fn(load_module(fix_source(ex.source, unsafe=True).text, tmp_path, "mended"))
    two = orig.__code__.co_argcount == 2
    if "isnan" in ex.source and not dtype.is_floating_point:
        pytest.skip("isnan of an int tensor: nothing to select")
    exact = not ex.name.startswith("GM602")
    for x in _inputs(dtype):
        args = (x, (x.flip(0) if dtype is torch.int64 else x.flip(0) * 0.5).to(
            torch.float32 if dtype is torch.int64 else dtype)) if two else (x,)
        try:
            want = orig(*args)
        except RuntimeError as e:
            if "dtypes match" in str(e) or "can't be cast" in str(e):  # documented unsafe: the mend casts
                assert ex.name.startswith("GM603") and mended(*args).dtype == x.dtype
                continue
            with pytest.raises(RuntimeError):  # mean of an int tensor: both refuse
                mended(*args)
            continue
        got = mended(*args)
        _equal(want, got, exact)
        counter = Counter()
        out = compiled(mended, counter, fullgraph=True)(*args)
        assert len(counter.graphs) == 1
        _equal(got, out, exact=not dtype.is_floating_point or exact)


@pytest.mark.parametrize("ex", MENDED, ids=[e.name for e in MENDED])
def test_original_breaks(ex, tmp_path):
    orig = _fn(load_module(ex.source, tmp_path, "orig"))
    x = torch.randn(4, 6)
    counter = Counter()
    args = (x, x.flip(0)) if orig.__code__.co_argcount == 2 else (x,)
    compiled(orig, counter)(*args)
    if len(counter.graphs) > 1:
        return
    # a loop over nonzero rows: Dynamo gives up on the rest of the frame (one graph, then eager);
    # fullgraph=True refuses it (while it captures `x[m].sum()` whole with an unbacked size)
    with pytest.raises(Exception, match="(?i)data|dynamic"):
        compiled(orig, Counter(), fullgraph=True)(*args)


def test_loop_without_shape_proof_is_unsafe():
    from graphmend.analysis import analyze_source
    src = ("import torch\n\n\n@torch.compile\ndef f(x, m):\n"
           "    for i in torch.nonzero(x > 1):\n        m[tuple(i)] = True\n    return m\n")
    (f,) = [f for f in analyze_source(src).findings if f.code == "GM604"]
    assert f.applicability.value == "unsafe" and "smaller" in f.decline_reason
    assert fix_source(src).text == src
