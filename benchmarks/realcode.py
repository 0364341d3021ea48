"""GraphMend on real code beyond transformers: diffusers models and samplers, lucidrains-style
packages, a Mamba, an ODE solver, a training step (``benchmarks/realcode_corpus.py``), each from a
pinned PyPI release installed into its own venv, built from a tiny config with random weights.

    python benchmarks/realcode.py [--models all|NAME,...] [--json out.json] [--markdown]
                                  [--venv .bench/venv-realcode] [--no-setup] [--timeout S]

Per entry, with the child of ``benchmarks/models.py`` (``_model_child.py --realcode``):

* ORIGINAL: the installed package, compiled with a counting backend (breaks = graphs - 1, first
  call), ``torch._dynamo.explain`` and Dynamo's ``graph_breaks`` log for the break sites (file:line,
  innermost frame inside the package; the log also names a break whose graph before it is empty,
  which no backend sees), and the line coverage of one eager call (which findings are on executed
  lines).
* MENDED: the same child with GraphMend's import hook (``graphmend run --scope PKG
  --unsafe-fixes``): the installed package mended as it is imported, keeping its file names and
  line numbers, so a break site of the mended run is comparable with the findings.
* static: ``graphmend check --unsafe-fixes`` on the entry's package paths.

Columns: breaks before -> after (counting backend, first call); break events in Dynamo's
graph_breaks log before -> after (a mend can remove a break whose graph before it was empty and
so ADD a counted graph: the log shows the break gone); break sites of the kinds GraphMend names (print, logging,
warnings, data-dependent branches, tensor-to-Python, data-dependent shapes and factory sizes,
tensor slice bounds, compile-only defaults) and how many a finding's span covers (recall; sites of
other kinds, and breaks with no frame in the entry's packages, in torch's own code or the
harness's, are listed apart); findings on executed lines and how many Dynamo really broke at
(precision; the rest are listed as false alarms); mended-but-still-breaking sites (a finding the
fix applied whose span still holds a break of the mended run); outputs bitwise equal and messages
equal in order (eager / compiled / original-eager vs mended-compiled), as in ``models.py``.

A break counts as a kind GraphMend names by its registry id, except for the ids several causes
share (``SHARED_GB``: GB0059 any builtin operator, GB0007 any skipped function, GB0088 any observed
exception): those only when the break's own text (the explain / backend reason, or the ``detail``
the child keeps of a graph_breaks log record) names what the code covers (``attribute``: `print`,
`warnings.warn`, a call of GM403's list, a None value). A finding on an executed line is scored
only where Dynamo could have broken there: not in a function Dynamo skipped (``masked_by_skip``),
and not on a line that ran eagerly because Dynamo never traced its frame, or ran the rest of it
eagerly after a break it could not resume from (``not_traced``, from the lines Dynamo traced,
which the child records from its ``trace_source`` log as ``traced_lines``; a line of a frame
Dynamo traced counts, also one its trace did not reach).
"""

from __future__ import annotations

import argparse
import ast
import json
import linecache
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import models as bench  # noqa: E402
import realcode_corpus as corpus  # noqa: E402

DEFAULT_VENV = REPO / ".bench" / "venv-realcode"
QUICK = "diffusers-ddim-step,diffusers-euler-step,vq-train"

#: Dynamo break types GraphMend has a code for (by registry id; reasons without an id by summary).
#: An id in SHARED_GB covers several causes, of which GraphMend names only some: such a break is
#: attributed by its reason text (`attribute`), not by its id.
NAMED_GB = {"GB0059": "GM101", "GB0291": "GM102", "GB0007": "GM103", "GB0170": "GM201/GM301",
            "GB0124": "GM401", "GB0033": "GM401", "GB0038": "GM401", "GB0036": "GM402", "GB0088": "GM501",
            "GB0206": "GM405", "GB8985": "GM405", "GB0123": "GM403",
            "GB0225": "GM405", "GB0467": "GM405", "GB0208": "GM403", "GB9186": "GM403", "GB0117": "GM406",
            "GB4198": "GM403", "GB0055": "GM407"}
#: GB0059 "Failed to trace builtin operator" (`print`, but also `matmul` on two LinearOperators);
#: GB0007 "Attempted to call function marked as skipped" (`warnings.warn`, but also
#: `sys._getframe`, `importlib.import_module`, `pickle.dumps`); GB0088 "Observed exception" (a
#: compile-only None default, but any exception Dynamo sees raised). The others name one cause:
#: GB0291 a logging.Logger method, GB0170 a jump on a tensor, GB0124 `.item()`, GB0033 an operator
#: with a data-dependent non-tensor output (`_local_scalar_dense`, `equal`), GB0038 a slice with
#: tensor bounds, GB0036 an operator with a data-dependent output shape, GB0206 / GB8985 a change of
#: `requires_grad` on an intermediate (setattr / `requires_grad_()`), GB0225 a tensor created with
#: `requires_grad=True` (in an inlined frame), GB0123 `Tensor.backward()`, GB9186
#: `torch.autograd.grad`, GB4198 `copy.deepcopy` of a tensor. Shared as well: GB0467
#: (setattr on an unsupported type; GM405 for `requires_grad`), GB0208 (a torch.* op returning a
#: non-tensor; GM403 for `torch.random.fork_rng`, GM404 for `torch.backends.cuda.sdp_kernel`).
SHARED_GB = frozenset({"GB0059", "GB0007", "GB0088", "GB0467", "GB0208", "GB0117", "GB0055"})
#: GB0117's record of a deprecated Number-first overload ("call_method TensorVariable() addcmul_
#: [ConstantVariable(float: 0.5), ...]"), not torch-hd's `as_subclass` of a tensor subclass
#: ("call_method TensorWithTFOverrideVariable() as_subclass [...]", realcode round 29)
_NUMBER_FIRST = re.compile(r"call_method \w+\(\) (?:add|sub|addcmul|addcdiv)_? "
                           r"\[(?:LazyVariableTracker\(realized: )?(?:ConstantVariable|SymNodeVariable)")
#: GB0208's record of `torch.backends.cuda.sdp_kernel(...)` ("example_value type:
#: _GeneratorContextManager; ... target: <function sdp_kernel at 0x...>"), not `sdpa_kernel`
_SDP_KERNEL = re.compile(r"target: <function sdp_kernel\b")
#: a skipped function of tqdm's, as GB0007 / GB0008 name it ("the function `tqdm.__iter__` ...
#: filename: `.../site-packages/tqdm/std.py`")
_TQDM = re.compile(r"function `tqdm\.\w+`[^\n]*?[/\\]tqdm[/\\]|qualname: tqdm\.\w+.*?filename: `[^`]*[/\\]tqdm[/\\]")
#: GB0008's record of inlining an optimizer's `zero_grad` ("the function `Optimizer.zero_grad`
#: should not be traced"; "qualname: Optimizer.zero_grad")
_ZERO_GRAD = re.compile(r"`Optimizer\.zero_grad`|qualname: Optimizer\.zero_grad\b")
#: GM403's untraceable calls (graphmend.analysis.detect.UNTRACEABLE; this copy when it cannot be
#: imported), as Dynamo names them once a leading underscore is dropped (`_pickle.dumps`).
_UNTRACEABLE = frozenset({"time.time", "time.perf_counter", "time.monotonic", "time.sleep", "pdb.set_trace",
                          "breakpoint", "input", "open", "copy.deepcopy", "pickle.dumps", "pickle.loads",
                          "os.system", "subprocess.run", "sys.stdout.write", "sys.stderr.write", "torch.save",
                          "torch.load", "numpy.random.rand", "random.random"})
SUMMARY_GB = [("generic_jump", "GB0170"), ("Data-dependent branching", "GB0170"),
              ("Unsupported Tensor.item()", "GB0124"), ("Dynamic shape operator", "GB0036"),
              ("Data dependent operator", "GB0033"), ("logging.Logger", "GB0291"),
              ("setattr() on Tensor.requires_grad", "GB0206"), ("requires_grad_() intermediate", "GB8985"),
              ("Unsupported Tensor.backward() call", "GB0123")]


# --------------------------------------------------------------------------------------------------
# The venv


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def setup_venv(venv: Path, log) -> None:
    """Create the venv and install the pinned corpus (and GraphMend's own dependencies, for the
    import hook) unless every requirement is already there."""
    py = venv_python(venv)
    if not py.exists():
        log(f"creating {venv} ...")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    reqs = corpus.REQUIREMENTS + ["libcst>=1.1", "jedi>=0.19", "pygls>=2.0,<3", "lsprotocol>=2023.0.1"]
    check = ("import importlib.metadata as m, sys\n"
             "want = dict(r.split('==') for r in sys.argv[1:] if '==' in r)\n"
             "bad = [k for k, v in want.items() if not m.version(k).startswith(v)]\n"
             "sys.exit(1 if bad else 0)")
    try:
        ok = subprocess.run([str(py), "-c", check, *corpus.REQUIREMENTS], capture_output=True).returncode == 0
    except OSError:
        ok = False
    if not ok:
        log(f"installing {' '.join(corpus.REQUIREMENTS)} into {venv} ...")
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", *reqs], check=True)


def site_packages(py: Path) -> Path:
    out = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


# --------------------------------------------------------------------------------------------------
# Static findings (cached per set of paths: the diffusers rows share theirs)

_STATIC: dict[tuple, dict] = {}


def findings_for(site: Path, paths: list[str], scope: str = "default") -> dict[str, Any]:
    key = (str(site), tuple(paths), scope)
    if key not in _STATIC:
        files = sorted({str(f.relative_to(site)) for p in paths
                        for f in ([site / p] if (site / p).is_file() else (site / p).rglob("*.py"))})
        _STATIC[key] = bench.static_findings(site, files, prefix="", options=("--scope", scope))
    return _STATIC[key]


# --------------------------------------------------------------------------------------------------
# Break sites


def _rel(path: str, site: Path) -> str:
    p = str(path).replace(os.sep, "/")
    s = str(site).replace(os.sep, "/") + "/"
    return p[len(s):] if p.startswith(s) else p


def kind_of(reason: dict[str, Any]) -> str | None:
    gb = (reason.get("gb") or "").upper() or None
    if gb:
        return gb
    text = reason.get("summary") or reason.get("reason") or ""
    return next((g for key, g in SUMMARY_GB if key in text), None)


def _untraceable() -> frozenset[str]:
    try:
        from graphmend.analysis.detect import UNTRACEABLE
        return frozenset(UNTRACEABLE) | _UNTRACEABLE
    except Exception:  # GraphMend not importable here (the test, another interpreter)
        return _UNTRACEABLE


_BUILTIN_OP = re.compile(r"builtin operator `([^`]+)`|Developer debug context: builtin (\S+) \[")
_SKIPPED_FN = re.compile(r"module: ([\w.]+), qualname: ([\w.<>]+)")
_SKIPPED_EXPL = re.compile(r"trace the (?:Python )?builtin `([\w.]+?)\.?`|the function `(\w+)` in file")


def attribute(gb: str | None, text: str | None) -> str | None:
    """The GraphMend code a break of registry id `gb` is one of, or None. `text`: the break's own
    text (explain / backend reason, or the `detail` of a graph_breaks log record); None where the
    record kept none (an older child's log record), and then the id alone decides, as before. A
    break of an id in SHARED_GB counts only when its text names what the code covers: `print` for
    GM101 (an untraceable builtin such as `open` for GM403), `warnings.warn` for GM103 (a call of
    GM403's list such as `pickle.dumps` for GM403), a None value (`NoneType`) for GM501. A skipped
    function of tqdm's (GB0007 calling `tqdm.__new__`, GB0008 inlining `tqdm.__iter__` in a `for`
    over the bar) is GM403's progress bar, and so is an optimizer's `zero_grad` (GB0008); GB0008
    otherwise (a variadic call, a DataLoader's iterator) is no code's."""
    if gb in ("GB0007", "GB0008") and text and _TQDM.search(text):
        return "GM403"
    if gb == "GB0008" and text and _ZERO_GRAD.search(text):
        return "GM403"  # an optimizer's `zero_grad`, skipped by Dynamo
    if gb not in NAMED_GB:
        return None
    if gb not in SHARED_GB or text is None:
        return NAMED_GB[gb]
    if gb == "GB0059":
        m = _BUILTIN_OP.search(text)
        name = (m.group(1) or m.group(2)) if m else None
        if name == "print":
            return "GM101"
        return "GM403" if name and name in _untraceable() else None
    if gb == "GB0007":
        m = _SKIPPED_FN.search(text)
        if m:
            qual = f"{m.group(1).lstrip('_')}.{m.group(2)}"
        else:
            e = _SKIPPED_EXPL.search(text)
            qual = (e.group(1) or e.group(2) or "").lstrip("_") if e else ""
        if qual in ("warnings.warn", "builtins.warn"):
            return "GM103"
        return "GM403" if qual in _untraceable() else None
    if gb == "GB0088":
        return NAMED_GB[gb] if "NoneType" in text else None
    if gb == "GB0055":  # args a call cannot take as graph values: GM407 for a generator (math.prod)
        return NAMED_GB[gb] if "GeneratorObjectVariable" in text else None
    if gb == "GB0117":  # unhandled args for a method: GM406 for the Number-first overloads
        return NAMED_GB[gb] if _NUMBER_FIRST.search(text) else None
    if gb == "GB0467":  # setattr() on an unsupported type: GM405 when what is set is requires_grad
        return NAMED_GB[gb] if "requires_grad" in text else None
    if gb == "GB0208":  # a torch.* op returning a non-tensor: GM403 for fork_rng, GM404 for the
        # deprecated `torch.backends.cuda.sdp_kernel` context manager (bs-roformer, mixture-of-attention)
        if "fork_rng" in text:
            return NAMED_GB[gb]
        return "GM404" if _SDP_KERNEL.search(text) else None
    return None


def _cause(gb: str | None, text: str | None) -> str:
    """A short name of what a break's text says it broke on (for a site left unattributed)."""
    if not text:
        return ""
    m = _BUILTIN_OP.search(text)
    if gb == "GB0059" and m:
        return f"builtin `{m.group(1) or m.group(2)}`"
    m = _SKIPPED_FN.search(text)
    if gb == "GB0007" and m:
        return f"skipped `{m.group(1)}.{m.group(2)}`"
    ex = re.search(r"Developer debug context: (.*)", text)
    return ex.group(1)[:80] if ex else ""


#: the codes GraphMend reports at the call that breaks (not at a line inside the callee)
CALL_CODES = frozenset({"GM101", "GM102", "GM103", "GM403"})


def _standard_library(path: str) -> bool:
    """`path` is a module of Python's own library (not of an installed package)."""
    p = path.replace(os.sep, "/")
    return "/site-packages/" not in p and "/dist-packages/" not in p and re.search(r"/lib/python3\.\d+/", p) is not None


def _inside(rel: str, packages: tuple[str, ...]) -> bool:
    """`rel` (a site-packages-relative path) is in one of the entry's checked paths: a package's
    folder, or a single-module distribution's file (rtdl-num-embeddings' `rtdl_num_embeddings.py`,
    rtdl-revisiting-models', realcode rounds 33 and 35: scored as "outside" before)."""
    return rel in {p + ".py" for p in packages} or rel.startswith(tuple(p + "/" for p in packages))


def _entry_code(path: str) -> bool:
    """`path` is the corpus module, where the entries (and the callbacks they hand a package) live."""
    return bool(path) and Path(path).resolve() == Path(corpus.__file__).resolve()


def break_sites(res: dict[str, Any], packages: tuple[str, ...], site: Path) -> list[dict[str, Any]]:
    """Deduplicated break sites (innermost frame in the entry's packages) of one child result,
    backend and explain together; a break with no frame in them is one site `<outside PACKAGES>`,
    never a miss (listed with the other kinds)."""
    reasons = [r for r in res.get("break_reasons") or []]
    reasons += [r for r in (res.get("explain") or {}).get("break_reasons") or []]
    out: dict[tuple, dict[str, Any]] = {}
    for r in reasons:
        stack = r.get("user_stack") or []
        frames = [f for f in stack if _inside(_rel(f.get("file", ""), site), packages)]
        if stack and _entry_code(stack[-1].get("file", "")):
            # a break in the entry's own code that the package calls back (torch-ac's
            # `self.envs[0].step(actions[0])` into the entry's environment, whose `int(action)`
            # breaks: realcode round 36) is the caller's, not a break of the package's line
            frames = []
        if frames:
            inner = frames[-1]
            rel = _rel(inner["file"], site)
            key = (rel, _code_line(site, rel, inner["line"]))
            src = inner.get("source", "")
        else:
            key, src = (f"<outside {', '.join(packages)}>", 0), ""
        s = out.setdefault(key, {"file": key[0], "line": key[1], "source": src, "kind": kind_of(r),
                                 "summary": (r.get("summary") or "")[:120], "stack": set(), "count": 0,
                                 "records": []})
        s["stack"] |= {(_rel(f["file"], site), f["line"]) for f in frames[:-1]}
        s["count"] += 1
        s["records"].append((kind_of(r), r.get("reason")))
    # the package frames of the graph_breaks log's own records (the child's `log_breaks`), by the
    # site, id and text Dynamo logged: a break of a call GraphMend reports at the call (GM403's
    # untraceable calls, print, logging, warnings) inside the standard library a package calls
    # (higher's `copy.deepcopy(other.param_groups)`, GB4198 at copy.py:153, realcode round 30)
    # is that package's break at its call, as a backend record's stack makes it. Not a break in
    # another package's code, torch's included (torchmin reaches torch/optim/lbfgs.py's
    # `_strong_wolfe`, whose branches break: listed apart, as before)
    stacks: dict[tuple, tuple[str, int]] = {}
    for b in res.get("log_breaks") or []:
        at = b.get("site") or {}
        if not _standard_library(str(at.get("file", ""))) or \
                (attribute(b.get("gb"), b.get("detail")) or "") not in CALL_CODES:
            continue
        frames = [f for f in b.get("user_stack") or [] if f.get("line")
                  and _inside(_rel(f.get("file", ""), site), packages)]
        if frames:
            stacks.setdefault((at.get("file"), at.get("line"), b.get("gb"), b.get("detail")),
                              (_rel(frames[-1]["file"], site), frames[-1]["line"]))
    for b in res.get("graph_break_log") or []:  # also breaks whose graph before them was empty
        rel = _rel(b["file"], site)
        line = _code_line(site, rel, b["line"])
        if not _inside(rel, packages) and (b["file"], line, b.get("gb"), b.get("detail")) in stacks:
            rel, line = stacks[(b["file"], line, b.get("gb"), b.get("detail"))]
        if not _inside(rel, packages):
            # a break of a kind GraphMend does not name with no frame in the packages (opacus'
            # backward hooks, GB0083 at torch/nn/modules/module.py, realcode round 10) is still
            # one of the entry's breaks: listed with the other kinds, never scored as a miss
            if attribute(b.get("gb"), b.get("detail")) or b.get("gb") in NAMED_GB:
                continue
            rel, line = f"<outside {', '.join(packages)}>", 0
        s = out.setdefault((rel, line), {"file": rel, "line": line, "source": "", "kind": b.get("gb"),
                                              "summary": (b.get("reason") or "")[:120], "stack": set(),
                                              "count": 0, "log_only": True, "records": []})
        s["kind"] = s["kind"] or b.get("gb")
        s["count"] += 1
        # the header line ("Encountered graph break when ...") is not the break's text: `detail` is
        s["records"].append((b.get("gb"), b.get("detail")))
    for s in out.values():
        s["stack"] = sorted(s["stack"])
        # the site's kind (its first record's id, as before) is attributed by the text of its
        # records of that id; when none of them kept any (an older child's log record, a
        # hand-built one) by the id alone
        g = s["kind"]
        told = [t for k, t in s.pop("records") if k == g and t] or [None]
        codes = sorted({c for t in told if (c := attribute(g, t))})
        if str(s["file"]).startswith("<outside "):
            # no frame in the entry's packages: torch's own code (torchmin reaches
            # torch/optim/lbfgs.py's `_cubic_interpolate`, realcode round 13) or the harness's;
            # not the package's break, whatever its kind: listed apart, never a miss
            codes = []
        s["codes_named"] = codes
        s["named"] = bool(codes)
        if g in NAMED_GB and not codes:  # an id GraphMend names, broken on another cause
            s["cause"] = next((c for t in told if (c := _cause(g, t))), "?")
    return sorted(out.values(), key=lambda s: (s["file"], str(s["line"])))


def _code_line(site: Path, rel: str, line: int) -> int:
    """The line a break logged at `line` belongs to: `line` itself, or where it holds only closing
    brackets, the nearest line above with code (sbi's `offset = (torch.tensor(...)\n.sum()\n.item()\n)`:
    Dynamo logs the `.item()` break at the `)` line, realcode round 35)."""
    path = str(site / rel)  # an absolute `rel` stays itself
    text = linecache.getline(path, line).strip()
    while line > 1 and text and not text.strip(")]},"):
        line -= 1
        text = linecache.getline(path, line).strip()
    return line


def _span(f: dict[str, Any]) -> range:
    return range(f["line"], (f.get("end_line") or f["line"]) + 1)


def skipped_regions(res: dict[str, Any], packages: tuple[str, ...], site: Path) -> list[tuple[str, int, int, str]]:
    """(file, first line, last line, name) of the code Dynamo gave up on: the frame each
    "Skipping the function and falling back to eager" log record names ("frame skipped: NAME
    (FILE line N)", recorded by the child as `skipped_frame`; a break inside a loop skips the frame
    holding the loop). A resume function (`torch_dynamo_resume_in_f_at_N`) is the rest of `f` from
    line N on. Findings there cannot show a break while that code runs eagerly."""
    import ast
    out: list[tuple[str, int, int, str]] = []
    for b in res.get("skipped_functions") or []:
        sf = b.get("skipped_frame") or {}
        rel = _rel(sf.get("file", ""), site)
        if not _inside(rel, packages):
            continue
        try:
            tree = ast.parse((site / rel).read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        line, resume = sf["line"], str(sf.get("function", "")).startswith("torch_dynamo_resume_in_")
        best = None
        for n in ast.walk(tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([n.lineno, *(d.lineno for d in n.decorator_list)])
                hit = (n.lineno <= line <= n.end_lineno) if resume else (first <= line <= n.lineno)
                if hit and (best is None or n.lineno > best.lineno):
                    best = n
        if best is not None:
            key = (rel, line if resume else best.lineno, best.end_lineno, best.name)
            if key not in out:
                out.append(key)
    return out


_FUNCS: dict[Path, list[tuple[int, int, str, list[tuple[int, int]]]]] = {}


# codes whose call breaks only when its frame is inlined into another (the finding's note says so):
# in a frame Dynamo compiles on its own it keeps `warnings.warn` and a `requires_grad=True` factory
INLINED_ONLY = frozenset({"GM103", "GM405"})


def _function_of(f: dict[str, Any], site: Path) -> tuple[int, int, str, list[tuple[int, int]]] | None:
    """The innermost function holding finding `f` (see `_functions`), or None at module level."""
    enclosing = [fn for fn in _functions(site / f["file"]) if fn[0] <= f["line"] <= fn[1]]
    return max(enclosing, key=lambda fn: fn[0]) if enclosing else None


def _broke_before(f: dict[str, Any], fn: tuple, broke: frozenset) -> list[int]:
    """The lines of `fn`'s own body (not of functions nested in it) before finding `f` that broke
    (a break's site or a call above one)."""
    first, _, _, inner = fn
    return [ln for file, ln in broke if file == f["file"] and first <= ln < f["line"]
            and not any(a <= ln <= b for a, b in inner)]


def _after_a_break(f: dict[str, Any], broke: frozenset, site: Path) -> bool:
    """A line of `f`'s own function before it broke."""
    fn = _function_of(f, site)
    return fn is not None and bool(_broke_before(f, fn, broke))


def _parsed(path: Path) -> ast.Module | None:
    """A package file's tree, None when it cannot be read or parsed (the scoring's line facts
    below are each computed once per file)."""
    try:
        return ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None


def _functions(path: Path) -> list[tuple[int, int, str, list[tuple[int, int]]]]:
    """(first line, last line, name, [(first, last) of the functions nested in it]) of every
    function of a file (lambdas and comprehensions stay part of theirs); [] when it does not parse."""
    if path not in _FUNCS:
        tree = _parsed(path)
        out = []
        for n in ast.walk(tree) if tree is not None else ():
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = [(c.lineno, c.end_lineno) for c in ast.walk(n) if c is not n
                         and isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
                out.append((n.lineno, n.end_lineno, n.name, inner))
        _FUNCS[path] = out
    return _FUNCS[path]


def unresumed_breaks(res: dict[str, Any], packages: tuple[str, ...], site: Path) -> set[tuple[str, int]]:
    """(file, line), in the entry's packages, of every break after which Dynamo ran the rest of
    the frame it broke in eagerly: "cannot resume from ... skipping the rest of the function", or
    "Skipping the function and falling back to eager" (graph_breaks log, as the child records it
    in `log_breaks`). Only the frame the break is in (the record's site, its innermost user frame):
    the frames above it resume after the call (torch 2.13 traces their resume functions), and a
    line of theirs Dynamo traced counts anyway. A break Dynamo fails to handle gracefully
    ("Skipping the function and falling back to eager") skips the frame it was compiling, which
    may be one of those above (captum's `for p in self.permutation_generator(...)` in
    `attribute`, the break inside the generator it inlines, realcode round 23): each frame of the
    record's stack in the packages counts from its line on, where Dynamo did not trace it."""
    out = set()
    for b in res.get("log_breaks") or []:
        head = b.get("summary") or ""
        if "cannot resume" not in head and "Skipping the function" not in head and not b.get("skipped"):
            continue
        f = b.get("site") or ((b.get("user_stack") or [{}])[-1])
        frames = [f]
        if "Skipping the function" in head or b.get("skipped"):
            frames += (b.get("user_stack") or [])[:-1]
        for fr in frames:
            rel = _rel(fr.get("file", ""), site)
            if fr.get("line") and _inside(rel, packages):
                out.add((rel, fr["line"]))
    return out


def not_traced(f: dict[str, Any], traced: dict[str, set[int]], unresumed: set[tuple[str, int]],
               site: Path, broke: frozenset = frozenset()) -> str | None:
    """Why Dynamo never saw the executed line of finding `f` (so no break could show there), or None
    when it may have: its span holds a line Dynamo traced, or its function had Dynamo trace it with
    no break before the finding that Dynamo could not resume from. `traced`: the lines Dynamo
    traced (`traced_lines` of the child), by package-relative file. A line the trace of its frame
    simply did not reach (a branch not taken under compile) still counts."""
    # before the traced lines: the line was traced for the value, evaluated before the store
    later = sorted(ln for file, ln in unresumed if file == f["file"] and ln > f["line"]
                   and _stored_after(site / f["file"], f["line"], f.get("col"), ln))
    if later:  # `out[:, i[0]:i[1]] = g(\n x[:, i[0]:i[1]])`: the value is evaluated before the store
        return (f"ran eagerly from line {later[0]} on (a break Dynamo could not resume from, in the "
                f"value this line's assignment stores)")
    lines = traced.get(f["file"], set())
    if any(ln in lines for ln in _span(f)):
        return None
    fn = _function_of(f, site)
    if fn is None:
        return None  # module level: not a frame this scoring can judge
    first, last, name, inner = fn
    own = [ln for ln in lines if first <= ln <= last and not any(a <= ln <= b for a, b in inner)]
    if not own:
        return f"{name}() never traced"
    cut = sorted(ln for file, ln in unresumed if file == f["file"] and first <= ln < f["line"]
                 and not any(a <= ln <= b for a, b in inner))
    if cut:
        return f"{name}() ran eagerly from line {cut[0]} on (a break Dynamo could not resume from)"
    # `broke`: the lines of the frames that broke (a break's site and the calls above it). After the
    # last such line before the finding Dynamo traced none of the function: it ran the rest eagerly
    # (a frame holding no tensor is not traced after its first break, measured: cooper's second
    # optimizer `zero_grad()`, higher's `warnings.warn` after `super().__init__()`)
    # The break's statement may run on below its line (torchtnt's `logger.info(` at fit.py:123,
    # whose f-string arguments on the lines after it Dynamo traced before the call broke,
    # realcode round 34): traced lines count only past the statement's end
    before = _broke_before(f, fn, broke)
    if before and not any(ln > _statement_end(site / f["file"], max(before)) for ln in own):
        return f"{name}() ran eagerly after its break at line {max(before)} (Dynamo traced none of it after)"
    return None


_STATEMENTS: dict[Path, list[tuple[int, int]]] = {}


def _statement_end(path: Path, line: int) -> int:
    """The last line of the innermost statement starting at `line` (a simple statement, or a
    compound one's header; `line` itself where none starts there)."""
    if path not in _STATEMENTS:
        tree = _parsed(path)
        spans = []
        for n in (ast.walk(tree) if tree is not None else ()):
            if isinstance(n, ast.stmt):
                body = getattr(n, "body", None)
                # a compound statement's own part ends before its body (`if x.any(\n):` ...)
                end = body[0].lineno - 1 if isinstance(body, list) and body else n.end_lineno
                spans.append((n.lineno, max(n.lineno, end)))
        _STATEMENTS[path] = spans
    return min((end for start, end in _STATEMENTS[path] if start == line), default=line)


_ASSIGNS: dict[Path, list[tuple[tuple[int, int], tuple[int, int], range]]] = {}


def _stored_after(path: Path, line: int, col: int | None, brk: int) -> bool:
    """The finding at (line, col) is in the target of an assignment whose value, evaluated before
    the store, holds line `brk`: in a statement over several lines Dynamo breaks in the value
    before the target's code runs (e2cnn's `output[:, i[0]:i[1]] = batchnorm(` then the read of
    `input.tensor[:, i[0]:i[1]]` a line below)."""
    if col is None:
        return False
    if path not in _ASSIGNS:
        tree = _parsed(path)
        _ASSIGNS[path] = [
            ((t.lineno, t.col_offset), (t.end_lineno, t.end_col_offset), range(n.value.lineno, n.value.end_lineno + 1))
            for n in (ast.walk(tree) if tree is not None else ())
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and n.value is not None
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])]
    return any(start <= (line, col) < end and brk in value for start, end, value in _ASSIGNS[path])


def evaluate(orig: dict[str, Any], mended: dict[str, Any] | None, findings: list[dict[str, Any]],
             packages: tuple[str, ...], site: Path, training: bool = False) -> dict[str, Any]:
    """`training`: the entry runs its modules in training mode (a finding that breaks only in eval,
    or only in training, is reported apart when the run is in the other mode)."""
    sites = break_sites(orig, packages, site)
    named = [s for s in sites if s["named"]]
    hits, misses = [], []
    for s in named:
        direct = [f for f in findings if f["file"] == s["file"] and s["line"] in _span(f)]
        (hits if direct else misses).append({**s, "codes": sorted({f["code"] for f in direct})})
    cov = {k if _inside(k, packages) else _rel(k, site): set(v) for k, v in (orig.get("coverage") or {}).items()}
    frames = [(s["file"], s["line"]) for s in sites] + [fl for s in sites for fl in s["stack"]]
    # lines of frames that broke (not_traced), also the package calls above a break logged in
    # another package's code (pytorch-accelerated's `trainer.print(...)`, whose print breaks in
    # accelerate/state.py; the callback's `time.sleep` after it ran eagerly, realcode round 33)
    above = [(_rel(fr["file"], site), fr["line"]) for b in orig.get("log_breaks") or []
             for fr in b.get("user_stack") or [] if fr.get("line") and _inside(_rel(fr.get("file", ""), site), packages)]
    broke_at = frozenset(frames + above)
    above_at = frozenset(above)
    executed, confirmed, false_alarms, conditional, masked, undecided = [], [], [], [], [], []
    unseen: list[dict[str, Any]] = []
    skipped = skipped_regions(orig, packages, site)
    # the lines Dynamo traced; None from a child that did not record them (then every executed
    # line counts, as before)
    traced = None if orig.get("traced_lines") is None else {
        k if _inside(k, packages) else _rel(k, site): set(v) for k, v in orig["traced_lines"].items()}
    unresumed = unresumed_breaks(orig, packages, site) if traced is not None else set()
    for f in findings:
        if not any(ln in cov.get(f["file"], ()) for ln in _span(f)):
            continue
        # a call GraphMend reports as breaking (GM403's untraceable calls, print, logging) under
        # which Dynamo broke in another package's code: torchkeras' `self.optimizer.zero_grad()` on
        # accelerate's wrapper (GB0008 `Optimizer.zero_grad` at accelerate/optimizer.py:118) and its
        # `deepcopy(self.metrics_dict)` (breaks inside Dynamo's copy polyfill), realcode round 33
        broke = any(file == f["file"] and ln in _span(f) for file, ln in frames) or (
            f["code"] in CALL_CODES and any((f["file"], ln) in above_at for ln in _span(f)))
        cond = f.get("condition") or {}
        need = cond.get("training")
        if not broke and need is not None and bool(need) != training:
            conditional.append(f)  # "breaks only when the module is training", in an eval run
            continue
        if not broke and {"value", "config"} & set(cond.get("kinds") or ()):
            # a named value test this scoring cannot evaluate (`len(self.step_t)` is nonzero,
            # `layer_dropout > 0.0`), or a package's setting (skrl's `self.cfg.time_limit_bootstrap`
            # is true, realcode round 34; its settings objects are not read here): reported apart
            # with its condition, as issue 11 asks of conditional findings; one whose site broke
            # counts as confirmed below (dtype conditions are scored as before)
            undecided.append(f)
            continue
        if not broke and f["code"] in INLINED_ONLY and _after_a_break(f, broke_at, site):
            # "breaks when this frame is inlined": after a break in its function the rest ran as
            # a frame of its own (a resume function, or the function compiled anew when its caller
            # ran it eagerly), where Dynamo keeps the call (higher's `warnings.warn` after
            # `super().__init__()`, which broke in the base class's deepcopy, realcode round 30)
            conditional.append(f)
            continue
        inside = [k for k in skipped if k[0] == f["file"] and k[1] <= f["line"] <= k[2]]
        if inside and not broke and f["code"] != "GM501":
            masked.append({**f, "function": inside[0][3]})
            continue
        why = None if broke or inside or traced is None else not_traced(f, traced, unresumed, site, broke_at)
        if why:  # executed eagerly in a frame Dynamo never traced: neither confirmed nor a false alarm
            unseen.append({**f, "why": why})
            continue
        executed.append(f)
        if broke or inside:  # a GM501 predicts that skip
            confirmed.append(f)
        else:
            false_alarms.append(f)
    still = []
    if mended is not None:
        m_sites = break_sites(mended, packages, site)
        m_frames = [(s["file"], s["line"], s) for s in m_sites] + [(fl[0], fl[1], s) for s in m_sites
                                                                   for fl in s["stack"]]
        # an untraceable call inside a mended statement that breaks on its own, reported as its own
        # unfixed GM403 (deepctr-torch's deferred `print(... .format(len(train_tensor_data)))`,
        # `len()` of a TensorDataset, realcode round 33): a break on its line is that finding's,
        # not the mend's
        calls = [g for g in findings if g["code"] == "GM403" and not g.get("fixable")]
        for f in findings:
            if not f.get("fixable"):
                continue
            inner = {ln for g in calls if g is not f and g["file"] == f["file"] and g["line"] in _span(f)
                     for ln in _span(g)}
            hit = next((s for file, ln, s in m_frames if file == f["file"] and ln in _span(f) and ln not in inner),
                       None)
            if hit is not None:
                still.append({**f, "break": hit["summary"]})
    return {"sites": len(sites), "named_sites": len(named), "found": len(hits),
            "recall": round(len(hits) / len(named), 3) if named else None,
            "other_sites": [s for s in sites if not s["named"]], "misses": misses,
            "findings": len(findings), "findings_executed": len(executed), "confirmed": len(confirmed),
            "precision": round(len(confirmed) / len(executed), 3) if executed else None,
            "false_alarms": false_alarms, "conditional_not_met": conditional, "masked_by_skip": masked,
            "conditional_undecided": undecided, "not_traced": unseen,
            "fixable": sum(1 for f in findings if f.get("fixable")),
            "fixable_executed": sum(1 for f in executed if f.get("fixable")), "still_breaking": still}


# --------------------------------------------------------------------------------------------------
# One entry


def measure(name: str, *, py: Path, site: Path, timeout: float, log) -> dict[str, Any]:
    e = corpus.ENTRIES[name]
    row: dict[str, Any] = {"name": name, "dist": e.dist, "what": e.what}
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"graphmend-realcode-{name}-") as tmp:
        log(f"[{name}] original ...")
        orig = bench.run_child(name, python=str(py), outputs=str(Path(tmp) / "o.pt"), timeout=timeout, calls=1,
                               extra_args=["--realcode", "--coverage"])
        row["original"] = orig
        log(f"[{name}] mended (import hook, scope {','.join(e.packages)}) ...")
        hook = ["--hook", ",".join(e.packages), "--hook-unsafe", "--hook-cache-dir", "none"]
        # --coverage on both sides: the coverage call is one more eager call, and a training step
        # or an EMA update changes the state the compiled call starts from
        mended = bench.run_child(name, python=str(py), path_prefix=[str(bench.SERVER)], hook=hook,
                                 outputs=str(Path(tmp) / "m.pt"), timeout=timeout, calls=1,
                                 extra_args=["--realcode", "--coverage"])
        row["mended"] = mended
        if orig.get("outputs_file") and mended.get("outputs_file"):
            row["compare"] = bench.compare_sides(orig, mended)
    static = findings_for(site, e.check, e.scope)
    row["static_error"] = static.get("error")
    if orig.get("ok"):
        row.update(evaluate(orig, mended if mended.get("ok") else None, static.get("findings") or [],
                            e.packages, site, training=e.training))
    h = mended.get("hook") or {}
    row["hook"] = {k: h.get(k) for k in ("modules", "mended_modules", "fixes", "failed")}
    row["seconds"] = round(time.perf_counter() - t0, 1)
    for side in ("original", "mended"):  # keep the JSON small: drop what the report does not use
        for k in ("coverage", "traced_lines", "graph_details", "messages"):
            row[side].pop(k, None) if k != "messages" else None
    log(f"[{name}] breaks {orig.get('breaks')} -> {mended.get('breaks')}, "
        f"recall {row.get('found')}/{row.get('named_sites')}, executed findings {row.get('findings_executed')} "
        f"confirmed {row.get('confirmed')}, not traced {len(row.get('not_traced') or [])}, "
        f"still breaking {len(row.get('still_breaking') or [])} "
        f"({row['seconds']} s)")
    return row


# --------------------------------------------------------------------------------------------------
# Report


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def _eq3(cmp: dict[str, Any] | None, what: str) -> str:
    if not cmp or not isinstance(cmp.get(what), dict) or "error" in cmp[what]:
        return "-"
    return "/".join("yes" if (cmp[what].get(ph) or {}).get("equal") else "NO" for ph in ("eager", "compiled", "cross"))


def table(rows: list[dict[str, Any]], markdown: bool = True) -> str:
    header = ["model", "package", "breaks before -> after", "break events (log)", "named break sites", "recall",
              "findings (executed)", "confirmed", "precision (executed)", "false alarms", "not traced",
              "fixes applied",
              "still breaking", "outputs equal E/C/X", "messages equal E/C/X"]
    out = []
    for r in rows:
        o, m = r.get("original") or {}, r.get("mended") or {}
        if not o.get("ok"):
            out.append([r["name"], r["dist"], "ERR: " + str(o.get("error", "?")).splitlines()[0][:60]] + ["-"] * 12)
            continue
        after = str(m.get("breaks")) if m.get("ok") else "ERR"
        ev = "{} -> {}".format(len(o.get("graph_break_log") or []),
                               len(m.get("graph_break_log") or []) if m.get("ok") else "ERR")
        out.append([r["name"] + (f" (kept from {r['reused']})" if r.get("reused") else ""), r["dist"],
                    f"{o.get('breaks')} -> {after}", ev, str(r["named_sites"]),
                    f"{r['found']}/{r['named_sites']} ({_pct(r['recall'])})",
                    f"{r['findings']} ({r['findings_executed']})", str(r["confirmed"]), _pct(r["precision"]),
                    str(len(r["false_alarms"])), str(len(r.get("not_traced") or [])),
                    str((r.get("hook") or {}).get("fixes") or 0),
                    str(len(r["still_breaking"])), _eq3(r.get("compare"), "outputs"),
                    _eq3(r.get("compare"), "messages")])
    return bench._format(header, out, markdown)


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rows if (r.get("original") or {}).get("ok")]
    named = sum(r["named_sites"] for r in ok)
    found = sum(r["found"] for r in ok)
    ex = sum(r["findings_executed"] for r in ok)
    conf = sum(r["confirmed"] for r in ok)
    return {"rows": len(rows), "ok": len(ok), "failed": [r["name"] for r in rows if r not in ok],
            "breaks_before": sum(r["original"].get("breaks") or 0 for r in ok),
            "breaks_after": sum((r.get("mended") or {}).get("breaks") or 0 for r in ok),
            "named_sites": named, "found": found, "recall": round(found / named, 3) if named else None,
            "findings_executed": ex, "confirmed": conf, "precision": round(conf / ex, 3) if ex else None,
            "false_alarms": sum(len(r["false_alarms"]) for r in ok),
            "conditional_not_met": sum(len(r.get("conditional_not_met") or []) for r in ok),
            "conditional_undecided": sum(len(r.get("conditional_undecided") or []) for r in ok),
            "masked_by_skip": sum(len(r.get("masked_by_skip") or []) for r in ok),
            "not_traced": sum(len(r.get("not_traced") or []) for r in ok),
            "still_breaking": sum(len(r["still_breaking"]) for r in ok),
            "outputs_equal": all(_eq3(r.get("compare"), "outputs") == "yes/yes/yes" for r in ok),
            "messages_equal": all(_eq3(r.get("compare"), "messages") == "yes/yes/yes" for r in ok)}


def markdown(data: dict[str, Any]) -> str:
    rows, t = data["rows"], data["totals"]
    lines = [table(rows), "",
             f"Total over {t['ok']} of {t['rows']} entries: breaks {t['breaks_before']} -> {t['breaks_after']}; "
             f"recall {_pct(t['recall'])} ({t['found']}/{t['named_sites']} break sites of the kinds GraphMend "
             f"names); precision on executed lines {_pct(t['precision'])} ({t['confirmed']}/"
             f"{t['findings_executed']}), {t['false_alarms']} false alarms; {t['still_breaking']} mended but "
             f"still breaking; outputs bitwise equal on every entry: {'yes' if t['outputs_equal'] else 'NO'}, "
             f"messages equal: {'yes' if t['messages_equal'] else 'NO'}."
             + (f" Failed: {', '.join(t['failed'])}." if t["failed"] else "")
             + (f" Apart from precision: {t.get('conditional_not_met', 0)} findings whose named condition "
                f"(training or eval mode, or a frame inlined) the run did not meet, {t.get('conditional_undecided', 0)} conditional "
                f"findings that did not break whose condition names a value the scoring cannot evaluate "
                f"(listed with it below), {t.get('masked_by_skip', 0)} in code Dynamo "
                f"skipped (fell back to eager), where no break can show, {t.get('not_traced', 0)} on lines "
                "that ran eagerly in a frame Dynamo never traced (or whose rest it ran eagerly after a "
                "break it could not resume from): not traced."
                if t.get("conditional_not_met") or t.get("masked_by_skip") or t.get("conditional_undecided")
                or t.get("not_traced") else "")]
    sections = [("Misses (a named break site no finding covers)", "misses",
                 lambda s: f"{s['file']}:{s['line']} {s['kind']} {s['summary'][:70]!r} `{s['source'][:60]}`"),
                ("False alarms (finding on an executed line, Dynamo did not break there)", "false_alarms",
                 lambda f: f"{f['file']}:{f['line']} {f['code']} {(f.get('message') or '')[:90]}"),
                ("Apart: conditional, condition not met in this run", "conditional_not_met",
                 lambda f: f"{f['file']}:{f['line']} {f['code']} {(f.get('message') or '')[:90]}"),
                ("Apart: conditional, did not break, condition not evaluated by the scoring",
                 "conditional_undecided",
                 lambda f: f"{f['file']}:{f['line']} {f['code']} breaks only when "
                           f"{(f.get('condition') or {}).get('text', '?')}"),
                ("Apart: in code Dynamo skipped (a break before them in the same frame made it fall back "
                 "to eager)", "masked_by_skip",
                 lambda f: f"{f['file']}:{f['line']} {f['code']} in {f['function']}()"),
                ("Apart: not traced (executed eagerly in a frame Dynamo never traced, or after a break "
                 "it could not resume from)", "not_traced",
                 lambda f: f"{f['file']}:{f['line']} {f['code']} ({f['why']})"),
                ("Mended but still breaking", "still_breaking",
                 lambda f: f"{f['file']}:{f['line']} {f['code']} ({f['break'][:70]})"),
                ("Break sites of kinds GraphMend does not name, or with no frame in the entry's packages", "other_sites",
                 lambda s: f"{s['file']}:{s['line']} {s['kind'] or '-'} {s['summary'][:80]!r}"
                           + (f" (an id GraphMend names, another cause: {s['cause']})" if s.get("cause") else ""))]
    for title, key, fmt in sections:
        items: dict[str, list[str]] = {}
        for r in rows:
            for x in r.get(key) or []:
                items.setdefault(fmt(x), []).append(r["name"])
        if items:
            lines += ["", f"{title}:"] + [f"- {k} ({', '.join(v)})" for k, v in sorted(items.items())]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="all", help=f"all, quick ({QUICK}) or a comma list of "
                                                    f"{', '.join(corpus.ENTRIES)}")
    ap.add_argument("--venv", default=str(DEFAULT_VENV))
    ap.add_argument("--no-setup", action="store_true", help="use the venv as it is (no pip install)")
    ap.add_argument("--timeout", type=float, default=900, help="per child (s)")
    ap.add_argument("--reuse", metavar="JSON", help="a previous run's JSON: its rows for the entries not in "
                                                   "--models are kept (marked in the table), the rest measured")
    ap.add_argument("--json", help="write the rows and totals here")
    ap.add_argument("--markdown", action="store_true", help="print markdown tables")
    args = ap.parse_args(argv)
    names = list(corpus.ENTRIES) if args.models == "all" else (QUICK if args.models == "quick" else args.models).split(",")
    unknown = [n for n in names if n not in corpus.ENTRIES]
    if unknown:
        print(f"unknown entries: {', '.join(unknown)}", file=sys.stderr)
        return 2

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    venv = Path(args.venv)
    if not args.no_setup:
        setup_venv(venv, log)
    py = venv_python(venv)
    site = site_packages(py)
    old = {}
    if args.reuse:
        prev = json.loads(Path(args.reuse).read_text())
        old = {r["name"]: {**r, "reused": prev.get("measured", args.reuse)} for r in prev["rows"]}
    measured = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    rows = [measure(n, py=py, site=site, timeout=args.timeout, log=log) if n in names or n not in old else old[n]
            for n in (corpus.ENTRIES if old else names)]
    data = {"rows": rows, "totals": totals(rows), "venv": str(venv), "requirements": corpus.REQUIREMENTS,
            "measured": measured}
    print(markdown(data) if args.markdown else table(rows, markdown=False))
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=1, default=str))
    return 0 if data["totals"]["ok"] == len(rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
