"""Every rule example that is mended is RUN, original against mended: the promise behind
"Fixed N graph breaks" is checked, not assumed.

For each example with a fix (rules/*.py EXAMPLES), the text `fix_source` produces (whatever helper
mechanism it uses) is imported beside the original, and each compiled entry (a `@torch.compile`
function, or the `forward` of each nn.Module the example defines, in eval mode, same seed) is
called on inputs through its branches (normal, large, negative, nan, float16 overflow):

* eager, mended == original (result, exception type and message, log records, warnings, stdout);
* compiled with a counting backend, with `fullgraph=True` when the mend leaves nothing to break on
  (so any break left at a mended site fails the call): the same as the original in eager mode,
  and one graph;
* the original does break on at least one input (else the example proves nothing).
"""

from __future__ import annotations

import contextlib
import inspect
import io
import logging
import warnings

import pytest
import torch

from difftest import Counter, _equal, load_module
from graphmend.findings import Applicability
from graphmend.rewrite import fix_source
from graphmend.rules import MODULES

BREAK_CODES = ("GM101", "GM102", "GM103", "GM201", "GM301", "GM401", "GM402", "GM403", "GM407", "GM501")
# [Route] (GM601, GM605) and [masked] examples are modules and masks of their own shapes, which the inputs
# below do not fit: tests/test_rule_route.py, test_rule_grouped.py and test_rule_masked.py run each of them
# original vs mended (counting backend, fullgraph=True) on inputs made for them.
# one_hot: index tensors, tests/test_rule_one_hot.py; sdpa: query/key/value and backend flags, and the
# mend drops torch's FutureWarning by design, tests/test_rule_sdpa.py
# scalar_first: optimizer states, and the mend drops torch's deprecation warning by design,
# tests/test_rule_scalar_first.py
OWN_HARNESS = ("route", "masked", "grouped", "one_hot", "sdpa", "scalar_first")
CASES = [(m.__name__.rsplit(".", 1)[1], ex) for m in MODULES for ex in m.EXAMPLES
         if ex.fixed is not None and ex.codes and m.__name__.rsplit(".", 1)[1] not in OWN_HARNESS]


def variants():
    g = torch.Generator().manual_seed(0)
    base = torch.randn(2, 4, generator=g)
    nan = base.clone()
    nan[0, 0] = float("nan")
    b3 = torch.randn(2, 4, 3, generator=g)
    return {"normal": base, "large": base.abs() * 1e5 + 1, "negative": -base.abs() - 1, "nan": nan,
            "fp16": base.to(torch.float16), "fp16-overflow": (base * 1e5).to(torch.float16), "3d": b3,
            "3d-large": b3.abs() * 1e5 + 1}


class _AnyConfig:
    """`self.config.<anything>` of a module an example defines without a config: true."""

    def __getattr__(self, name):
        return True


def entries(mod):
    """(name, callable, number of tensor arguments) of the compiled entries of an example module."""
    out = []
    for name, obj in vars(mod).items():
        orig = getattr(obj, "_torchdynamo_orig_callable", None)
        if orig is not None and getattr(orig, "__module__", None) == mod.__name__:
            out.append((name, orig, _arity(orig)))
        elif isinstance(obj, type) and issubclass(obj, torch.nn.Module) and obj.__module__ == mod.__name__:
            torch.manual_seed(0)
            inst = obj()
            if "self.config" in inspect.getsource(obj) and not hasattr(inst, "config"):
                inst.config = _AnyConfig()
            if "self.gradient_checkpointing" in inspect.getsource(obj):
                inst.gradient_checkpointing = False
            inst.eval()
            out.append((name, inst, _arity(obj.forward) - 1))
    return sorted(out, key=lambda e: e[0])


def _arity(fn) -> int:
    return sum(1 for p in inspect.signature(fn).parameters.values()
               if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.items = []

    def emit(self, record):
        if not record.name.startswith(("torch", "filelock", "fsspec", "urllib3", "asyncio")):
            self.items.append((record.levelname, record.getMessage()))  # not the logger's name: modules differ


def observe(fn, *args):
    out, h, root = io.StringIO(), _Records(), logging.getLogger()
    old = root.level
    root.addHandler(h)
    root.setLevel(logging.DEBUG)
    result = error = None
    try:
        with warnings.catch_warnings(record=True) as w, contextlib.redirect_stdout(out):
            warnings.simplefilter("always")
            try:
                result = fn(*args)
            except Exception as e:  # noqa: BLE001 - compared, not handled
                error = (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        warns = [(x.category.__name__, str(x.message)) for x in w
                 if "/torch/" not in x.filename.replace("\\", "/")]
    finally:
        root.removeHandler(h)
        root.setLevel(old)
    return {"result": result, "error": error, "stdout": out.getvalue(), "records": h.items, "warnings": warns}


def same(a, b, unsafe: bool = False, compiled: bool = False) -> list[str]:
    """Differences a user would see. Where the original raised, a compiled run may raise the same
    error wrapped by Dynamo (TorchRuntimeError: it failed while tracing that op), and an unsafe
    mend may raise another error (its reason says so: torch.cond compiles on its first call)."""
    if a["error"] is not None and b["error"] is not None and a["error"] != b["error"] and (
            unsafe or compiled and b["error"][0] == "TorchRuntimeError"):
        b = {**b, "error": a["error"]}
    diffs = [k for k in ("error", "stdout", "records", "warnings") if a[k] != b[k]]
    if a["error"] is None and b["error"] is None and not _equal(a["result"], b["result"]):
        diffs.append("result")
    return [f"{k}: {a[k]!r} != {b[k]!r}" for k in diffs]


@pytest.fixture(autouse=True)
def _reset():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("rule,ex", CASES, ids=[f"{r}:{e.name}" for r, e in CASES])
def test_mended_example_runs_and_removes_its_break(rule, ex, tmp_path):
    res = fix_source(ex.source, unsafe=ex.unsafe)
    assert res.text != ex.source and res.applied
    assert all(f.applicability is not Applicability.NONE for f in res.applied)
    one_graph = not any(f.code in BREAK_CODES for f in res.remaining)
    load = lambda text, stem: entries(load_module(text, tmp_path, stem))  # noqa: E731 - fresh loggers each time
    names = [n for n, _, _ in load(ex.source, "o")]
    assert names, "the example defines no compiled entry to run"
    original_broke = False
    for vname, x in variants().items():
        for i, name in enumerate(names):
            (_, orig, n), = [e for e in load(ex.source, "o") if e[0] == name]
            (_, mended, _), = [e for e in load(res.text, "m") if e[0] == name]
            args = [x.clone() for _ in range(n)]
            want = observe(orig, *args)
            got = observe(mended, *[a.clone() for a in args])
            d = same(want, got, ex.unsafe)
            assert d == [], f"eager, {vname}: mended differs: {d}"
            # compiled (a fresh module, so once-only messages are emitted again)
            (_, mended_c, _), = [e for e in load(res.text, "c") if e[0] == name]
            torch._dynamo.reset()
            count = Counter()
            comp = observe(torch.compile(mended_c, backend=count, fullgraph=one_graph),
                           *[a.clone() for a in args])
            d = same(want, comp, ex.unsafe, compiled=True)
            assert d == [], f"compiled (fullgraph={one_graph}), {vname}: {d}"
            if one_graph and want["error"] is None:
                assert len(count.graphs) == 1, f"{vname}: {len(count.graphs)} graphs after mending"
            if not original_broke:
                (_, orig_c, _), = [e for e in load(ex.source, "oc") if e[0] == name]
                torch._dynamo.reset()
                if want["error"] is None:  # fullgraph raises at the original's first break
                    broke = observe(torch.compile(orig_c, backend=Counter(), fullgraph=True),
                                    *[a.clone() for a in args])
                    original_broke = broke["error"] is not None
    assert original_broke, "the original never broke on these inputs: the example proves nothing"
