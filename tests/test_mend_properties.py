"""Mends keep meaning, on generated programs (hypothesis).

Programs are generated as source text in the shapes the rewrites take -- branches over tensor
conditions (assignments, returns, conditional expressions, elif chains, nested ifs, loops around
them, calls that need torch.cond), validation guards (exception types, messages, `assert`,
`if not`), side effects (print / logging / warnings with format strings, tensor values, keyword
arguments, gated on a tensor condition) -- and run on generated inputs (float32, float16,
bfloat16, int64, bool; shapes (), (0,), (1,), (3, 4); nan, inf, -0.0). Each program is mended
twice with `fix_source(scope="module")`: safe fixes only, and with unsafe fixes too.

Compared for every input, against the original in eager mode: the result (dtype, shape, values,
nan positions), the exception (type and message), stdout and stderr, log records (logger, level,
message) and warnings (category, message):

* the safe-mended program, in eager mode and under torch.compile (backend "eager"; a few with
  "inductor"): strictly equal. Where the safe mends leave nothing to break on, the mended
  program runs as one graph, and never as more graphs than the original.
* the program with unsafe mends too: a difference is allowed only when the applied unsafe fixes'
  stated reasons cover it -- torch.where broadcasting or promoting (its two sides differed in
  dtype or shape on that input), a side that raises on the path not taken, torch.cond's branches
  differing in dtype or rank -- found by probing the mended program's torch.where / torch.cond
  calls. Any other difference is a bug.

Budget: GRAPHMEND_FUZZ_PROFILE=ci (default; small, for CI) or long; GRAPHMEND_FUZZ_EXAMPLES
overrides the example count. `benchmarks/fuzz.py --part mends` runs the long version with a
time budget and prints the figures. Cases these properties found are kept in
tests/regressions/mends/ and replayed by tests/regressions/test_regressions_mends.py.
"""

from __future__ import annotations

import ast
import atexit
import collections
import contextlib
import io
import json
import logging
import math
import os
import shutil
import tempfile
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest
import torch
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from difftest import Counter, load_module
from graphmend.config import Settings
from graphmend.findings import Applicability
from graphmend.rewrite import fix_source

PROFILE = os.environ.get("GRAPHMEND_FUZZ_PROFILE", "ci")
# examples per test: (ci, long)
EXAMPLES = {"where": (20, 600), "trap": (20, 300), "defer": (15, 300), "mixed": (10, 300),
            "inductor": (2, 25)}
STATS: collections.Counter = collections.Counter()  # read by benchmarks/fuzz.py
FAILURES: list[dict] = []  # every mismatch, with its case (for benchmarks/fuzz.py)
COLLECT = False  # benchmarks/fuzz.py: record failures and go on (no shrinking)
_TMP = tempfile.mkdtemp(prefix="gm_mendprop_")
atexit.register(shutil.rmtree, _TMP, True)


def budget(name: str) -> settings:
    n = EXAMPLES[name][PROFILE == "long"]
    n = int(os.environ.get("GRAPHMEND_FUZZ_EXAMPLES", n)) if name != "inductor" else n
    return settings(max_examples=n, deadline=None, database=None, derandomize=PROFILE != "long",
                    suppress_health_check=list(HealthCheck), print_blob=True)


# ================================================================================ programs

HEADER = '''import logging
import sys
import warnings

import torch

logger = logging.getLogger("gm.prop")


class GmError(Exception):
    pass


def helper(v):
    return v * 2 + 1

'''

BASES = ("x", "y", "z")
TARGETS = ("x", "z")
# tensor expressions a branch assigns or returns ({b}: a tensor name)
PURE = ["{b} * 2", "{b} + 1", "{b} - 0.5", "{b} / 2", "-{b}", "{b}.abs()", "{b}.neg()",
        "torch.clamp({b}, min=-1.0, max=1.0)", "{b}.clamp(min=0)", "torch.zeros_like({b})",
        "{b}.masked_fill({b} > 0, 0)", "{b}.masked_fill(y > 0, 0)", "{b}.clone()", "{b}.detach()",
        "{b}.float()", "{b}.to(torch.float16)", "{b}.sum()", "{b}.type_as(y)", "torch.nan_to_num({b})",
        "{b}.relu()", "{b}.exp()", "torch.sqrt({b})", "{b}[0]", "{b}.reshape(-1)", "{b}.unsqueeze(0)",
        "{b} + y", "torch.maximum({b}, y)", "{b}.contiguous()", "{b}", "torch.exp({b})",
        "{b}.masked_fill(torch.isnan({b}), 0.0)"]
IMPURE = ["helper({b})"]
# {t} passed through a dtype- and shape-preserving op (the SAFE shape, given a float prefix)
PRESERVING = ["{t}.clone()", "{t}.detach()", "{t}.contiguous()", "{t}.type_as({t})", "{t}.masked_fill({t} > 0, 0)",
              "{t}.masked_fill(torch.isnan({t}), -1.5)", "{t}.masked_fill({t} < 1, float('-inf'))",
              "torch.clamp({t}, min=-1.0, max=1.0)", "torch.clamp({t}, min=-lim, max=lim)", "{t}.clamp(max=7e4)",
              "torch.nan_to_num({t})", "{t}.abs()", "{t}.relu()", "torch.exp({t})", "{t}.sqrt()", "{t}.neg()",
              "{t}.masked_fill({t} > 0, 1e5)", "{t}.masked_fill(~({t} > 0), True)", "torch.tanh({t})",
              "{t}.clamp(min=torch.finfo({t}.dtype).min + 1, max=torch.finfo({t}.dtype).max - 1000)"]
FLOAT_TESTS = ["{t}.dtype == torch.float16", "{t}.dtype == torch.float32", "{t}.is_floating_point()",
               "{t}.dtype in (torch.float16, torch.bfloat16)", "torch.is_floating_point({t})",
               "{t}.dtype != torch.float16", "not {t}.is_floating_point()", "{t}.dtype == torch.int64"]
LIMITS = ["torch.finfo({t}.dtype).max - 1000", "torch.finfo(torch.float32).max - 1000", "1e4", "x.shape[0] / 2"]
# single-element conditions ({b}: a tensor name, {k}: a number)
DD = ["{b}.sum() > {k}", "{b}.abs().max() > {k}", "{b}.float().mean() < {k}", "torch.isnan({b}).any()",
      "torch.isinf({b}).any()", "({b} > {k}).all()", "({b} > {k}).any()", "{b}.sum()",
      "torch.isfinite({b}).all()", "x.sum() > y.sum()", "{b}.max() == {b}.min()", "{b}.sum() != {b}.sum()"]
MULTI = ["{b} > {k}", "{b}"]  # may hold several elements: declined (Python raises)
STATIC = ["x.dtype == torch.float32", "x.dtype != torch.float16", "x.dim() > 0", "x.is_floating_point()",
          "not x.is_floating_point()", "x.numel() > 2", "x.dtype in (torch.float16, torch.bfloat16)",
          "x.dtype == torch.float16", "y.dim() == x.dim()"]
KS = ["0", "1", "-1", "2.5", "1e4", "0.5"]
EXCEPTIONS = ["ValueError", "RuntimeError", "TypeError", "OverflowError", "KeyError", "GmError",
              "AssertionError", "ZeroDivisionError"]
MESSAGES = ['"gm: bad input"', 'f"gm: shape {tuple(x.shape)}"', 'f"gm: {x.dtype} n={x.numel()}"',
            '"gm: two\\nlines"', 'f"gm: value {x.sum()}"', '"gm: %s" % "fmt"', "", "'gm: ' + 'joined'",
            'f"gm: rows {x.shape[0]}"']
PRINT_ARGS = ['"gm"', "x.shape", "x", "x.sum()", 'f"s={x.sum():.2f}"', 'f"{x!r}"', "x.dtype",
              "len(x.shape)", "x[0]", 'f"n={x.numel()} {y}"', '"a%sb" % 1', "y.abs()", 'f"{x=}"',
              'f"{x.float().mean():>12.3e}|"', "None", "3.5"]
LOG_FORMS = ['"gm %s", x.shape', '"gm %s %d", x.dtype, 3', 'f"gm sum={x.sum():.3f} rows={x.dim()}"',
             '"gm plain"', '"gm %s", x', 'f"gm {y!r}"', '"gm %r", "q"']
LEVELS = ["debug", "info", "warning", "error", "critical"]
WARN_FORMS = ['"gm warn"', 'f"gm big {x.shape}"', 'f"gm s={x.sum()}"']
CATEGORIES = ["", ", UserWarning", ", RuntimeWarning", ", DeprecationWarning", ", FutureWarning"]


def _fill(t: str, draw) -> str:
    while "{b}" in t:
        t = t.replace("{b}", draw(st.sampled_from(BASES)), 1)
    while "{k}" in t:
        t = t.replace("{k}", draw(st.sampled_from(KS)), 1)
    return t


@st.composite
def tensor_expr(draw, impure: bool = False) -> str:
    t = draw(st.sampled_from(PURE + (IMPURE if impure else [])))
    if draw(st.integers(0, 4)) == 0:  # one level of nesting
        t = t.replace("{b}", "(" + _fill(draw(st.sampled_from(PURE)), draw) + ")", 1)
    return _fill(t, draw)


@st.composite
def condition(draw, multi: bool = True) -> str:
    dd = lambda: _fill(draw(st.sampled_from(DD + (MULTI if multi and draw(st.integers(0, 6)) == 0 else []))), draw)  # noqa: E731
    form = draw(st.integers(0, 11))
    if form <= 4:
        return dd()
    if form == 5:
        return f"{draw(st.sampled_from(STATIC))} and {dd()}"
    if form == 6:
        return f"{dd()} and {dd()}"
    if form == 7:
        return f"{dd()} or {dd()}"
    if form == 8:
        return f"not {dd()}"
    if form == 9:
        return f"{draw(st.sampled_from(STATIC))} or {dd()}"
    if form == 10:
        return f"0 < {_fill('{b}', draw)}.sum() < {draw(st.sampled_from(KS))}"
    return f"{draw(st.sampled_from(STATIC))} and ({dd()} or {dd()})"


def _block(lines: list[str], ind: str) -> list[str]:
    return [ind + ln for ln in lines]


@st.composite
def assign(draw, impure: bool = False) -> list[str]:
    return [f"{draw(st.sampled_from(TARGETS))} = {draw(tensor_expr(impure))}"]


@st.composite
def effect(draw) -> list[str]:
    kind = draw(st.sampled_from(["print", "log", "warn"]))
    if kind == "print":
        args = draw(st.lists(st.sampled_from(PRINT_ARGS), min_size=0, max_size=3))
        kw = draw(st.lists(st.sampled_from(['sep="|"', 'end="!\\n"', "file=sys.stderr", "flush=True",
                                            "file=sys.stdout"]), max_size=2, unique=True))
        if sum("file=" in k for k in kw) > 1:
            kw = [k for k in kw if "file=" not in k]
        return [f"print({', '.join(args + kw)})"]
    if kind == "log":
        level = draw(st.sampled_from(LEVELS))
        form = draw(st.sampled_from(LOG_FORMS))
        if draw(st.booleans()):
            return [f"logger.{level}({form})"]
        return [f"logger.log(logging.{level.upper()}, {form})"]
    msg = draw(st.sampled_from(WARN_FORMS))
    cat = draw(st.sampled_from(CATEGORIES))
    sl = draw(st.sampled_from(["", ", stacklevel=2"]))
    return [f"warnings.warn({msg}{cat}{sl})"]


@st.composite
def guard(draw) -> list[str]:
    c = draw(condition())
    exc = draw(st.sampled_from(EXCEPTIONS))
    msg = draw(st.sampled_from(MESSAGES))
    form = draw(st.integers(0, 7))
    if form >= 6:  # a flag bound first, a Python bool or a tensor (pytorch-crf's `not bf and m.all()`)
        dd = lambda: _fill(draw(st.sampled_from(DD)), draw)  # noqa: E731
        flag = f"{draw(st.sampled_from(STATIC))} {draw(st.sampled_from(['and', 'or']))} {dd()}"
        test = "not gm_flag" if form == 6 else f"not gm_flag and {dd()}"
        return [f"gm_flag = {flag}", f"if {test}:", f"    raise {exc}({msg})"]
    if form == 0:
        return [f"assert {c}" + (f", {msg}" if msg else "")]
    if form == 1:
        return [f"if not ({c}):", f"    raise {exc}({msg})"]
    if form == 2:
        return [f"if {c}:", f"    raise {exc}"]
    return [f"if {c}:", f"    raise {exc}({msg})"]


@st.composite
def where_stmt(draw, depth: int = 0) -> list[str]:
    """An if on a tensor condition that assigns (else or not), a ternary, an elif chain, or a
    nested if."""
    impure = draw(st.integers(0, 5)) == 0
    form = draw(st.integers(0, 11))
    c = draw(condition())
    if form == 11:  # a flag bound first, a Python bool or a tensor, then the branch on it
        flag = f"{draw(st.sampled_from(STATIC))} {draw(st.sampled_from(['and', 'or']))} " \
               f"{_fill(draw(st.sampled_from(DD)), draw)}"
        body_lines = [ln for _ in range(draw(st.integers(1, 2))) for ln in draw(assign(impure))]
        test = draw(st.sampled_from(["gm_cond", "not gm_cond", f"gm_cond and {c}"]))
        return [f"gm_cond = {flag}", f"if {test}:", *_block(body_lines, "    ")]
    body = lambda: [ln for _ in range(draw(st.integers(1, 2))) for ln in draw(assign(impure))]  # noqa: E731
    if form <= 3:
        out = [f"if {c}:", *_block(body(), "    ")]
        if form <= 1:
            out += ["else:", *_block(body(), "    ")]
        return out
    if form == 4:
        t = draw(st.sampled_from(TARGETS))
        return [f"{t} = {draw(tensor_expr(impure))} if {c} else {draw(tensor_expr(impure))}"]
    if form == 5:
        out = [f"if {c}:", *_block(body(), "    "), f"elif {draw(condition())}:", *_block(body(), "    ")]
        if draw(st.booleans()):
            out += ["else:", *_block(body(), "    ")]
        return out
    if form == 6 and depth < 2:
        inner = draw(where_stmt(depth + 1))
        out = [f"if {c}:", *_block(inner, "    ")]
        if draw(st.booleans()):
            out += ["else:", *_block(body(), "    ")]
        return out
    if form == 7:  # gated effects
        effs = [ln for _ in range(draw(st.integers(1, 2))) for ln in draw(effect())]
        return [f"if {c}:", *_block(effs, "    ")]
    if form in (8, 9):  # the SAFE shape: a float prefix, one side the other passed through an op
        t = draw(st.sampled_from(TARGETS))
        pres = lambda: draw(st.sampled_from(PRESERVING)).replace("{t}", t)  # noqa: E731
        pre = draw(st.sampled_from(FLOAT_TESTS)).replace("{t}", t) + " and " if draw(st.integers(0, 4)) else ""
        cond = draw(condition(multi=False))
        out = [f"if {pre}({cond}):" if pre and " or " in cond else f"if {pre}{cond}:"]
        rhs = pres()
        if "lim" in rhs.replace("limit", ""):
            out.append("    lim = " + draw(st.sampled_from(LIMITS)).replace("{t}", t))
        out.append(f"    {t} = {rhs}")
        if form == 9 and "lim" not in rhs:
            out += ["else:", f"    {t} = {pres()}"]
        return out
    return [f"if {c}:", *_block(body(), "    ")]


@st.composite
def statements(draw, kinds: tuple, depth: int = 0) -> list[str]:
    out: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(kinds))
        if kind == "where":
            s = draw(where_stmt())
        elif kind == "guard":
            s = draw(guard())
        elif kind == "effect":
            s = draw(effect())
        else:
            s = draw(assign())
        if draw(st.integers(0, 6)) == 0 and depth == 0:
            s = [f"for _i in range({draw(st.integers(1, 2))}):", *_block(s, "    ")]
        out += s
    return out


@st.composite
def ending(draw, where: bool) -> list[str]:
    if where and draw(st.integers(0, 2)) == 0:
        c = draw(condition())
        a, b = draw(tensor_expr(draw(st.integers(0, 5)) == 0)), draw(tensor_expr())
        form = draw(st.integers(0, 2))
        if form == 0:
            return [f"if {c}:", f"    return {a}", f"return {b}"]
        if form == 1:
            return [f"if {c}:", f"    return {a}", "else:", f"    return {b}"]
        return [f"return {a} if {c} else {b}"]
    return [f"return {draw(st.sampled_from(['x', 'z', '(x, z)', 'y']))}"]


@st.composite
def programs(draw, kinds: tuple) -> str:
    stmts, end = draw(statements(kinds)), draw(ending("where" in kinds))
    src = HEADER
    if draw(st.integers(0, 3)) == 0:  # the sites in a helper that f calls (an inlined frame)
        src += "\ndef g(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor):\n"
        src += "\n".join(_block(stmts + ["return x, z"], "    ")) + "\n\n"
        body = ["z = x.clone()", "x, z = g(x, y, z)", *end]
    else:
        body = ["z = x.clone()", *stmts, *end]
    return src + "\ndef f(x: torch.Tensor, y: torch.Tensor):\n" + "\n".join(_block(body, "    ")) + "\n"


# ================================================================================ inputs

DTYPES = ["float32", "float16", "bfloat16", "int64", "bool"]
SHAPES = [(), (0,), (1,), (3, 4)]
FLOATS = [0.0, -0.0, 1.0, -1.0, 2.5, -3.0, 0.5, float("nan"), float("inf"), float("-inf"), 1e4,
          70000.0, 1e-8]


@st.composite
def tensor_spec(draw, dtypes=DTYPES, shapes=SHAPES) -> tuple:
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(st.sampled_from(shapes))
    n = math.prod(shape)
    if dtype == "bool":
        vals = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    elif dtype == "int64":
        vals = draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n))
    else:
        vals = draw(st.lists(st.sampled_from(FLOATS) | st.floats(-10, 10, width=32), min_size=n,
                             max_size=n))
    return dtype, list(shape), vals


@st.composite
def input_pairs(draw, dtypes=DTYPES, shapes=SHAPES, n=(1, 2)) -> list:
    out = []
    for _ in range(draw(st.integers(*n))):
        x = draw(tensor_spec(dtypes, shapes))
        y = x if draw(st.integers(0, 2)) == 0 else draw(tensor_spec(dtypes, shapes))
        out.append([x, y])
    return out


def make(spec) -> torch.Tensor:
    dtype, shape, vals = spec
    if dtype in ("bool", "int64"):
        return torch.tensor(vals, dtype=getattr(torch, dtype)).reshape(shape)
    return torch.tensor(vals, dtype=torch.float64).to(getattr(torch, dtype)).reshape(shape)


# ================================================================================ observing


@dataclass
class Observed:
    result: object = None
    error: Optional[tuple] = None  # (type name, message)
    error_line: str = ""  # the source line of the mended module the error left from
    user_error: bool = False  # raised by the program's own guard ("gm: ..." messages, or a bare class)
    stdout: str = ""
    stderr: str = ""
    records: list = field(default_factory=list)
    warns: list = field(default_factory=list)


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.items = []

    def emit(self, record):
        if record.name.startswith("gm."):
            self.items.append((record.name, record.levelname, record.getMessage()))


def observe(fn, args, modfile: str = "") -> Observed:
    obs = Observed()
    h = _Records()
    root = logging.getLogger()
    old = root.level
    root.addHandler(h)
    root.setLevel(logging.DEBUG)
    out, err = io.StringIO(), io.StringIO()
    try:
        with warnings.catch_warnings(record=True) as w, contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            warnings.simplefilter("always")
            try:
                obs.result = fn(*args)
            except Exception as e:  # noqa: BLE001 - compared, not handled
                msg = str(e)
                obs.error = (type(e).__name__, msg)
                obs.user_error = msg.startswith(("gm:", "'gm:")) or msg == ""
                if modfile:
                    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == modfile]
                    obs.error_line = _statement_at(modfile, frames[-1].lineno) if frames else ""
        obs.warns = [(x.category.__name__, str(x.message)) for x in w
                     if "/torch/" not in x.filename.replace("\\", "/")]
    finally:
        root.removeHandler(h)
        root.setLevel(old)
    obs.stdout, obs.stderr, obs.records = out.getvalue(), err.getvalue(), h.items
    return obs


def same_value(a, b, tol: float = 0.0) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype.is_floating_point:
            if not torch.equal(a.isnan(), b.isnan()):
                return False
            an, bn = a.nan_to_num(0.0, 0.0, 0.0), b.nan_to_num(0.0, 0.0, 0.0)
            if tol:
                return torch.equal(a.isinf(), b.isinf()) and torch.allclose(an.double(), bn.double(),
                                                                           rtol=tol, atol=tol)
            return torch.equal(a.isinf(), b.isinf()) and torch.equal(an, bn) and \
                torch.equal(a.signbit() | a.isnan(), b.signbit() | b.isnan())
        return torch.equal(a, b)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same_value(x, y, tol) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _grads(fn, args) -> Optional[list]:
    """The gradients of the sum of `fn`'s floating-point tensor outputs with respect to its
    floating-point arguments (None: it raised, or nothing to differentiate)."""
    leaves = [a.detach().clone().requires_grad_(a.is_floating_point()) for a in args]
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            out = fn(*leaves)
            outs = out if isinstance(out, (tuple, list)) else [out]
            total = [o.sum() for o in outs if isinstance(o, torch.Tensor) and o.requires_grad]
            if not total:
                return None
            grads = torch.autograd.grad(sum(total), [a for a in leaves if a.requires_grad], allow_unused=True)
    except Exception:  # noqa: BLE001 - an error is compared by the value checks, not here
        return None
    return [None if g is None else g.detach() for g in grads]


def grad_differences(orig_f, safe_f, args) -> str:
    """How the safe mend's gradients differ from the original's ("" when they do not): a safe
    mend is the same program under autograd too (a torch.where side that is nan where it is not
    taken keeps the value and poisons the gradient, realcode round 7)."""
    if not any(a.is_floating_point() for a in args):
        return ""
    want, got = _grads(orig_f, args), _grads(safe_f, args)
    if want is None or got is None:
        return ""
    for i, (w, g) in enumerate(zip(want, got)):
        if w is None and g is None:
            continue
        w = torch.zeros_like(g) if w is None else w  # not used: a zero gradient
        g = torch.zeros_like(w) if g is None else g
        if w.shape != g.shape or not torch.equal(torch.nan_to_num(w, nan=123.0), torch.nan_to_num(g, nan=123.0)):
            return f"gradient of argument {i}: {w.tolist()} != {g.tolist()}"
    return ""


def differences(want: Observed, got: Observed, compiled: bool = False, tol: float = 0.0) -> list[str]:
    """How `got` differs from `want` (the original in eager mode). Under compile an error that
    torch raised (not the program's own guard) may be worded or typed differently by Dynamo:
    then only "it raised" is compared."""
    out = []
    if (want.error is None) != (got.error is None):
        out.append(f"error {want.error} != {got.error}")
    elif want.error is not None:
        if want.error != got.error and (not compiled or want.user_error or got.user_error):
            out.append(f"error {want.error} != {got.error}")
    elif not same_value(want.result, got.result, tol):
        out.append(f"result {_show(want.result)} != {_show(got.result)}")
    for what in ("stdout", "stderr", "records", "warns"):
        a, b = getattr(want, what), getattr(got, what)
        if want.error is not None and compiled and not want.user_error:
            continue  # effects before a torch error that Dynamo raises at trace time
        if a != b:
            out.append(f"{what} {a!r} != {b!r}")
    return out


def _show(v) -> str:
    if isinstance(v, torch.Tensor):
        return f"tensor({v.tolist()}, dtype={v.dtype}, shape={tuple(v.shape)})"
    if isinstance(v, tuple):
        return "(" + ", ".join(_show(x) for x in v) + ")"
    return repr(v)


# ================================================================================ mending


def load(src: str, stem: str):
    return load_module(src, Path(_TMP), f"prop_{stem}")


PROBE = '''

_GM_PROBE = []


def _gm_meta(v):
    if isinstance(v, torch.Tensor):
        return ("t", v.dtype, tuple(v.shape))
    if isinstance(v, tuple):
        return tuple(_gm_meta(e) for e in v)
    return ("py", type(v).__name__)


def _gm_probe_where(c, a, b):
    _GM_PROBE.append(("where", _gm_meta(c), _gm_meta(a), _gm_meta(b)))
    return torch.where(c, a, b)


def _gm_probe_cond(c, t, f):
    outs = []
    for fn in (t, f):
        try:
            outs.append(_gm_meta(fn()))
        except Exception as e:
            outs.append(("raised", type(e).__name__))
    _GM_PROBE.append(("cond", _gm_meta(c), *outs))
    return torch.cond(c, t, f)
'''


def probed(text: str) -> str:
    """The mended text with its torch.where / torch.cond calls recorded (types and shapes)."""
    head, sep, tail = text.rpartition("# --- end graphmend runtime ---\n")  # after an inline block
    tail = tail.replace("torch.where(", "_gm_probe_where(").replace("torch.cond(", "_gm_probe_cond(")
    return head + sep + tail + PROBE


def _rank(m) -> tuple:
    if isinstance(m, tuple) and m and m[0] == "t":
        return (m[1], len(m[2]))
    if isinstance(m, tuple) and m and isinstance(m[0], tuple):
        return tuple(_rank(e) for e in m)
    return (m,)


def _statement_at(path: str, lineno: int) -> str:
    """The source of the innermost simple statement of `path` holding line `lineno` (a mend may
    wrap one statement over several lines: the error's line alone may not show the call)."""
    text = Path(path).read_text(encoding="utf-8")  # closed at once: an open file warns when collected
    best = None
    for n in ast.walk(ast.parse(text)):
        if isinstance(n, ast.stmt) and not hasattr(n, "body") and n.lineno <= lineno <= (n.end_lineno or n.lineno):
            best = n
    return (ast.get_source_segment(text, best) or "") if best is not None else ""


# Errors of torch's tracer: torch.cond could not trace a branch at all (a graph break in it). No
# caveat admits that: it raises on every call, whatever the input (realcode round 6, torchcde).
UNTRACEABLE = frozenset({"UserError", "Unsupported", "UncapturedHigherOrderOpError", "InternalTorchDynamoError"})


def premises_broken(records: list, error_line: str, error: Optional[tuple] = None) -> set[str]:
    """Which of the unsafe fixes' stated caveats held on this input ("cond-untraceable", which
    no reason admits, when torch.cond could not trace a branch)."""
    if error is not None and error[0] in UNTRACEABLE:
        return {"cond-untraceable"}
    out = set()
    for rec in records:
        if rec[0] == "where":
            _, c, a, b = rec
            if a[0] != "t" or b[0] != "t" or a[1:] != b[1:]:
                out.add("promote/broadcast")
        elif rec[0] == "cond":
            _, c, t, f = rec
            if "raised" in (t[0] if t else "", f[0] if f else ""):
                out.add("cond-branch-raises")
            elif _rank(t) != _rank(f):
                out.add("cond-dtype-rank")
            elif t != f:
                out.add("cond-shape")
    if error_line and ("_gm_probe_where(" in error_line or "torch.where(" in error_line):
        out.add("where-side-raises")
    if error_line and ("_gm_probe_cond(" in error_line or "torch.cond(" in error_line):
        out.add("cond-branch-raises")
    return out


def allowed_by(reasons: list[str]) -> set[str]:
    """The differences the applied unsafe fixes' reasons admit."""
    out = set()
    for r in reasons:
        if "broadcasts and promotes" in r:
            out.add("promote/broadcast")
        if "path not taken" in r:
            out.add("where-side-raises")
        if "same dtype and rank" in r:
            out |= {"cond-dtype-rank"}
        if "traces both branches" in r:
            out |= {"cond-branch-raises", "cond-shape"}
        if "module set-up" in r:
            out.add("buffer")
    return out


@dataclass
class Case:
    src: str
    inputs: list
    safe: str = ""
    unsafe: str = ""
    safe_applied: list = field(default_factory=list)  # (code, applicability)
    unsafe_reasons: list = field(default_factory=list)
    remaining: list = field(default_factory=list)  # codes left after the safe mends


BREAK_CODES = ("GM101", "GM102", "GM103", "GM201", "GM301", "GM401", "GM402", "GM403")


def mend_case(src: str, inputs: list) -> Case:
    case = Case(src, inputs)
    s = fix_source(src, settings=Settings(scope="module"), unsafe=False)
    u = fix_source(src, settings=Settings(scope="module"), unsafe=True)
    case.safe, case.unsafe = s.text, u.text
    case.safe_applied = [(f.code, f.applicability.name) for f in s.applied]
    case.unsafe_reasons = sorted({f.decline_reason or "" for f in u.applied
                                  if f.applicability is Applicability.UNSAFE})
    case.remaining = sorted({f.code for f in s.remaining if f.code in BREAK_CODES})
    STATS["programs"] += 1
    STATS["mends safe"] += len(s.applied)
    STATS["mends unsafe"] += sum(f.applicability is Applicability.UNSAFE for f in u.applied)
    STATS["declined"] += sum(f.applicability is Applicability.NONE for f in u.remaining
                             if f.code in ("GM101", "GM102", "GM103", "GM201", "GM301"))
    return case


def _fail(kind: str, case: Case, detail: str, args_spec) -> str:
    FAILURES.append({"kind": kind, "src": case.src, "inputs": [args_spec], "detail": detail})
    STATS[f"mismatch {kind}"] += 1
    return f"[{kind}] {detail}"


def check_case(case: Case, backends=("eager",), tol: float = 0.0) -> list[str]:
    """Every difference that is a bug (safe: any; unsafe: one its reasons do not cover)."""
    problems = []
    orig = load(case.src, "orig")
    safe = load(case.safe, "safe") if case.safe != case.src else orig
    unsafe = load(case.unsafe, "unsafe") if case.unsafe != case.safe else None
    unsafe_p = load(probed(case.unsafe), "probe") if unsafe is not None else None
    for spec in case.inputs:
        args = [make(s) for s in spec]
        want = observe(orig.f, [a.clone() for a in args])
        STATS["inputs"] += 1
        got = observe(safe.f, [a.clone() for a in args])
        d = differences(want, got)
        if d:
            problems.append(_fail("safe-eager", case, "; ".join(d), spec))
            continue
        if safe is not orig:
            d = grad_differences(orig.f, safe.f, args)
            if d:
                problems.append(_fail("safe-grad", case, d, spec))
                continue
        # the unsafe mends, in eager mode, with their where/cond calls probed
        if unsafe_p is not None:
            unsafe_p._GM_PROBE.clear()
            got_u = observe(unsafe_p.f, [a.clone() for a in args], unsafe_p.__file__)
            d = differences(want, got_u)
            if d:
                broken = premises_broken(unsafe_p._GM_PROBE, got_u.error_line, got_u.error)
                if broken & allowed_by(case.unsafe_reasons):
                    STATS["unsafe differences covered by the reason"] += 1
                else:
                    problems.append(_fail("unsafe-eager", case, "; ".join(d) + f" (caveats that held: "
                                          f"{sorted(broken)}; reasons: {case.unsafe_reasons})", spec))
        for backend in backends:
            problems += _check_compiled(case, orig, safe, unsafe, want, args, spec, backend, tol)
    return problems


def _check_compiled(case, orig, safe, unsafe, want, args, spec, backend, tol) -> list[str]:
    problems = []
    torch._dynamo.reset()
    c_safe = Counter(backend)
    got = observe(torch.compile(safe.f, backend=c_safe), [a.clone() for a in args])
    STATS[f"compiled runs ({backend})"] += 1
    d = differences(want, got, compiled=True, tol=tol)
    c_orig = None
    if d or (got.error is None and safe is not orig):
        torch._dynamo.reset()
        c_orig = Counter(backend)
        got_o = observe(torch.compile(orig.f, backend=c_orig), [a.clone() for a in args])
        if d and differences(want, got_o, compiled=True, tol=tol) == d:
            STATS["compile differences torch makes on the original too"] += 1  # not the mend's
            d = []
        elif d and _dynamo_assert(want, got, case.safe):
            STATS["asserts Dynamo compiled into RuntimeError"] += 1
            d = []
        elif d and _traced_first(want, got):
            STATS["trace errors ahead of a mended check or message (documented)"] += 1
            d = []
    if d:
        problems.append(_fail(f"safe-compiled-{backend}", case, "; ".join(d), spec))
    elif got.error is None and safe is not orig and not case.remaining and c_orig is not None:
        # nothing left that breaks: one graph, and never more than the original had
        STATS["graph counts checked"] += 1
        if len(c_safe.graphs) > max(1, len(c_orig.graphs)):
            problems.append(_fail("graphs", case, f"nothing left to break on, yet {len(c_safe.graphs)} "
                                  f"graphs ({len(c_orig.graphs)} before mending)", spec))
        elif len(c_safe.graphs) > 1:
            bad = _breaks_at_mended_lines(safe, args)
            if bad:
                problems.append(_fail("graphs", case, f"{len(c_safe.graphs)} graphs after mending; the "
                                      f"mended code breaks: {bad}", spec))
            else:  # e.g. a branch on a value the analysis cannot prove a tensor: not reported, left alone
                STATS["breaks GraphMend does not report (left alone)"] += 1
    if unsafe is not None and not d:
        torch._dynamo.reset()
        got_u = observe(torch.compile(unsafe.f, backend=Counter(backend)), [a.clone() for a in args],
                        unsafe.__file__)
        du = differences(want, got_u, compiled=True, tol=tol)
        if du:
            STATS["unsafe differences under compile (recorded)"] += 1
    return problems


def _breaks_at_mended_lines(mod, args) -> list[str]:
    """Dynamo's graph breaks (torch._dynamo.explain) at lines the mends wrote."""
    torch._dynamo.reset()
    box = {}
    observe(lambda *a: box.setdefault("ex", torch._dynamo.explain(mod.f)(*a)), [a.clone() for a in args])
    torch._dynamo.reset()
    ex = box.get("ex")
    if ex is None:
        return []
    lines = Path(mod.__file__).read_text(encoding="utf-8").splitlines()
    out = []
    for r in ex.break_reasons:
        for fs in r.user_stack[-1:]:
            text = lines[fs.lineno - 1] if fs.filename == mod.__file__ and 0 < fs.lineno <= len(lines) else ""
            if any(k in text for k in ("graphmend.", "torch.where(", "torch.cond(", "torch.logical_")):
                out.append(f"{r.reason} at line {fs.lineno}: {text.strip()}")
    return out


def _traced_first(want: Observed, got: Observed) -> bool:
    """The documented difference of one graph: Dynamo traces the whole mended function before
    any of it runs, so code after a mended guard or message that cannot be traced for these
    inputs (a shape mismatch the guard would have reported first) fails to compile before the
    check raises or the message is emitted. The original raised too, just earlier."""
    return (want.error is not None and got.error is not None
            and (got.error[0] == "TorchRuntimeError" and "with fake tensors" in got.error[1]
                 or "\nfrom user code:\n" in got.error[1]))  # Dynamo's note on an error raised while tracing


def _dynamo_assert(want: Observed, got: Observed, text: str) -> bool:
    """Dynamo compiles an `assert <tensor>, msg` it traces into an in-graph check that raises
    RuntimeError(msg) (torch's behaviour, on any assert GraphMend leaves in place: one it
    declines); where the original broke the graph nearby, Dynamo ran that assert in Python
    instead. Not a difference the mends make."""
    tail = text.split("end graphmend runtime ---")[-1]
    return (want.error is not None and got.error is not None and want.error[0] == "AssertionError"
            and got.error == ("RuntimeError", want.error[1] or "assertion error")  # torch's text for a bare assert
            and "\n    assert " in tail.replace("        ", "    "))


# ================================================================================ the properties


def _run(src: str, inputs: list, backends=("eager",), tol: float = 0.0) -> None:
    case = mend_case(src, inputs)
    note(src)
    note("--- safe ---\n" + case.safe)
    note("--- unsafe ---\n" + case.unsafe)
    note(f"inputs: {json.dumps(inputs)}")
    problems = check_case(case, backends, tol)
    if not COLLECT:
        assert problems == [], "\n".join(problems)


@pytest.fixture(autouse=True)
def _quiet_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _body(src, inputs):
    _run(src, inputs)


def _inductor_body(src, inputs):
    """Inductor computes in other orders (and fp16 in fp32): a small tolerance, fp32/int/bool only."""
    _run(src, inputs, backends=("inductor",), tol=1e-5)


# name -> (strategies, body): the tests below, and benchmarks/fuzz.py's long runs
FUZZ_TARGETS = {
    "where": (lambda: (programs(("where", "where", "assign")), input_pairs()), _body),
    "trap": (lambda: (programs(("guard", "guard", "assign")), input_pairs()), _body),
    "defer": (lambda: (programs(("effect", "effect", "assign")), input_pairs()), _body),
    "mixed": (lambda: (programs(("where", "guard", "effect", "assign")), input_pairs()), _body),
    "inductor": (lambda: (programs(("where", "guard", "effect")),
                          input_pairs(dtypes=["float32", "int64", "bool"], n=(1, 1))), _inductor_body),
}


def _test(name: str):
    strategies, body = FUZZ_TARGETS[name]
    return budget(name)(given(*strategies())(body))


test_where_mends_keep_meaning = _test("where")
test_trap_mends_keep_meaning = _test("trap")
test_defer_mends_keep_meaning = _test("defer")
test_mixed_mends_keep_meaning = _test("mixed")
test_mends_keep_meaning_under_inductor = _test("inductor")
