"""Original vs mended code: same outputs, exceptions, stdout, log records and warnings, in eager
mode and under torch.compile; fewer FX graphs (one, with fullgraph, when all is mended)."""

from __future__ import annotations

import functools
import logging

import pytest
import torch

from difftest import Counter, compiled, load_module, mend, observe

inf, nan = float("inf"), float("nan")

DEFER = '''
import logging
import warnings
import torch
from torch import nn

logger = logging.getLogger("gm.defer")


def helper(x):
    warnings.warn("helper ran", UserWarning)
    print("helper sees", x.shape)
    return x * 2


class Inner(nn.Module):
    def forward(self, x):
        s = x.sum()
        logger.warning(f"inner sum={s:.2f} rows={x.shape[0]}")
        logger.warning_once("inner once")
        return helper(x) + 1


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        print("outer start")
        y = self.inner(x)
        x.add_(100)
        logger.info("outer done %s", "ok")
        return y
'''

TRAP = '''
import torch


class BadInput(Exception):
    pass


def check(x):
    if torch.isnan(x).any():
        raise ValueError("input has NaN")
    if x.dtype == torch.float16 and not torch.isfinite(x).all():
        raise OverflowError(f"non-finite fp16 values in a tensor of shape {tuple(x.shape)}")
    return x


def f(x):
    x = check(x)
    if (x < -100).any():
        raise BadInput("too small")
    return x.relu() + 1
'''

WHERE = '''
import torch
from torch import nn


class Layer(nn.Module):
    def forward(self, hidden_states):
        hidden_states = hidden_states * 2
        if hidden_states.dtype == torch.float16 and (
            torch.isinf(hidden_states).any() or torch.isnan(hidden_states).any()
        ):
            clamp_value = torch.finfo(hidden_states.dtype).max - 1000
            hidden_states = torch.clamp(hidden_states, min=-clamp_value, max=clamp_value)
        return hidden_states


def pick(x: torch.Tensor, y: torch.Tensor):
    if x.sum() > y.sum():
        z = x * 2
    else:
        z = y - 1
    return z


def early(x: torch.Tensor):
    m = x.abs().max()
    if m > 4:
        return x / m
    return x


def ternary(x: torch.Tensor):
    return x * 3 if x.mean() > 0 else x.neg()


class Gate(nn.Module):
    """A branch that may only run under its predicate (a submodule call): torch.cond."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.proj = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor):
        if x.abs().max() > 1:
            x = self.proj(x)
        return x * 2


class Rope(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("inv_freq", torch.arange(4.0), persistent=False)
        self.original_inv_freq = self.inv_freq

    def forward(self, x, position_ids: torch.Tensor):
        seq_len = torch.max(position_ids) + 1
        if seq_len > 8:
            if not hasattr(self, "long_inv_freq"):
                self.long_inv_freq = torch.arange(4.0) / 8
            self.register_buffer("inv_freq", self.long_inv_freq, persistent=False)
        else:
            self.original_inv_freq = self.original_inv_freq.to(x.device)
            self.register_buffer("inv_freq", self.original_inv_freq, persistent=False)
        return x * self.inv_freq
'''


def _warning_once(self, *args, **kwargs):
    self.warning(*args, **kwargs)


@pytest.fixture(autouse=True)
def warning_once():
    """transformers attaches warning_once to Logger with an lru_cache; do the same."""
    before = logging.Logger.__dict__.get("warning_once")
    logging.Logger.warning_once = functools.lru_cache(None)(_warning_once)
    yield
    if before is None:
        del logging.Logger.warning_once
    else:
        logging.Logger.warning_once = before


def _pair(src, tmp_path, stem):
    mended = mend(src)
    assert mended != src
    return load_module(src, tmp_path, stem + "_orig"), load_module(mended, tmp_path, stem + "_mend"), mended


def _check(fo, fm, inputs, backend="eager", fullgraph=True, max_graphs=1):
    """eager: identical; compiled mended vs eager original: identical; graphs counted."""
    for args in inputs:
        eo = observe(fo, *[a.clone() for a in args])
        em = observe(fm, *[a.clone() for a in args])
        assert eo.same_as(em) == [], f"eager differs on {args}: {eo.same_as(em)}"
        c_orig = Counter(backend)
        co = observe(compiled(fo, c_orig), *[a.clone() for a in args])
        c_mend = Counter(backend)
        cm = observe(compiled(fm, c_mend, fullgraph=fullgraph), *[a.clone() for a in args])
        # the mended program under compile behaves like the original in eager mode
        assert cm.same_as(eo) == [], f"compiled mended differs on {args}: {cm.same_as(eo)}"
        if cm.error is None:
            assert len(c_mend.graphs) <= max_graphs, f"{len(c_mend.graphs)} graphs after mending"
            assert len(c_mend.graphs) <= len(c_orig.graphs)
        _ = co


def test_defer_keeps_messages_at_every_depth(tmp_path):
    o, m, text = _pair(DEFER, tmp_path, "defer")
    assert "logger.warning(" not in text and text.count("import _graphmend_runtime as graphmend") == 1
    x = torch.arange(6.0).reshape(2, 3)
    orig_model, mended_model = o.Outer(), m.Outer()
    eo = observe(orig_model, x.clone())
    # original under compile breaks into several graphs
    c = Counter()
    observe(compiled(o.Outer(), c), x.clone())
    assert len(c.graphs) > 1
    logging.Logger.warning_once.cache_clear()
    c2 = Counter()
    fn = compiled(mended_model, c2, fullgraph=True)
    cm = observe(fn, x.clone())
    assert len(c2.graphs) == 1
    assert cm.same_as(eo) == [], cm.same_as(eo)
    # warning_once stays once across calls
    again = observe(fn, x.clone())
    assert [r for r in again.records if r[2] == "inner once"] == []


@pytest.mark.parametrize("x", [
    torch.tensor([1.0, 2.0]), torch.tensor([1.0, nan]), torch.tensor([-200.0, 1.0]),
    torch.tensor([1.0, inf], dtype=torch.float16), torch.tensor([1.0, 2.0], dtype=torch.float16),
    torch.tensor([inf, -inf]),
])
def test_trap_same_exceptions(tmp_path, x):
    o, m, _ = _pair(TRAP, tmp_path, "trap")
    _check(o.f, m.f, [(x,)])


@pytest.mark.parametrize("x", [
    torch.tensor([1.0, 2.0]), torch.tensor([70000.0, 1.0]).half() / 2,
    torch.tensor([1.0, inf], dtype=torch.float16), torch.tensor([nan, 1.0], dtype=torch.float16),
    torch.tensor([1.0, nan]), torch.tensor([[1.0, -inf]], dtype=torch.float16),
])
def test_where_fp16_clamp(tmp_path, x):
    o, m, text = _pair(WHERE, tmp_path, "where")
    assert "torch.where(" in text
    _check(o.Layer(), m.Layer(), [(x,)])


@pytest.mark.parametrize("fn,args", [
    ("pick", (torch.tensor([3.0, 4.0]), torch.tensor([1.0, 1.0]))),
    ("pick", (torch.tensor([-3.0, 4.0]), torch.tensor([5.0, 1.0]))),
    ("pick", (torch.tensor([nan, 4.0]), torch.tensor([5.0, 1.0]))),
    ("early", (torch.tensor([1.0, -9.0]),)),
    ("early", (torch.tensor([1.0, 2.0]),)),
    ("early", (torch.tensor([inf, 2.0]),)),
    ("ternary", (torch.tensor([1.0, 2.0]),)),
    ("ternary", (torch.tensor([-1.0, -2.0]),)),
])
def test_where_branches(tmp_path, fn, args):
    o, m, _ = _pair(WHERE, tmp_path, "where")
    _check(getattr(o, fn), getattr(m, fn), [args])


GATED = '''
import logging
import warnings
import torch

logger = logging.getLogger("gm.gated")


def helper(x):
    if x.abs().max() > 10:
        warnings.warn("large activations", RuntimeWarning)
        logger.warning(f"max was {x.abs().max():.1f}")
    return x + 1


def f(x: torch.Tensor):
    y = helper(x) * 2
    if x.dtype == torch.float32 and torch.isnan(x).any():
        print("nan seen in", x.shape)
    return y
'''


@pytest.mark.parametrize("x", [torch.full((2, 4), 3.0), torch.full((2, 4), 0.5),
                               torch.tensor([[nan, 0.0, 0.0, 0.0]] * 2), torch.tensor([[inf, 0.0, 0.0, 0.0]] * 2)])
def test_where_cond_for_a_submodule_branch(tmp_path, x):
    o, m, text = _pair(WHERE, tmp_path, "where")
    assert "torch.cond(x.abs().max() > 1, lambda: self.proj(x), lambda: x.clone())" in text
    with torch.no_grad():
        _check(o.Gate(), m.Gate(), [(x,)])


@pytest.mark.parametrize("x", [torch.tensor([1.0, 2.0]), torch.tensor([1.0, 20.0]),
                               torch.tensor([nan, 1.0]), torch.tensor([inf, 1.0]),
                               torch.tensor([30.0, 1.0], dtype=torch.float16)])
def test_gated_effects(tmp_path, x):
    o, m, text = _pair(GATED, tmp_path, "gated")
    assert "graphmend.print_if(" in text and "if x.abs().max() > 10" not in text
    _check(o.f, m.f, [(x,)])


def test_where_module_buffer(tmp_path):
    """LongRoPE's pattern: one module instance called with short and long positions, in turn."""
    o, m, text = _pair(WHERE, tmp_path, "where")
    assert "self.register_buffer(\"inv_freq\", torch.where(" in " ".join(text.split()).replace("( ", "(")
    x = torch.ones(2, 4)
    short, long = torch.arange(5), torch.arange(12)
    ro, rm = o.Rope(), m.Rope()
    c = Counter()
    fm = compiled(rm, c, fullgraph=True)
    for pos in (short, long, short, long):
        want = observe(ro, x, pos)
        got = observe(fm, x, pos)
        assert got.same_as(want) == [], got.same_as(want)
        assert torch.equal(rm.inv_freq, ro.inv_freq)
    assert len(c.graphs) <= 2  # one graph; a recompile at most when the buffer's identity changes


def test_inductor_defer_trap_where(tmp_path):
    """One inductor run over all three rewrites (inductor compiles are slow on CI)."""
    src = DEFER + "\n" + TRAP.replace("import torch\n", "") + "\n" + WHERE.replace(
        "import torch\nfrom torch import nn\n", "") + '''

def everything(x):
    x = f(x)
    y = Outer()(x.clone())
    return Layer()(y) + early(y)
'''
    o, m, _ = _pair(src, tmp_path, "all")
    for x in (torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([[1.0, nan], [3.0, 4.0]])):
        logging.Logger.warning_once.cache_clear()
        eo = observe(o.everything, x.clone())
        logging.Logger.warning_once.cache_clear()
        c = Counter("inductor")
        cm = observe(compiled(m.everything, c, fullgraph=True), x.clone())
        assert cm.same_as(eo) == [], cm.same_as(eo)
        if cm.error is None:
            assert len(c.graphs) == 1
