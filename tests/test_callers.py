"""Parameters that only a caller shows to be tensors (analysis/callers.py).

Each case is analysed statically and run under Dynamo (`torch._dynamo.explain`): a helper with
unannotated parameters is reported exactly where Dynamo breaks in it, with the caller named and
no fix offered; called with Python numbers, or from code that is not compiled, it is not.
Across files (`graphmend check` of a package), in the cache, and in the editor's incremental
re-analysis.
"""

from __future__ import annotations

import logging
import os
import sys
import time

import torch

from difftest import load_module
from graphmend import scan
from graphmend.analysis import analyze_source
from graphmend.analysis.workspace import Workspace
from graphmend.cache import ScanCache
from graphmend.config import Settings
from graphmend.findings import Applicability
from graphmend.lsp import checker


def break_lines(fn, *args, path: str) -> set[int]:
    """The lines of `path` where Dynamo breaks, per explain (innermost frame in that file)."""
    torch._dynamo.reset()
    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
    try:
        ex = torch._dynamo.explain(fn)(*args)
    finally:
        torch._dynamo.reset()
    out = set()
    for r in ex.break_reasons:
        frames = [f for f in r.user_stack if os.path.samefile(f.filename, path)] if r.user_stack else []
        if frames:
            out.add(frames[-1].lineno)
    return out


def logged_break_lines(fn, *args, path: str) -> set[int]:
    """The lines of `path` where Dynamo breaks, per its graph-break log (innermost frame in that
    file). Unlike explain(), it sees a break inside a loop, after which Dynamo skips the frame."""
    import re

    import torch._dynamo.symbolic_convert  # noqa: F401 - creates the graph-break loggers

    records: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda r: records.append(r.getMessage())  # type: ignore[method-assign]
    torch._logging.set_logs(graph_breaks=True)
    logs = [logging.getLogger(n) for n in list(logging.root.manager.loggerDict) if n.endswith("__graph_breaks")]
    for log in logs:
        log.addHandler(handler)
    try:
        torch._dynamo.reset()
        torch.compile(fn, backend="eager")(*args)
    finally:
        for log in logs:
            log.removeHandler(handler)
        torch._logging.set_logs()
        torch._dynamo.reset()
    pattern = re.compile(r'File "' + re.escape(path) + r'", line (\d+)')
    return {int(found[-1]) for r in records if (found := pattern.findall(r))}


def sites(findings) -> set[tuple[str, int]]:
    return {(f.code, f.span.start.line) for f in findings}


HELPERS = """\
import torch


def clip(x, hi):
    if x > hi:
        return hi
    return x


def interp(t0, y0, t1, y1, t):
    assert t0 <= t <= t1, "out of order"
    return (t1 - t) / (t1 - t0) * y0 + (t - t0) / (t1 - t0) * y1


def outer(x):
    return inner(x * 2)


def inner(z):
    if z > 0:
        return z
    return -z


@torch.compile
def f(ts: torch.Tensor, y: torch.Tensor):
    a = clip(ts[0], 1.0)
    b = interp(ts[0], y, ts[1], y * 2, (ts[0] + ts[1]) * 0.5)
    return a + b + outer(ts[1])


@torch.compile
def numbers(y: torch.Tensor):
    return y * clip(0.5, 1.0) + interp(0.0, 1.0, 1.0, 2.0, 0.5)


def eager(ts: torch.Tensor):  # never compiled: what it passes puts nothing in scope
    return clip(ts[0], 1.0)
"""


def test_a_helper_is_reported_where_a_compiled_caller_passes_tensors(tmp_path):
    path = tmp_path / "helpers.py"
    path.write_text(HELPERS)
    found = analyze_source(HELPERS, str(path)).findings
    # clip's branch, interp's chained assert (Python takes the truth of `t0 <= t` first), and
    # inner's branch two calls away from f
    assert sites(found) == {("GM201", 5), ("GM301", 11), ("GM201", 20)}
    by_line = {f.span.start.line: f for f in found}
    assert "`x` is a tensor here: `f()` passes `ts[0]` (line 27)" in by_line[5].note
    assert "`t0`, `t1`, `t` are tensors here" in by_line[11].note  # y0, y1 are not read by the assert
    assert "`outer()` passes `x * 2` (line 16)" in by_line[20].note
    # no fix; where the rule has no mend for the site whoever calls (these three: a condition
    # that may hold several elements, a chained comparison), its own reason, as the walk of the
    # annotated helpers gives it, then the caller; not advice to annotate
    annotated = HELPERS.replace("def clip(x, hi)", "def clip(x: torch.Tensor, hi)").replace(
        "def interp(t0, y0, t1, y1, t)", "def interp(t0: torch.Tensor, y0, t1: torch.Tensor, y1, t: torch.Tensor)").replace(
        "def inner(z)", "def inner(z: torch.Tensor)")
    plain = {f.span.start.line: f for f in analyze_source(annotated, str(path)).findings}
    assert set(plain) == set(by_line)
    for line, fd in by_line.items():
        assert fd.applicability is Applicability.NONE and fd.fix_title is None
        assert plain[line].applicability is Applicability.NONE
        assert fd.decline_reason.startswith(plain[line].decline_reason + "; only a caller shows that ")
        assert "Annotate" not in fd.decline_reason
        assert fd.entry and fd.entry.startswith("f")
    # Dynamo agrees, line for line; with numbers nothing breaks
    mod = load_module(HELPERS, tmp_path, "helpers_run")
    ts, y = torch.tensor([0.2, 0.9]), torch.ones(3)
    assert break_lines(mod.f, ts, y, path=mod.__file__) == {5, 11, 20}
    assert break_lines(mod.numbers, y, path=mod.__file__) == set()


def test_numbers_or_an_uncompiled_caller_give_no_finding():
    only_numbers = HELPERS.replace("@torch.compile\ndef f(", "def f(")
    assert analyze_source(only_numbers, "helpers.py").findings == []


def test_an_annotated_parameter_keeps_its_plain_finding_and_fix():
    annotated = HELPERS.replace("def clip(x, hi):", "def clip(x: torch.Tensor, hi):")
    found = {f.span.start.line: f for f in analyze_source(annotated, "helpers.py").findings}
    assert found[5].code == "GM201"  # the plain walk's finding, as before (its own decline reason)
    assert "passes" not in (found[5].note or "") and not found[5].decline_reason.startswith("only a caller")
    assert sum(1 for f in analyze_source(annotated, "helpers.py").findings if f.span.start.line == 5) == 1


INTERP = """\
def linear_interp(t0, y0, t1, y1, t):
    assert t0 <= t <= t1, f"Incorrect time order: t0={t0}, t={t}, t1={t1}."
    return (t1 - t) / (t1 - t0) * y0 + (t - t0) / (t1 - t0) * y1
"""

SOLVER = """\
import torch
from torch import Tensor

from . import interp


class Solver(torch.nn.Module):
    def forward(self, y0: Tensor, ts: Tensor) -> Tensor:
        ys = [y0]
        for i in range(1, ts.shape[0]):
            ys.append(interp.linear_interp(t0=ts[i - 1], y0=ys[-1], t1=ts[i], y1=ys[-1] * 2,
                                           t=(ts[i - 1] + ts[i]) / 2))
        return torch.stack(ys)
"""


def _package(root):
    pkg = root / "solvepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "interp.py").write_text(INTERP)
    (pkg / "solver.py").write_text(SOLVER)
    return pkg


def test_across_files_the_finding_lands_in_the_callee_file(tmp_path, monkeypatch):
    pkg = _package(tmp_path)
    settings = Settings()
    files = [str(pkg / "interp.py"), str(pkg / "solver.py")]
    res = {os.path.basename(r.path): r for r in scan.check_files(files, settings, jobs=1)}
    assert sites(res["interp.py"].findings) == {("GM301", 2)}
    fd = res["interp.py"].findings[0]
    assert "solver.py:11" in fd.note and fd.entry == "Solver.forward"
    assert res["solver.py"].findings == []
    # interp.py alone has no caller; solver.py alone does not report in a file it was not asked about
    assert scan.check_files([files[0]], settings, jobs=1)[0].findings == []
    assert scan.check_files([files[1]], settings, jobs=1)[0].findings == []
    # Dynamo breaks there
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("solvepkg.solver", None)
    from solvepkg import solver
    ts = torch.linspace(0.0, 0.3, 3)
    assert break_lines(solver.Solver(), torch.ones(2), ts, path=str(pkg / "interp.py")) == {2}


# a caller with no entry of its own: only a forward in a third file reaches it
STEPS = """\
from . import interp


def midpoints(y0, ts):
    ys = [y0]
    for i in range(1, ts.shape[0]):
        ys.append(interp.linear_interp(t0=ts[i - 1], y0=ys[-1], t1=ts[i], y1=ys[-1] * 2,
                                       t=(ts[i - 1] + ts[i]) / 2))
    return ys
"""

RUNNER = """\
import torch

from .steps import midpoints


class Runner(torch.nn.Module):
    def forward(self, y0: torch.Tensor, ts: torch.Tensor) -> torch.Tensor:
        return torch.stack(midpoints(y0, ts))
"""


def test_a_caller_only_a_third_file_reaches_reveals_the_break(tmp_path, monkeypatch):
    """steps.midpoints has no entry: each file walks what its own entries reach, so it is walked
    in the second pass, after runner.py's forward is found to reach it; what it passes to
    interp.py's helper is then found, by `graphmend check` and by the editor's workspace index."""
    from graphmend.lsp.index import WorkspaceIndex

    pkg = _package(tmp_path)
    (pkg / "solver.py").unlink()  # its forward calls the helper itself
    (pkg / "steps.py").write_text(STEPS)
    (pkg / "runner.py").write_text(RUNNER)
    settings = Settings()
    files = [str(pkg / n) for n in ("interp.py", "steps.py", "runner.py")]
    res = {os.path.basename(r.path): r for r in scan.check_files(files, settings, jobs=1)}
    assert sites(res["interp.py"].findings) == {("GM301", 2)}
    assert res["interp.py"].findings[0].entry == "Runner.forward"
    assert "steps.py:7" in res["interp.py"].findings[0].note
    assert scan.check_files(files[:2], settings, jobs=1)[0].findings == []  # nothing reaches midpoints

    index = WorkspaceIndex()
    index.build([str(pkg)], settings, Workspace([str(tmp_path)]))
    shown = index.seeded_for(files[0], INTERP)
    assert [(f.code, f.span.start.line, label) for label, f in shown] == [("GM301", 2, "Runner.forward")]

    monkeypatch.syspath_prepend(str(tmp_path))  # Dynamo breaks there
    for m in ("solvepkg", "solvepkg.interp", "solvepkg.runner", "solvepkg.steps"):  # another test's package
        sys.modules.pop(m, None)
    from solvepkg import runner
    ts = torch.linspace(0.0, 0.3, 3)
    assert break_lines(runner.Runner(), torch.ones(2), ts, path=str(pkg / "interp.py")) == {2}


def test_a_save_that_reaches_an_unwalked_caller_has_it_walked(tmp_path):
    """The editor's index: runner.py first has no forward, so steps.midpoints is reached from
    nowhere and was not walked; a save that adds the forward names steps.py as unwalked, and
    its re-analysis (what did_save runs) reveals the helper's break in interp.py."""
    from graphmend.lsp.index import WorkspaceIndex

    pkg = _package(tmp_path)
    (pkg / "solver.py").unlink()
    (pkg / "steps.py").write_text(STEPS)
    idle = RUNNER.replace("class Runner(torch.nn.Module):", "class Runner:")
    (pkg / "runner.py").write_text(idle)
    settings, ws = Settings(), Workspace([str(tmp_path)])
    index = WorkspaceIndex()
    index.build([str(pkg)], settings, ws)
    interp, runner, steps = (str(pkg / n) for n in ("interp.py", "runner.py", "steps.py"))
    assert index.seeded_for(interp, INTERP) == [] and index.unwalked() == []

    (pkg / "runner.py").write_text(RUNNER)  # saved: Runner is a module again
    checked = checker.check(RUNNER, runner, 2, settings, ws, index.external(runner))
    assert index.update(runner, checked.scope, checked.symbols, checked.seeded, set(), checked.state.walked)
    assert sorted(index.unwalked()) == [interp, steps]  # midpoints, and the helper it calls
    index.reanalyse(index.unwalked(), settings, ws)
    assert index.unwalked() == []
    shown = index.seeded_for(interp, INTERP)
    assert [(f.code, f.span.start.line, label) for label, f in shown] == [("GM301", 2, "Runner.forward")]


def test_the_cache_keeps_them_and_a_changed_callee_is_read_again(tmp_path):
    pkg = _package(tmp_path)
    settings = Settings()
    files = [str(pkg / "interp.py"), str(pkg / "solver.py")]
    cache_dir = str(tmp_path / "cache")

    def run():
        cache = ScanCache(cache_dir, settings)
        out = {os.path.basename(r.path): sites(r.findings) for r in
               scan.check_files(files, settings, jobs=1, cache=cache)}
        cache.save()
        return out, cache

    cold, _ = run()
    warm, cache = run()
    assert warm == cold == {"interp.py": {("GM301", 2)}, "solver.py": set()} and cache.hits == 2
    time.sleep(0.01)
    (pkg / "interp.py").write_text(INTERP.replace("    assert t0 <= t <= t1", "    # assert t0 <= t <= t1"))
    changed, cache = run()
    assert changed == {"interp.py": set(), "solver.py": set()}
    assert cache.misses == 2  # interp.py itself, and solver.py that walked its function


def test_the_editor_follows_an_edit_of_the_caller(tmp_path):
    """The incremental re-analysis of an edit in the caller gives what a full check gives."""
    path = str(tmp_path / "helpers.py")
    settings, ws = Settings(), Workspace([str(tmp_path)])
    first = checker.check(HELPERS, path, 1, settings, ws, {})
    assert sites(first.findings) == {("GM201", 5), ("GM301", 11), ("GM201", 20)}
    # f now passes a number to clip (same line count: the incremental path)
    edited = HELPERS.replace("a = clip(ts[0], 1.0)", "a = clip(0.25, 1.0)  ")
    second = checker.check(edited, path, 2, settings, ws, {}, previous=first)
    assert second.rewalked is not None  # incremental
    assert sites(second.findings) == {("GM301", 11), ("GM201", 20)}
    full = checker.check(edited, path, 2, settings, Workspace([str(tmp_path)]), {})
    assert [(f.code, f.span, f.note) for f in second.findings] == [(f.code, f.span, f.note) for f in full.findings]
    back = checker.check(HELPERS, path, 3, settings, ws, {}, previous=second)
    assert sites(back.findings) == sites(first.findings)


METHODS = """\
import torch


class Block(torch.nn.Module):
    def forward(self, x: torch.Tensor, scale=2.0):
        y = self.gate(x, scale)
        return self.shift(y.sum(), y)

    def gate(self, v, s):
        if s > 1.0:  # s is the Python float forward passes: no break
            v = v * s
        if v > 0:  # v is forward's tensor
            return v
        return -v

    @staticmethod
    def shift(total, y):
        return y - 1 if total > 3 else y
"""


def test_methods_called_on_self(tmp_path):
    found = analyze_source(METHODS, str(tmp_path / "block.py")).findings
    assert sites(found) == {("GM201", 12), ("GM201", 18)}  # bound: self skipped; static: not
    notes = {f.span.start.line: f.note for f in found}
    assert "`v` is a tensor here: `forward()` passes `x` (line 6)" in notes[12]
    assert "`total` is a tensor here: `forward()` passes `y.sum()` (line 7)" in notes[18]
    mod = load_module(METHODS, tmp_path, "block_run")
    assert break_lines(mod.Block(), torch.ones(1), path=mod.__file__) == {12, 18}


def test_a_disabled_helper_is_not_walked_with_the_callers_arguments():
    text = HELPERS.replace("def clip(x, hi):", "@torch.compiler.disable\ndef clip(x, hi):")
    found = sites(analyze_source(text, "helpers.py").findings)
    assert ("GM201", 6) not in found  # clip runs eagerly: its branch does not break
    assert ("GM403", 28) in found  # the call of a disabled function does


DISPATCH = """\
import torch


def strict_spline(inputs, widths):
    if torch.min(inputs) < 0:
        raise ValueError("below the domain")
    return inputs * widths.sum()


def tailed_spline(inputs, widths, tail=1.0):
    inside = (inputs >= -tail) & (inputs <= tail)
    outside = ~inside
    out = torch.zeros_like(inputs)
    out[outside] = inputs[outside]
    out[inside] = inputs[inside] * widths[inside, 0]
    return out


class Coupling(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._cdf(x, x.abs() + 1)

    def _cdf(self, inputs, params):
        raise NotImplementedError


class Tailed(Coupling):
    def __init__(self, tails=True):
        super().__init__()
        self.tails = tails

    def _cdf(self, inputs, params):
        if self.tails:
            fn = tailed_spline
        else:
            fn = strict_spline
        return fn(inputs, params.unsqueeze(-1))
"""


def test_overrides_local_function_aliases_and_mask_names(tmp_path):
    """nflows' shape: `self._cdf` in the base class runs a subclass' override, which calls a spline
    through a local bound to one of two functions; the spline reads a boolean mask held in a name
    (`x[outside]`, `w[inside, 0]`). Each link was a miss; Dynamo breaks at every reported line."""
    found = analyze_source(DISPATCH, str(tmp_path / "dispatch.py")).findings
    assert sites(found) == {("GM301", 5), ("GM402", 14), ("GM402", 15)}
    mod = load_module(DISPATCH, tmp_path, "dispatch_run")
    x = torch.tensor([[-2.0, 0.5, 3.0, -0.25]])
    assert break_lines(mod.Tailed(True), x, path=mod.__file__) == {14, 15}
    assert break_lines(mod.Tailed(False), x.abs(), path=mod.__file__) == {5}


AUTOGRAD = """\
import torch


def _threshold(X, k):
    topk, _ = torch.topk(X, k=k, dim=-1)
    support = (topk > 0).sum(dim=-1).unsqueeze(-1)
    unsolved = (support == k).squeeze(-1)
    if torch.any(unsolved):
        X[unsolved] = X[unsolved] * 0.5
    return topk.sum(-1, keepdim=True) / support.clamp(min=1)


class Threshold(torch.autograd.Function):
    @classmethod
    def forward(cls, ctx, X, k=2):
        tau = cls._tau(X, k)
        return torch.clamp(X - tau, min=0)

    @classmethod
    def _tau(cls, X, k):
        return _threshold(X.clone(), k)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class Sparse(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return Threshold.apply(x, 2)
"""


def test_an_autograd_functions_forward_and_cls_methods_are_reached(tmp_path):
    """entmax's shape: the module calls `Function.apply`, whose classmethod forward calls
    `cls._tau`, which calls a helper with tensors; Dynamo traces all of it and breaks in the
    helper (the branch, and the mask read held in a name built with `.squeeze`)."""
    found = analyze_source(AUTOGRAD, str(tmp_path / "autograd.py")).findings
    assert sites(found) == {("GM201", 8), ("GM402", 9)}
    mod = load_module(AUTOGRAD, tmp_path, "autograd_run")
    assert break_lines(mod.Sparse(), torch.tensor([[1.0, 2.0, 3.0, -1.0]]), path=mod.__file__) == {8, 9}


REVERSIBLE = """\
import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.f = torch.nn.Linear(4, 4)
        self.g = torch.nn.Linear(2, 2)

    def forward(self, x):
        return x + self.f(x)

    def backward_pass(self, y, dy):
        y1, y2 = torch.chunk(y, 2, dim=-1)
        with torch.enable_grad():
            y1.requires_grad = True
            out = self.g(y1)
            torch.autograd.backward(out, dy[..., :2])
        return y.detach(), dy


class Reversible(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, blocks):
        for block in blocks:
            x = block(x)
        ctx.y = x.detach()
        ctx.blocks = blocks
        return x

    @staticmethod
    def backward(ctx, dy):
        y = ctx.y
        for block in ctx.blocks[::-1]:
            y, dy = block.backward_pass(y, dy)
        return dy, None


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(), Block()])

    def forward(self, x):
        return Reversible.apply(x, self.blocks)
"""


def test_an_autograd_functions_backward_and_a_method_only_one_class_defines_are_reached(tmp_path):
    """linformer's reversible layers: the Function's backward (which a compiled train step's
    `backward()` runs as a frame Dynamo compiles) calls `block.backward_pass(...)` on blocks held
    in `ctx`; `backward_pass` is a method of one class of the file only, so that is where the call
    goes. Dynamo breaks at the flag change and the nested backward, both found."""
    found = analyze_source(REVERSIBLE, str(tmp_path / "reversible.py")).findings
    assert sites(found) == {("GM405", 16), ("GM403", 18)}
    mod = load_module(REVERSIBLE, tmp_path, "reversible_run")
    net = mod.Net()

    def step(x):
        loss = net(x).sum()
        loss.backward()
        return loss.detach()

    x = torch.randn(3, 4, requires_grad=True)
    assert logged_break_lines(step, x, path=mod.__file__) >= {16, 18}


GENERIC_CALLS = """\
import torch


class A:
    def step(self, x):
        return x.item()

    def scale(self, x):
        return float(x)


class B:
    def scale(self, x):
        return int(x)


class M(torch.nn.Module):
    def forward(self, x, opt, other):
        opt.step(x)
        other.scale(x)
        return x
"""


def test_a_method_name_of_a_common_protocol_or_of_several_classes_is_not_followed():
    """`opt.step(x)` (an optimizer's protocol) and `other.scale(x)` (two classes define `scale`)
    say nothing of which class the value is an instance of: neither body is reached."""
    assert analyze_source(GENERIC_CALLS, "generic.py").findings == []


BASE_LOSS = """\
import torch


class BaseLoss(torch.nn.Module):
    def forward(self, emb: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return self.compute_loss(emb, labels)

    def compute_loss(self, emb, labels):
        raise NotImplementedError
"""

PAIR_LOSS = """\
import torch

from losspkg.base import BaseLoss


class PairLoss(BaseLoss):
    def compute_loss(self, emb, labels):
        sims = emb.matmul(emb.t())
        same = labels.unsqueeze(0) == labels.unsqueeze(1)
        low, high = None, None
        low = same & (sims > 0)
        return sims[low].sum()
"""


def _write_package(pkg, modules: dict[str, str]):
    """A package directory with `modules` (name -> text); (its path, the modules' paths)."""
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, text in modules.items():
        (pkg / name).write_text(text)
    return pkg, [str(pkg / name) for name in modules]


def test_self_calls_reach_overrides_in_other_files(tmp_path, monkeypatch):
    """pytorch-metric-learning's shape: the base class in one file calls `self.compute_loss`,
    each loss overrides it in its own file (and holds its mask in a name first bound to None).
    graphmend check over the package reaches the override; Dynamo breaks there."""
    pkg, files = _write_package(tmp_path / "losspkg", {"base.py": BASE_LOSS, "pair.py": PAIR_LOSS})
    res = {os.path.basename(r.path): sites(r.findings) for r in scan.check_files(files, Settings(), jobs=1)}
    assert res == {"base.py": set(), "pair.py": {("GM402", 12)}}
    # one file alone: the base does not know its subclasses, the subclass is not reached
    assert scan.check_files([files[1]], Settings(), jobs=1)[0].findings == []
    monkeypatch.syspath_prepend(str(tmp_path))
    from losspkg.pair import PairLoss
    emb, labels = torch.randn(4, 3), torch.tensor([0, 0, 1, 1])
    assert break_lines(PairLoss(), emb, labels, path=str(pkg / "pair.py")) == {12}


SOLVER_BASE = """\
import torch


class BaseSolver(torch.nn.Module):
    def __init__(self, fast):
        super().__init__()
        self.step_method = self.fast_step if fast else self.slow_step

    def forward(self, t: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.step_method(y, t[0])

    def fast_step(self, y: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self._advance(y, t)

    def slow_step(self, y: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self._advance(y * 1.0, t)

    def _advance(self, y, t):
        raise NotImplementedError
"""

SOLVER_SUB = """\
import torch

from stepper.base import BaseSolver


class Sub(BaseSolver):
    def __init__(self, fast, limit=0.5):
        super().__init__(fast)
        self.limit = limit

    def _advance(self, y, t):
        if t > self.limit:
            return y * 2
        return y
"""


def test_a_method_held_in_an_attribute_and_what_a_base_in_another_file_passes(tmp_path, monkeypatch):
    """pytorch-metric-learning's and torchdiffeq's shape: the base class calls a method through an
    attribute bound to one of two methods (`self.loss_method = self.a if c else self.b`), which
    calls `self._advance(y, t)` with tensors; a subclass in another file overrides `_advance`
    with parameters nothing in it shows to be tensors. The override is reached and walked with
    what the base passes; Dynamo breaks there, whichever method the attribute holds."""
    pkg, files = _write_package(tmp_path / "stepper", {"base.py": SOLVER_BASE, "sub.py": SOLVER_SUB})
    res = {os.path.basename(r.path): r.findings for r in scan.check_files(files, Settings(), jobs=1)}
    assert sites(res["base.py"]) == set()
    assert sites(res["sub.py"]) == {("GM201", 12)}
    f = res["sub.py"][0]
    assert "`t` is a tensor here" in f.note and "base.py:" in f.note
    # the rule's own reason: annotating `t` would not make the branch mendable
    assert f.applicability is Applicability.NONE and f.decline_reason.startswith("the condition may hold several")
    monkeypatch.syspath_prepend(str(tmp_path))
    from stepper.sub import Sub
    t, y = torch.tensor([0.75, 0.25]), torch.ones(3)
    for fast in (True, False):
        assert break_lines(Sub(fast), t, y, path=str(pkg / "sub.py")) == {12}


MASK_OF_UNKNOWN = """\
import torch


class Pick(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pick(self.scores(x), (x > 0).float())

    def scores(self, x):
        return x * 2

    def pick(self, mat, pos_mask):
        pos_bool = pos_mask.bool()
        return mat[pos_bool].sum()
"""


def test_a_boolean_mask_indexing_a_value_the_walk_does_not_know(tmp_path):
    """circle_loss' `mat[pos_mask_bool]`: what a boolean tensor indexes is a tensor even where the
    walk does not know `mat`; the read has a data-dependent shape and Dynamo breaks there."""
    found = analyze_source(MASK_OF_UNKNOWN, "pick.py").findings
    assert sites(found) == {("GM402", 13)}
    mod = load_module(MASK_OF_UNKNOWN, tmp_path, "pick_run")
    assert break_lines(mod.Pick(), torch.tensor([1.0, -1.0, 2.0]), path=mod.__file__) == {13}


def test_fix_counts_what_other_files_callers_show_as_remaining(tmp_path):
    """`graphmend fix` over a package: the site only a caller in another file shows is not
    mended, and is reported as remaining at its line in the fixed text (the runtime's import the
    mend of a print added above it moved it down), where a `graphmend check` of the written files
    finds it."""
    pkg = _package(tmp_path)
    interp = pkg / "interp.py"
    interp.write_text("import torch\n\n\ndef note(y: torch.Tensor):\n    print('interp')\n    return y\n\n\n"
                      + INTERP)
    (pkg / "solver.py").write_text(SOLVER.replace("ys = [y0]", "ys = [interp.note(y0)]"))
    files = [str(interp), str(pkg / "solver.py")]
    before = {os.path.basename(r.path): sites(r.findings) for r in scan.check_files(files, Settings(), jobs=1)}
    assert before["interp.py"] == {("GM101", 5), ("GM301", 10)}
    fixes = {os.path.basename(f.path): f for f in scan.fix_files(files, Settings(), jobs=1)}
    fx = fixes["interp.py"]
    assert sites(fx.applied) == {("GM101", 5)}
    for f in fixes.values():
        assert scan.write_fix(f) is None
    after = {os.path.basename(r.path): sites(r.findings) for r in scan.check_files(files, Settings(), jobs=1)}
    assert after["interp.py"] == {("GM301", 11)}
    assert sites(fx.remaining) == after["interp.py"]


REDUCER_BASE = """\
import torch


class BaseReducer(torch.nn.Module):
    def forward(self, loss_dict, embeddings):
        info = loss_dict["loss"]
        losses, kind = info["losses"], info["reduction_type"]
        getattr(self, "assert_sizes_" + kind)(losses)
        fn = self.get_reduction_func(kind)
        return fn(losses, embeddings)

    def get_reduction_func(self, kind):
        return getattr(self, "{}_reduction".format(kind))

    def element_reduction(self, losses, embeddings):
        raise NotImplementedError

    def assert_sizes_element(self, losses):
        pass
"""

REDUCER_SUB = """\
import torch

from reducers.base import BaseReducer


class ThresholdReducer(BaseReducer):
    def __init__(self, low=None):
        super().__init__()
        self.low = low

    def element_reduction(self, losses, embeddings):
        low_condition = None
        if self.low is not None:
            low_condition = losses > self.low
            losses = losses[low_condition]
        return losses.sum() + embeddings.sum() * 0

    def assert_sizes_element(self, losses, names=(1, 2)):
        assert names[names == 1] == 1
        assert len(losses[~(losses >= -1e9)]) == 0
"""


def test_methods_picked_by_getattr_and_a_value_masked_by_its_own_comparison(tmp_path, monkeypatch):
    """pytorch-metric-learning's reducers: the base picks the method by name
    (`getattr(self, "{}_reduction".format(kind))`, returned by a getter, and
    `getattr(self, "assert_sizes_" + kind)(...)`), and the override masks `losses`, which nothing
    shows to be a tensor, by a comparison of itself. Both overrides are reached; both reads are
    GM402 where Dynamo breaks; `names == 1` of a parameter the walk does not know is no mask
    (of a tuple it is False, and `names[False]` is `names[0]`)."""
    pkg, files = _write_package(tmp_path / "reducers", {"base.py": REDUCER_BASE, "thr.py": REDUCER_SUB})
    res = {os.path.basename(r.path): sites(r.findings) for r in scan.check_files(files, Settings(), jobs=1)}
    assert res == {"base.py": set(), "thr.py": {("GM402", 15), ("GM402", 20)}}
    monkeypatch.syspath_prepend(str(tmp_path))
    from reducers.thr import ThresholdReducer
    loss = {"loss": {"losses": torch.tensor([0.5, -1.0, 2.0]), "reduction_type": "element"}}
    assert break_lines(ThresholdReducer(low=0.0), loss, torch.ones(2), path=str(pkg / "thr.py")) == {15, 20}



BROWNIAN_BASE = """\
import abc


class BaseBrownian(metaclass=abc.ABCMeta):
    @abc.abstractmethod
    def __call__(self, ta, tb=None):
        raise NotImplementedError
"""

BROWNIAN_INTERVAL = """\
import torch

from sdepkg import brownian_base


class Interval(brownian_base.BaseBrownian):
    def __init__(self, size):
        self.size = size

    def __call__(self, ta, tb=None):
        ta, tb = float(ta), float(tb)
        return torch.full(self.size, (tb - ta) ** 0.5)
"""

SOLVER_BASE_SDE = """\
import torch

from sdepkg.brownian_base import BaseBrownian


class BaseSolver(torch.nn.Module):
    def __init__(self, bm: BaseBrownian):
        super().__init__()
        self.bm = bm

    def forward(self, ts: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.step(ts[0], ts[1], y)

    def step(self, t0, t1, y):
        raise NotImplementedError
"""

SOLVER_EULER = """\
from sdepkg.solver_base import BaseSolver


class Euler(BaseSolver):
    def step(self, t0, t1, y):
        return y + self.bm(t0, t1) * (t1 - t0)
"""


def test_a_call_through_an_attribute_typed_by_a_constructor_parameter(tmp_path, monkeypatch):
    """torchsde's shape: a base solver stores `bm: BaseBrownian` as `self.bm`; a subclass in
    another file calls `self.bm(t0, t1)` with what the base's forward passes it (tensors); the
    Brownian motion that runs is a subclass of BaseBrownian in a third file, whose `__call__`
    reads `float(ta)`. The site is found there, and Dynamo breaks there."""
    pkg, files = _write_package(tmp_path / "sdepkg", {
        "brownian_base.py": BROWNIAN_BASE, "interval.py": BROWNIAN_INTERVAL,
        "solver_base.py": SOLVER_BASE_SDE, "euler.py": SOLVER_EULER})
    res = {os.path.basename(r.path): sites(r.findings) for r in scan.check_files(files, Settings(), jobs=1)}
    assert res == {"brownian_base.py": set(), "interval.py": {("GM401", 11)},
                   "solver_base.py": set(), "euler.py": set()}
    monkeypatch.syspath_prepend(str(tmp_path))
    from sdepkg.euler import Euler
    from sdepkg.interval import Interval
    assert break_lines(Euler(Interval((3,))), torch.tensor([0.0, 0.5]), torch.ones(3),
                       path=str(pkg / "interval.py")) == {11}


SUBMODULE_METHOD = """\
import torch
from torch import nn


def exists(val):
    return val is not None


class Updater(nn.Module):
    def __init__(self, interval):
        super().__init__()
        self.interval = interval
        self.register_buffer("calls", torch.tensor(0))

    def redraw(self):
        if exists(self.interval) and self.calls >= self.interval:
            self.calls.zero_()
            return
        self.calls += 1


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.updater = Updater(2)
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        self.updater.redraw()
        return self.lin(x)
"""


def test_a_submodules_method_and_a_helper_that_returns_a_static_value(tmp_path):
    """performer-pytorch (realcode round 7): forward calls `self.proj_updater.redraw_projections()`,
    a method of a submodule, not its forward; there `exists(self.interval) and self.calls >= ...`
    tests a buffer, and `exists` (`return val is not None`) is known while tracing. Dynamo breaks
    at the buffer's comparison."""
    found = analyze_source(SUBMODULE_METHOD, "perf.py").findings
    assert sites(found) == {("GM201", 16)}
    mod = load_module(SUBMODULE_METHOD, tmp_path, "perf_run")
    assert break_lines(mod.Model(), torch.ones(2, 4), path=mod.__file__) == {16}


INSTANCE_METHODS = """\
import torch


class Strategy:
    def update(self, s, y):
        rho_inv = y.dot(s)
        if rho_inv <= 1e-10:
            return
        self._update(s, y, rho_inv)


class BFGS(Strategy):
    def __init__(self, x):
        self.I = torch.eye(x.numel())
        self.H = torch.eye(x.numel())

    def _update(self, s, y, rho_inv):
        rho = rho_inv.reciprocal()
        R = torch.addr(self.I, s, y, alpha=-rho)
        self.H = torch.addr(R @ self.H @ R.t(), s, s, alpha=rho)


class LBFGS(BFGS):
    pass


def step(x: torch.Tensor, g: torch.Tensor, x_new: torch.Tensor, g_new, low_mem=False):
    hess = LBFGS(x) if low_mem else BFGS(x)
    s = x_new.sub(x)
    y = g_new.sub(g)
    hess.update(s, y)
    return hess.H
"""


def test_a_method_of_a_local_instance_gets_the_tensors_passed(tmp_path):
    """torchmin's BFGS (realcode round 13): `hess = L_BFGS(...) if low_mem else BFGS(...)`, then
    `hess.update(s, y)`. The method (a base's, in this file) is walked with `s` a tensor, so is
    `y.dot(s)` (a product with a tensor), and `self._update(s, y, rho_inv)` passes the tensors on:
    Dynamo breaks at the `if` and at both `alpha=` reads; all three are reported now."""
    found = analyze_source(INSTANCE_METHODS, str(tmp_path / "bfgs.py"), Settings(scope="module")).findings
    assert sites(found) == {("GM201", 7), ("GM401", 19), ("GM401", 20)}
    mod = load_module(INSTANCE_METHODS, tmp_path, "bfgs_run")
    x, g = torch.zeros(3), torch.ones(3)
    assert logged_break_lines(mod.step, x, g, x + 0.5, g * 1.5, path=mod.__file__) >= {7, 19, 20}


PASSED_MODULE = """\
import torch
from torch.nn import Module


class Core(Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, seg, mem):
        h = self.lin(seg) + mem
        return h.pow(2).mean(), h.detach()


class Wrapper(Module):
    def __init__(self, transformer: Core):
        super().__init__()
        self.transformer = transformer

    def forward(self, segments, memories):
        total = 0.0
        for seg, mem in zip(segments, memories):
            loss, _ = self.transformer(seg, mem)
            weighted = loss * 0.5
            weighted.backward(retain_graph=True)
            total += weighted
        return total
"""


def test_a_submodule_passed_to_init_as_an_annotated_parameter(tmp_path):
    """recurrent-memory-transformer (realcode round 16): `self.transformer = transformer`, the
    parameter annotated with a Module class of the file, is that submodule: its call returns
    tensors, and the memory-replay `backward()` on them is found where Dynamo breaks."""
    found = analyze_source(PASSED_MODULE, str(tmp_path / "rmt.py")).findings
    assert sites(found) == {("GM403", 25)}
    mod = load_module(PASSED_MODULE, tmp_path, "rmt_run")
    segs = [torch.randn(2, 4) for _ in range(2)]
    net = mod.Wrapper(mod.Core())
    assert 25 in logged_break_lines(net, segs, [torch.zeros(2, 4)] * 2, path=mod.__file__)
