"""GM406 (rules/scalar_first.py): the deprecated scalar-first overloads `t.add_(n, x)`,
`t.addcmul_(n, a, b)`, `t.addcdiv_(n, a, b)` (pytorch-ranger's optimizers, realcode round 25)
against their mend, the number as `alpha=` / `value=`. Each example is run original vs mended on
optimizer-like states (normal, large, negative, nan, float16): outputs and the in-place updated
states compared bitwise; the mended code gives no deprecation warning (the original gives torch's,
once per process: the one difference, by design); compiled with a counting backend, the original breaks and the
mended code is one graph under fullgraph=True."""

from __future__ import annotations

import logging
import warnings

import pytest
import torch

from difftest import Counter, load_module
from graphmend.analysis import analyze_source
from graphmend.findings import Applicability
from graphmend.rewrite import fix_source
from graphmend.rules import scalar_first

MENDED = [ex for ex in scalar_first.EXAMPLES if ex.fixed is not None]


def _states(dtype):
    g = torch.Generator().manual_seed(0)
    base = [torch.randn(2, 4, generator=g) for _ in range(3)]
    nan = [b.clone() for b in base]
    nan[2][0, 1] = float("nan")
    for name, states in (("normal", base), ("large", [b.abs() * 1e5 + 1 for b in base]),
                         ("negative", [-b.abs() - 1 for b in base]), ("nan", nan)):
        yield name, [s.to(dtype) for s in states]


def _call(fn, name, states):
    states = [s.clone() for s in states]
    if name == "update":
        out = fn(states[0], states[1].abs(), states[2], 0.9, 0.999)
    else:
        out = fn(states[0], states[1], states[2].abs() + 1, 0.01)
    return out, states


def _entry(mod):
    return getattr(mod, "update", None) or mod.step, "update" if hasattr(mod, "update") else "step"


@pytest.mark.parametrize("ex", MENDED, ids=[ex.name for ex in MENDED])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_mended_equals_original_and_is_one_graph(ex, dtype, tmp_path):
    found = analyze_source(ex.source).findings
    assert [f.code for f in found] == ex.codes and all(f.applicability is Applicability.SAFE for f in found)
    mended = fix_source(ex.source).text
    assert mended == ex.fixed and fix_source(mended).text == mended  # idempotent
    assert analyze_source(mended).findings == []
    orig_mod, mend_mod = load_module(ex.source, tmp_path, "sf_orig"), load_module(mended, tmp_path, "sf_mend")
    (orig, name), (mend, _) = _entry(orig_mod), _entry(mend_mod)
    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
    for label, states in _states(dtype):
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            want = _call(orig.__wrapped__ if hasattr(orig, "__wrapped__") else orig, name, states)
        with warnings.catch_warnings(record=True) as w_mend:
            warnings.simplefilter("always")
            got = _call(mend.__wrapped__ if hasattr(mend, "__wrapped__") else mend, name, states)
        assert not any("deprecated" in str(x.message) for x in w_mend), label
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True, msg=label)
        for compiled_src, fullgraph in ((ex.source, False), (mended, True)):
            counter = Counter()
            torch._dynamo.reset()
            fn = load_module(compiled_src, tmp_path, f"sf_c{int(fullgraph)}")
            raw, _ = _entry(fn)
            raw = getattr(raw, "__wrapped__", raw)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = _call(torch.compile(raw, backend=counter, fullgraph=fullgraph), name, states)
            torch._dynamo.reset()
            # Dynamo passes the Python float arguments into the graph as values of its own (not
            # specialized), so a compiled call may differ from eager in the last bit: closeness here,
            # bitwise above (eager mended against eager original)
            torch.testing.assert_close(out, want, equal_nan=True, msg=label)
            if fullgraph:
                assert len(counter.graphs) == 1, label
        with pytest.raises(torch._dynamo.exc.Unsupported, match="Unhandled args"):  # the original breaks
            torch._dynamo.reset()
            raw, _ = _entry(load_module(ex.source, tmp_path, "sf_full"))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _call(torch.compile(getattr(raw, "__wrapped__", raw), backend=Counter(), fullgraph=True), name, states)
        torch._dynamo.reset()


def test_declined_when_the_keyword_is_given_too():
    ex = next(ex for ex in scalar_first.EXAMPLES if ex.fixed is None)
    (f,) = analyze_source(ex.source).findings
    assert f.code == "GM406" and f.applicability is Applicability.NONE
    assert "`alpha=`" in f.decline_reason
    assert fix_source(ex.source).text == ex.source


def test_the_current_signatures_and_other_methods_are_not_reported():
    src = ("import torch\n\n\n@torch.compile\ndef f(p: torch.Tensor, g: torch.Tensor):\n"
           "    p.add_(g, alpha=0.5)\n    p.addcmul_(g, g, value=0.1)\n    p.sub_(0.5, g)\n"
           "    q = p.add(0.5, g)\n    return p + q\n")
    assert analyze_source(src).findings == []


def test_a_receiver_the_walk_does_not_know():
    """RangerQH's `p.data.addcdiv_(-lr, avg_grad, avg_grad_rms)` with `p` from the optimizer's
    groups: three positional arguments are the deprecated form whatever the receiver; `add_`
    of an unknown receiver only with a number written first (a meter's `add_(loss, n)` is not)."""
    src = ("import torch\n\n\nclass Opt(torch.optim.Optimizer):\n    def step(self, closure=None):\n"
           "        for group in self.param_groups:\n            for p in group['params']:\n"
           "                p.data.addcdiv_(-group['lr'], p.grad, p.grad)\n"
           "                p.data.add_(1.0 - group['lr'], p.grad)\n"
           "                self.meter.add_(p.grad, 1)\n")
    from graphmend.config import Settings

    found = [(f.code, f.span.start.line) for f in analyze_source(src, settings=Settings(scope="module")).findings]
    assert found == [("GM406", 8), ("GM406", 9)], found
    assert "p.data.add_(p.grad, alpha=1.0 - group['lr'])" in fix_source(src, settings=Settings(scope="module")).text
