"""Measure torch.compile graph breaks on small real transformers models, original vs mended.

    python benchmarks/models.py [--models t5,bart-fp16,...] [--json out.json] [--markdown]
                                [--side both|original] [--fix-cmd CMD] [--files F,...] [--timeout S]
                                [--hook [--hook-scope transformers] [--hook-safe-only]]

For each model spec (``family[-fp16|-bf16]``; any transformers ``model_type`` works through a generic
small-config fallback, see ``_model_child.FAMILIES`` for the per-family overrides):

* ORIGINAL: a fresh subprocess (``benchmarks/_model_child.py``) imports the installed transformers,
  builds the model from a small config with random weights and measures it (graphs and breaks with a
  counting backend, ``torch._dynamo.explain`` break reasons, recompiles, outputs, messages).
* MENDED: the installed ``transformers`` package is copied to a temp dir, the fix command
  (default ``<python> -m graphmend fix --unsafe-fixes <files>``) rewrites the chosen files of the copy in
  place, and the same child runs with the copy first on ``PYTHONPATH``. A fix command that fails, times
  out or changes nothing is reported as such (the mended side is then skipped, or equal to the original).

* HOOK (``--hook``): the same child with GraphMend's import hook installed in it
  (``graphmend.probe.importhook.install(["transformers"], unsafe=True)``, what ``graphmend run --scope
  transformers --unsafe-fixes`` does), so the INSTALLED transformers is mended as it is imported, no file
  written. The hook child runs with a fresh cache (cold); a second, build-only child with the same cache
  measures the warm import. A second table compares the hook with the mended copy.

The table compares graphs/breaks/recompiles, outputs (bitwise ``torch.equal``, else max abs difference)
and messages (transformers log records, warnings, prints; in order) for eager and compiled runs, plus
original-eager vs mended-compiled ("X"), since a mend must not lose messages.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SERVER = REPO / "server"
CHILD = HERE / "_model_child.py"

sys.path.insert(0, str(HERE))
from _model_child import DEFAULT_SPECS, FAMILIES, SPEC_SETS, expand_specs, parse_spec  # noqa: E402

#: Files shared by many families, mended together with the family's own modeling files by default.
SHARED_FILES = [
    "modeling_rope_utils.py",
    "modeling_attn_mask_utils.py",
    "modeling_utils.py",
    "integrations/sdpa_attention.py",
]

DEFAULT_FIX_CMD = "{python} -m graphmend fix --unsafe-fixes"


# --------------------------------------------------------------------------------------------------
# Locating transformers and the files to mend
# --------------------------------------------------------------------------------------------------


def transformers_root(python: str = sys.executable) -> Path:
    """Directory of the transformers package ``python`` imports (found without importing it)."""
    code = ("import importlib.util as u; s = u.find_spec('transformers'); "
            "print(s.submodule_search_locations[0] if s else '')")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60,
                         env=_child_env([]))
    path = out.stdout.strip()
    if not path:
        raise RuntimeError(f"transformers is not importable by {python}: {out.stderr.strip()}")
    return Path(path)


def family_dir(root: Path, family: str) -> str:
    model_type = FAMILIES.get(family, {}).get("model_type", family)
    cand = model_type.replace("-", "_")
    if (root / "models" / cand).is_dir():
        return cand
    # special names (e.g. "xlm-roberta" style exceptions): ask transformers itself
    code = ("from transformers.models.auto.configuration_auto import model_type_to_module_name as m; "
            f"print(m({model_type!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=_child_env([]))
    return out.stdout.strip() or cand


def default_files(root: Path, family: str) -> list[str]:
    """The family's ``models/<family>/modeling_*.py`` (PyTorch only), its extra files, shared files."""
    sub = family_dir(root, family)
    files = []
    for path in sorted((root / "models" / sub).glob("modeling_*.py")):
        if path.name.startswith(("modeling_tf_", "modeling_flax_")):
            continue
        files.append(path.relative_to(root).as_posix())
    files += FAMILIES.get(family, {}).get("extra_files", [])
    files += SHARED_FILES
    seen: set[str] = set()
    return [f for f in files if not (f in seen or seen.add(f))]


def expand_files(root: Path, patterns: list[str], family: str) -> list[str]:
    """Expand ``{family}`` and globs in user-given file patterns (relative to the package root)."""
    out: list[str] = []
    for pat in patterns:
        pat = pat.strip().replace("{family}", family_dir(root, family))
        if not pat:
            continue
        matches = sorted(glob.glob(str(root / pat), recursive=True))
        out += [Path(m).relative_to(root).as_posix() for m in matches] or [pat]
    return out


# --------------------------------------------------------------------------------------------------
# Mended copy
# --------------------------------------------------------------------------------------------------


_VENDOR_IMPORT = re.compile(r"^([ \t]*)(?:from \.+ import _graphmend_runtime as graphmend|import _graphmend_runtime as graphmend)"
                            r"[ \t]*$", re.M)


def _sha_as_import(path: Path) -> str | None:
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    text = _VENDOR_IMPORT.sub(lambda m: m.group(1) + "from graphmend import runtime as graphmend", text)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _sha(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _tail(text: str, n: int = 2000) -> str:
    return text if len(text) <= n else "..." + text[-n:]


def make_mended_copy(root: Path, files: list[str], fix_cmd: str, python: str, workdir: Path,
                     timeout: float, ok_rcs: tuple[int, ...] = (0, 1)) -> dict[str, Any]:
    """Copy ``root`` into ``workdir/transformers`` and run the fix command on ``files`` there.

    ``ok_rcs``: exit codes meaning the command worked. ``graphmend fix`` exits 1 when breaks remain
    after fixing (like ``ruff check --fix``) and 2 on errors, so 0 and 1 are both success by default.
    Status: ``ok`` (worked, files changed), ``no-op`` (worked, nothing changed), ``failed`` (other exit
    code, or a Python traceback on stderr whatever the exit code), ``timeout``, ``error`` (could not run
    it)."""
    info: dict[str, Any] = {"files": files, "dir": str(workdir), "status": "error"}
    t0 = time.perf_counter()
    dest = workdir / "transformers"
    shutil.copytree(root, dest, symlinks=True)
    info["copy_s"] = round(time.perf_counter() - t0, 2)
    targets = [dest / f for f in files]
    missing = [f for f in files if not (dest / f).is_file()]
    info["missing"] = missing
    targets = [t for t in targets if t.is_file()]
    before = {t: _sha(t) for t in targets}
    cmd = [part.replace("{python}", python) for part in shlex.split(fix_cmd)] + [str(t) for t in targets]
    info["cmd"] = " ".join(shlex.quote(c) for c in cmd)
    t1 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=str(REPO),
                              env=_child_env([str(SERVER)]))
    except subprocess.TimeoutExpired as exc:
        info.update(status="timeout", detail=f"fix command timed out after {timeout:.0f} s",
                    stdout=_tail(_text(exc.stdout)), stderr=_tail(_text(exc.stderr)))
        return info
    except OSError as exc:
        info.update(status="error", detail=f"could not run fix command: {exc}")
        return info
    info["fix_s"] = round(time.perf_counter() - t1, 2)
    info["rc"] = proc.returncode
    info["stdout"] = _tail(proc.stdout)
    info["stderr"] = _tail(proc.stderr)
    changed = [t.relative_to(dest).as_posix() for t in targets if _sha(t) != before[t]]
    info["changed"] = changed
    # content hashes of the mended files: attributes a result to the exact rewrite (and helper block)
    info["changed_sha256"] = {f: _sha(dest / f) for f in changed}
    # the same texts with the vendored copy's import written as the import hook binds the runtime
    # (`from graphmend import runtime as graphmend`, runtime "import"): the hook mends with the
    # installed module, so the copy equals the hook's text up to that one line
    info["changed_sha256_as_import"] = {f: _sha_as_import(dest / f) for f in changed}
    out_last = proc.stdout.strip().splitlines()
    summary = out_last[-1] if out_last else ""
    if "Traceback (most recent call last)" in proc.stderr:
        # An uncaught exception exits 1 too, which would otherwise read as "fixed, breaks remain".
        last = proc.stderr.strip().splitlines()
        info.update(status="failed", detail=f"rc={proc.returncode}, crashed: {last[-1] if last else ''}")
    elif proc.returncode not in ok_rcs:
        last = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        info.update(status="failed", detail=f"rc={proc.returncode}: {last[-1] if last else ''}")
    elif not changed:
        info.update(status="no-op", detail=f"rc={proc.returncode}, no file changed. {summary}".strip())
    else:
        info.update(status="ok", detail=f"rc={proc.returncode}, {len(changed)} file(s) changed "
                                        f"({', '.join(changed)}). {summary}".strip())
    return info


def _text(data: Any) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else str(data)


# --------------------------------------------------------------------------------------------------
# Static findings (graphmend check) and the rewrites a fix applied
# --------------------------------------------------------------------------------------------------


def static_findings(base: Path, files: list[str], python: str = sys.executable,
                    timeout: float = 300, prefix: str = "transformers/",
                    options: tuple[str, ...] = ()) -> dict[str, Any]:
    """``graphmend check --unsafe-fixes --format json`` on ``base/<file>`` for each file; findings with
    package-relative paths (``transformers/models/...``). Returns {"findings": [...]} or {"error": ...}."""
    targets = [str(base / f) for f in files if (base / f).is_file()]
    if not targets:
        return {"findings": []}
    cmd = [python, "-m", "graphmend", "check", "--unsafe-fixes", "--no-cache", "--exit-zero",
           "--format", "json", *options] + targets
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=str(REPO),
                              env=_child_env([str(SERVER)]))
        raw = json.loads(proc.stdout or "[]")
    except Exception as exc:  # reported, never raised
        return {"error": f"{type(exc).__name__}: {exc}"}
    base_s = str(base.resolve()).replace(os.sep, "/")
    out = []
    for f in raw:
        path = str(Path(f["path"]).resolve()).replace(os.sep, "/")
        rel = path[len(base_s) + 1:] if path.startswith(base_s + "/") else path
        span = f.get("span") or {}
        out.append({"file": prefix + rel, "line": f.get("line"), "col": (span.get("start") or {}).get("col"),
                    "end_line": f.get("end_line") or (span.get("end") or {}).get("line") or f.get("line"),
                    "code": f.get("code"), "gb_id": f.get("gb_id"), "rewrite": f.get("rewrite"),
                    "applicability": f.get("applicability"), "fixable": f.get("fixable"),
                    "entry": f.get("entry"), "message": f.get("message"),
                    "decline_reason": f.get("decline_reason"), "condition": f.get("condition")})
    return {"findings": out}


def _code_counts(findings: list[dict[str, Any]], fixable_only: bool = False) -> dict[str, int]:
    counts: dict[str, int] = {}
    for f in findings:
        if fixable_only and not f.get("fixable"):
            continue
        key = f"{f['code']}/{f['rewrite']}" if f.get("rewrite") else str(f["code"])
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def applied_rewrites(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> dict[str, int]:
    """Rewrites applied by the fix: fixable findings before, by ``code/rewrite``, minus the fixable
    findings of the same kind still reported on the mended files. (Declined findings of the same
    code stay after the fix and must not be counted against the applied ones.)"""
    b = _code_counts(before, fixable_only=True)
    a = _code_counts(after, fixable_only=True)
    return {key: n - a.get(key, 0) for key, n in b.items() if n - a.get(key, 0) > 0}


def break_categories(res: dict[str, Any] | None) -> dict[str, int]:
    """First-call graph breaks of one side by Dynamo gb type (``GBxxxx``, else the reason summary)."""
    counts: dict[str, int] = {}
    for r in (res or {}).get("break_reasons", []) or []:
        key = r.get("gb") or (r.get("summary") or "?")[:40]
        counts[key] = counts.get(key, 0) + 1
    rest = ((res or {}).get("breaks") or 0) - sum(counts.values())
    if rest > 0:  # first-call graphs that ended without a break reason (e.g. an empty graph, a resume)
        counts["no reason"] = rest
    return dict(sorted(counts.items()))


# --------------------------------------------------------------------------------------------------
# Children
# --------------------------------------------------------------------------------------------------


def _child_env(path_prefix: list[str]) -> dict[str, str]:
    env = dict(os.environ)
    env["HF_HUB_OFFLINE"] = "1"
    env["TRANSFORMERS_OFFLINE"] = "1"
    env["HF_DATASETS_OFFLINE"] = "1"
    env["TOKENIZERS_PARALLELISM"] = "false"
    env.pop("TORCH_LOGS", None)
    env.pop("TORCH_COMPILE_DEBUG", None)
    parts = list(path_prefix)
    if env.get("PYTHONPATH"):
        parts.append(env["PYTHONPATH"])
    if parts:
        env["PYTHONPATH"] = os.pathsep.join(parts)
    else:
        env.pop("PYTHONPATH", None)
    return env


def run_child(spec: str, *, python: str = sys.executable, path_prefix: list[str] | None = None,
              outputs: str | None = None, timeout: float = 600, calls: int = 2,
              explain: bool = True, auto_class: str | None = None,
              hook: list[str] | None = None, extra_args: list[str] | None = None) -> dict[str, Any]:
    """Run ``_model_child.py`` for one spec in a fresh process; return its JSON (never raises).
    ``hook``: extra child arguments installing the import hook (``--hook SCOPE ...``);
    ``extra_args``: any other child arguments (e.g. ``--coverage``)."""
    cmd = ([python, str(CHILD), "--spec", spec, "--calls", str(calls)] + list(hook or [])
           + list(extra_args or []))
    if outputs:
        cmd += ["--outputs", outputs]
    if not explain:
        cmd.append("--no-explain")
    if auto_class:
        cmd += ["--auto-class", auto_class]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env=_child_env(path_prefix or []), cwd=str(REPO))
    except subprocess.TimeoutExpired as exc:
        return {"spec": spec, "ok": False, "timeout": True,
                "error": f"TIMEOUT: child did not finish within {timeout:.0f} s",
                "stderr_tail": _tail(_text(exc.stderr))}
    wall = round(time.perf_counter() - t0, 2)
    result = None
    for line in reversed(proc.stdout.strip().splitlines()):
        if line.startswith("{"):
            try:
                result = json.loads(line)
                break
            except json.JSONDecodeError:
                continue
    if result is None:
        return {"spec": spec, "ok": False, "rc": proc.returncode, "wall_s": wall,
                "error": f"child exited rc={proc.returncode} without a JSON result",
                "stderr_tail": _tail(proc.stderr), "stdout_tail": _tail(proc.stdout)}
    result["rc"] = proc.returncode
    result["wall_s"] = wall
    if not result.get("ok"):
        result["stderr_tail"] = _tail(proc.stderr)
    return result


# --------------------------------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------------------------------


#: Tolerance (rtol, atol) by dtype for rewrites that change the arithmetic on purpose ([Route],
#: GM601 and GM605: every expert runs on all rows; a matrix product over another block of rows may differ in
#: the last bits). Safe mends must be bitwise equal; "close" is accepted only for rows where such a
#: rewrite was applied (see ``ARITHMETIC_REWRITES``).
TOLERANCE = {"float32": (1e-5, 1e-5), "float64": (1e-10, 1e-10), "float16": (2e-3, 2e-3),
             "bfloat16": (1.6e-2, 1.6e-2)}
ARITHMETIC_REWRITES = ("GM601/route", "GM605/route")


def _close(x, y) -> bool:
    import torch

    rtol, atol = TOLERANCE.get(str(x.dtype).replace("torch.", ""), (0.0, 0.0))
    return bool(torch.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True))


def compare_tensors(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Bitwise comparison of two {name: tensor} dicts; max abs difference where not equal; `close`:
    every tensor within ``TOLERANCE`` of its dtype (equal tensors are close)."""
    import torch

    res: dict[str, Any] = {"equal": True, "close": True, "max_abs_diff": 0.0, "mismatched": []}
    if set(a) != set(b):
        res["equal"] = False
        res["close"] = False
        res["mismatched"].append({"keys_only_in_first": sorted(set(a) - set(b)),
                                  "keys_only_in_second": sorted(set(b) - set(a))})
    for name in sorted(set(a) & set(b)):
        x, y = a[name], b[name]
        if x.shape != y.shape or x.dtype != y.dtype:
            res["equal"] = res["close"] = False
            res["mismatched"].append({"name": name, "why": f"{tuple(x.shape)}/{x.dtype} vs "
                                                           f"{tuple(y.shape)}/{y.dtype}"})
            continue
        if torch.equal(x, y):
            continue
        if x.is_floating_point() and torch.equal(torch.isnan(x), torch.isnan(y)) and torch.equal(
                x.nan_to_num(0.0), y.nan_to_num(0.0)):
            continue  # equal up to NaN positions (torch.equal treats NaN != NaN)
        res["equal"] = False
        if not (x.is_floating_point() and _close(x, y)):
            res["close"] = False
        diff = (x.double() - y.double()).abs().nan_to_num(float("inf")).max().item() if x.numel() else 0.0
        res["max_abs_diff"] = max(res["max_abs_diff"], diff)
        res["mismatched"].append({"name": name, "max_abs_diff": diff})
    return res


def _event_key(ev: dict[str, Any]) -> tuple:
    # file:line is left out: mended files have other line numbers.
    return (ev.get("kind"), ev.get("level"), ev.get("name"), ev.get("message"))


def _model_events(calls: list[list[dict[str, Any]]]) -> list[list[tuple]]:
    """Per call, the model's messages: drop warnings raised inside torch itself (Dynamo's own)."""
    return [[_event_key(e) for e in call
             if not (e.get("kind") == "warning" and str(e.get("where", "")).startswith("torch/"))]
            for call in calls]


def compare_messages(a: list[list[dict[str, Any]]], b: list[list[dict[str, Any]]]) -> dict[str, Any]:
    ka, kb = _model_events(a), _model_events(b)
    res: dict[str, Any] = {"equal": ka == kb,
                           "counts": [sum(map(len, ka)), sum(map(len, kb))]}
    if ka != kb:
        fa = [e for call in ka for e in call]
        fb = [e for call in kb for e in call]
        res["only_in_first"] = [list(e) for e in fa if e not in fb][:10]
        res["only_in_second"] = [list(e) for e in fb if e not in fa][:10]
        if not res["only_in_first"] and not res["only_in_second"]:
            res["note"] = "same messages, different order or per-call distribution"
    return res


def compare_sides(orig: dict[str, Any], mended: dict[str, Any]) -> dict[str, Any]:
    import torch

    out: dict[str, Any] = {}
    try:
        a = torch.load(orig["outputs_file"], weights_only=True)
        b = torch.load(mended["outputs_file"], weights_only=True)
        out["outputs"] = {
            "eager": compare_tensors(a.get("eager", {}), b.get("eager", {})),
            "compiled": compare_tensors(a.get("compiled", {}), b.get("compiled", {})),
            "cross": compare_tensors(a.get("eager", {}), b.get("compiled", {})),
        }
    except Exception as exc:  # pragma: no cover - reported, not raised
        out["outputs"] = {"error": f"{type(exc).__name__}: {exc}"}
    mo, mm = orig.get("messages", {}), mended.get("messages", {})
    out["messages"] = {
        "eager": compare_messages(mo.get("eager", []), mm.get("eager", [])),
        "compiled": compare_messages(mo.get("compiled", []), mm.get("compiled", [])),
        "cross": compare_messages(mo.get("eager", []), mm.get("compiled", [])),
        "build": compare_messages([mo.get("build", [])], [mm.get("build", [])]),
    }
    return out


def self_check(res: dict[str, Any]) -> dict[str, Any]:
    """Within one side: does compiling alone keep outputs and messages (eager vs compiled)?"""
    import torch

    out: dict[str, Any] = {}
    try:
        saved = torch.load(res["outputs_file"], weights_only=True)
        out["outputs"] = compare_tensors(saved.get("eager", {}), saved.get("compiled", {}))
    except Exception as exc:  # pragma: no cover
        out["outputs"] = {"error": f"{type(exc).__name__}: {exc}"}
    msgs = res.get("messages", {})
    out["messages"] = compare_messages(msgs.get("eager", []), msgs.get("compiled", []))
    return out


# --------------------------------------------------------------------------------------------------
# Orchestration
# --------------------------------------------------------------------------------------------------


def measure_spec(spec: str, *, side: str = "both", python: str = sys.executable,
                 root: Path | None = None, files: list[str] | None = None,
                 extra_files: list[str] | None = None, fix_cmd: str = DEFAULT_FIX_CMD,
                 timeout: float = 600, fix_timeout: float = 600, calls: int = 2, explain: bool = True,
                 auto_class: str | None = None, workdir: Path | None = None,
                 fix_ok_rcs: tuple[int, ...] = (0, 1),
                 measure_on_fix_failure: bool = False, log=None,
                 hook_scope: str | None = None, hook_unsafe: bool = True,
                 coverage: bool = False) -> dict[str, Any]:
    """Measure one spec: ORIGINAL (always), MENDED if ``side == "both"``, and HOOK if ``hook_scope``
    (the installed package mended at import). Never raises for child failures, timeouts or fix
    failures: they are reported in the returned dict."""
    log = log or (lambda msg: None)
    family, dtype = parse_spec(spec)
    root = root or transformers_root(python)
    own_tmp = workdir is None
    workdir = Path(tempfile.mkdtemp(prefix=f"graphmend-bench-{spec}-")) if own_tmp else workdir
    workdir.mkdir(parents=True, exist_ok=True)
    entry: dict[str, Any] = {"spec": spec, "family": family, "dtype": dtype,
                             "generic_fallback": family not in FAMILIES}
    try:
        log(f"[{spec}] original ...")
        entry["original"] = run_child(spec, python=python, outputs=str(workdir / "original.pt"),
                                      timeout=timeout, calls=calls, explain=explain,
                                      auto_class=auto_class,
                                      extra_args=["--coverage"] if coverage else None)
        if entry["original"].get("outputs_file"):
            entry["original_self_check"] = self_check(entry["original"])
        if hook_scope:
            measure_hook(entry, spec, workdir, hook_scope, hook_unsafe, python=python, timeout=timeout,
                         calls=calls, explain=explain, auto_class=auto_class, log=log)
        if side != "both":
            return entry
        file_list = expand_files(root, files, family) if files else default_files(root, family)
        if extra_files:
            file_list += [f for f in expand_files(root, extra_files, family) if f not in file_list]
        log(f"[{spec}] mending {len(file_list)} file(s) ...")
        try:
            fix = make_mended_copy(root, file_list, fix_cmd, python, workdir / "mended", fix_timeout,
                                   fix_ok_rcs)
        except Exception as exc:
            fix = {"status": "error", "detail": f"{type(exc).__name__}: {exc}", "files": file_list}
        entry["fix"] = fix
        entry["static"] = static_findings(root, file_list, python)
        if fix.get("status") in ("ok", "no-op"):
            after = static_findings(workdir / "mended" / "transformers", file_list, python)
            entry["rewrites"] = applied_rewrites(entry["static"].get("findings", []),
                                                 after.get("findings", []))
            entry["static_after"] = {"counts": _code_counts(after.get("findings", [])),
                                     "error": after.get("error")}
        entry["static"]["counts"] = _code_counts(entry["static"].get("findings", []))
        if fix["status"] in ("failed", "timeout", "error") and not measure_on_fix_failure:
            entry["mended"] = {"ok": False, "skipped": True,
                               "error": f"not measured: fix {fix['status']} ({fix.get('detail', '')})"}
            return entry
        log(f"[{spec}] mended ...")
        # the mended copy must run on its vendored runtime alone: graphmend is made unimportable
        # there (unless the fix command asked for `--runtime import`)
        needs_gm = re.search(r"--runtime[= ]import", fix_cmd) is not None
        mended = run_child(spec, python=python, path_prefix=[str(workdir / "mended"), str(SERVER)],
                           outputs=str(workdir / "mended.pt"), timeout=timeout, calls=calls,
                           explain=explain, auto_class=auto_class,
                           extra_args=[] if needs_gm else ["--without-graphmend"])
        tf_file = str(mended.get("transformers_file", ""))
        if mended.get("transformers_file") and not tf_file.startswith(str(workdir / "mended")):
            mended["ok"] = False
            mended["error"] = f"mended child imported {tf_file}, not the mended copy"
        entry["mended"] = mended
        if mended.get("ok"):  # breaks on lines the fix wrote: must be none
            from still_breaking import still_breaking
            entry["still_breaking"] = still_breaking(root, workdir / "mended" / "transformers", mended)
        if entry["original"].get("outputs_file") and mended.get("outputs_file"):
            entry["compare"] = compare_sides(entry["original"], mended)
            entry["mended_self_check"] = self_check(mended)
        if entry.get("hook"):
            entry["hook_vs_copy"] = compare_hook_copy(mended, entry["hook"], entry.get("fix"))
        return entry
    finally:
        entry["breaks_by_category"] = {"original": break_categories(entry.get("original")),
                                       "mended": break_categories(entry.get("mended"))}
        if own_tmp:
            shutil.rmtree(workdir, ignore_errors=True)


def measure_hook(entry: dict[str, Any], spec: str, workdir: Path, scope: str, unsafe: bool, *,
                 python: str, timeout: float, calls: int, explain: bool, auto_class: str | None,
                 log) -> None:
    """HOOK side: the installed package mended by the import hook inside the child (fresh cache),
    then a build-only child with the now warm cache (the hook's import-time overhead)."""
    cache = workdir / "hook-cache"
    shutil.rmtree(cache, ignore_errors=True)
    args = ["--hook", scope, "--hook-cache-dir", str(cache)] + (["--hook-unsafe"] if unsafe else [])
    log(f"[{spec}] hook (cold cache) ...")
    hook = run_child(spec, python=python, path_prefix=[str(SERVER)], outputs=str(workdir / "hook.pt"),
                     timeout=timeout, calls=calls, explain=explain, auto_class=auto_class, hook=args)
    orig_tf = entry["original"].get("transformers_file")
    if hook.get("transformers_file") and orig_tf and hook["transformers_file"] != orig_tf:
        hook["ok"] = False
        hook["error"] = f"hook child imported {hook['transformers_file']}, not {orig_tf}"
    entry["hook"] = hook
    if entry["original"].get("outputs_file") and hook.get("outputs_file"):
        entry["hook_compare"] = compare_sides(entry["original"], hook)
    log(f"[{spec}] hook (warm cache, build only) ...")
    warm = run_child(spec, python=python, path_prefix=[str(SERVER)], timeout=timeout,
                     auto_class=auto_class, hook=args + ["--build-only"])
    entry["hook_warm"] = {k: warm.get(k) for k in ("ok", "error", "timings", "wall_s")}
    if warm.get("hook"):
        entry["hook_warm"]["hook"] = {k: v for k, v in warm["hook"].items() if k != "records"}


def _reason_keys(res: dict[str, Any]) -> list[tuple]:
    """Break reasons without file:line (mended copies have other line numbers than the originals)."""
    return [(r.get("gb"), r.get("summary"), (r.get("site") or {}).get("function"))
            for r in res.get("break_reasons", [])]


def compare_mended_texts(fix: dict[str, Any] | None, hook: dict[str, Any]) -> dict[str, Any]:
    """The files the copy's fix changed vs the modules the hook mended, by sha256 of the text (the
    copy's vendored-runtime import read as the hook's import of the installed runtime)."""
    copy_sha = dict((fix or {}).get("changed_sha256_as_import") or (fix or {}).get("changed_sha256") or {})
    hook_sha = {}
    for r in (hook.get("hook") or {}).get("records", []):
        if r.get("applied") and r.get("text_sha256") and r["module"].startswith("transformers."):
            rel = r["module"][len("transformers."):].replace(".", "/")
            rel += "/__init__.py" if r["path"].endswith("__init__.py") else ".py"
            hook_sha[rel] = r["text_sha256"]
    both = sorted(set(copy_sha) & set(hook_sha))
    return {"identical": [f for f in both if copy_sha[f] == hook_sha[f]],
            "different": [f for f in both if copy_sha[f] != hook_sha[f]],
            "only_copy": sorted(set(copy_sha) - set(hook_sha)),
            "only_hook": sorted(set(hook_sha) - set(copy_sha))}


def compare_hook_copy(copy: dict[str, Any], hook: dict[str, Any],
                      copy_fix: dict[str, Any] | None = None) -> dict[str, Any]:
    """Does mending at import give what mending a copy gave? Graphs, breaks, recompiles, break
    reasons (not their lines), the compiled outputs (bitwise), and the mended texts."""
    import torch

    out: dict[str, Any] = {}
    for k in ("graphs", "breaks", "recompiles"):
        out[k] = {"copy": copy.get(k), "hook": hook.get(k), "equal": copy.get(k) == hook.get(k)}
    out["break_reasons_equal"] = _reason_keys(copy) == _reason_keys(hook)
    try:
        a = torch.load(copy["outputs_file"], weights_only=True)
        b = torch.load(hook["outputs_file"], weights_only=True)
        out["outputs"] = {ph: compare_tensors(a.get(ph, {}), b.get(ph, {})) for ph in ("eager", "compiled")}
    except Exception as exc:  # pragma: no cover - reported, not raised
        out["outputs"] = {"error": f"{type(exc).__name__}: {exc}"}
    out["texts"] = compare_mended_texts(copy_fix, hook)
    out["equal"] = (all(out[k]["equal"] for k in ("graphs", "breaks", "recompiles"))
                    and all(v.get("equal") for v in out["outputs"].values() if isinstance(v, dict)))
    return out


# --------------------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------------------


def hook_table_rows(results: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    header = ["model", "dtype", "graphs before", "graphs copy", "graphs hook", "breaks copy/hook",
              "recompiles copy/hook", "hook = copy", "hook outputs equal E/C/X",
              "hook messages equal E/C/X", "hook mended modules (fixes)", "mended texts = copy",
              "patched after import",
              "hook s cold/warm", "build s plain/cold/warm"]
    rows = []
    for e in results:
        h = e.get("hook")
        if h is None:
            continue
        o, m = e.get("original") or {}, e.get("mended")
        hc = e.get("hook_compare") or {}
        outs, msgs = hc.get("outputs") or {}, hc.get("messages") or {}
        hv = e.get("hook_vs_copy")
        if hv is None:
            same = "-"
        elif hv.get("equal"):
            same = "yes" + ("" if hv.get("break_reasons_equal") else " (reasons differ)")
        else:
            diffs = [k for k in ("graphs", "breaks", "recompiles") if not hv[k]["equal"]]
            diffs += [f"outputs {ph}" for ph, v in (hv.get("outputs") or {}).items()
                      if isinstance(v, dict) and not v.get("equal")]
            same = "no: " + ", ".join(diffs)
        hs = h.get("hook") or {}
        warm = (e.get("hook_warm") or {}).get("hook") or {}
        late = sum(len(v) for v in (hs.get("late") or {}).values())
        missed = sum(len(v) for v in (hs.get("late_missed") or {}).values())
        rows.append([
            e["family"], e["dtype"], _num(o, "graphs"), _num(m, "graphs"), _num(h, "graphs"),
            f"{_num(m, 'breaks')}/{_num(h, 'breaks')}", f"{_num(m, 'recompiles')}/{_num(h, 'recompiles')}",
            same,
            "/".join(_eq(outs.get(k)) for k in ("eager", "compiled", "cross")) if outs else "-",
            "/".join(_eq(msgs.get(k)) for k in ("eager", "compiled", "cross")) if msgs else "-",
            f"{hs.get('mended_modules', '-')} ({hs.get('fixes', '-')}) of {hs.get('modules', '-')}"
            + (f", {len(hs['failed'])} failed" if hs.get("failed") else ""),
            _texts_cell((hv or {}).get("texts")),
            f"{late}" + (f" ({missed} missed)" if missed else ""),
            f"{hs.get('seconds', '-')}/{warm.get('seconds', '-')}",
            "/".join(str(x) for x in ((o.get("timings") or {}).get("build_s", "-"),
                                      (h.get("timings") or {}).get("build_s", "-"),
                                      ((e.get("hook_warm") or {}).get("timings") or {}).get("build_s", "-"))),
        ])
    return header, rows


def _texts_cell(t: dict[str, Any] | None) -> str:
    if not t:
        return "-"
    n = len(t["identical"]) + len(t["different"])
    cell = f"{len(t['identical'])}/{n} identical"
    if t["only_copy"]:
        cell += f"; copy only: {', '.join(t['only_copy'])}"
    if t["only_hook"]:
        cell += f"; hook only: {', '.join(t['only_hook'])}"
    return cell


def _format(header: list[str], rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        esc = lambda s: s.replace("|", "\\|")  # noqa: E731
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(header)]
    fmt = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows])


def format_hook_table(results: list[dict[str, Any]], markdown: bool = False) -> str:
    header, rows = hook_table_rows(results)
    return _format(header, rows, markdown) if rows else ""


def reason_label(reason: dict[str, Any]) -> str:
    site = reason.get("site") or {}
    where = f"{site.get('short', '?').removeprefix('transformers/')}:{site.get('line', '?')}"
    gb = reason.get("gb") or "-"
    return f"{gb} {reason.get('summary', '')[:60]} @ {where}"


def summarize_reasons(reasons: list[dict[str, Any]]) -> str:
    counts: dict[str, int] = {}
    for r in reasons:
        label = reason_label(r)
        counts[label] = counts.get(label, 0) + 1
    return "; ".join(f"{k} (x{v})" if v > 1 else k for k, v in counts.items()) or "none"


def _num(res: dict[str, Any] | None, key: str) -> str:
    if not res:
        return "-"
    if res.get("timeout"):
        return "TIMEOUT"
    if res.get("skipped"):
        return "-"
    if not res.get("ok") and res.get(key) is None:
        return "ERR"
    val = res.get(key)
    return "-" if val is None else str(val)


def _eq(cmp: dict[str, Any] | None) -> str:
    if not cmp:
        return "-"
    if "error" in cmp:
        return "ERR"
    if cmp.get("equal"):
        return "yes"
    if cmp.get("close") and "max_abs_diff" in cmp:
        return f"tol({cmp['max_abs_diff']:.1e})"  # within TOLERANCE, not bitwise
    if "max_abs_diff" in cmp:
        return f"no({cmp['max_abs_diff']:.1e})"
    return "no"


def table_rows(results: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    header = ["model", "dtype", "graphs before", "graphs after", "breaks before", "breaks after",
              "recompiles b/a", "outputs equal E/C/X", "messages equal E/C/X", "fix",
              "breaks by category (before)", "rewrites applied", "mended but still breaking",
              "remaining break reasons"]
    rows = []
    for e in results:
        o, m = e.get("original"), e.get("mended")
        cmp = e.get("compare") or {}
        outs, msgs = cmp.get("outputs") or {}, cmp.get("messages") or {}
        fix = e.get("fix")
        if m is None:
            fix_txt = "not run"
            remaining = summarize_reasons(o.get("break_reasons", [])) if o and o.get("ok") else (
                o.get("error", "?") if o else "?")
            remaining = f"(original) {remaining}"
        else:
            fix_txt = fix["status"] if fix else "?"
            if m.get("ok"):
                remaining = summarize_reasons(m.get("break_reasons", []))
            else:
                remaining = m.get("error", "?").splitlines()[0][:120]
        if o and not o.get("ok"):
            remaining = f"ORIGINAL FAILED: {o.get('error', '?').splitlines()[0][:120]}"
        name = e["family"] + (" (generic)" if e.get("generic_fallback") else "")
        rows.append([
            name, e["dtype"], _num(o, "graphs"), _num(m, "graphs"), _num(o, "breaks"),
            _num(m, "breaks"), f"{_num(o, 'recompiles')}/{_num(m, 'recompiles')}",
            "/".join(_eq(outs.get(k)) for k in ("eager", "compiled", "cross")) if outs else "-",
            "/".join(_eq(msgs.get(k)) for k in ("eager", "compiled", "cross")) if msgs else "-",
            fix_txt, _counts_cell((e.get("breaks_by_category") or {}).get("original")),
            _counts_cell(e.get("rewrites")) if "rewrites" in e else "-",
            str(len(e["still_breaking"])) if "still_breaking" in e else "-", remaining,
        ])
    return header, rows


def _counts_cell(counts: dict[str, int] | None) -> str:
    if counts is None:
        return "-"
    return ", ".join(f"{k} x{v}" for k, v in counts.items()) or "none"


def totals(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Paper-style total over the rows measured on both sides: breaks before/after, the share
    eliminated, rows brought to zero; clean rows (no break before) and whether they stayed unchanged
    (no rewrite, or bitwise-equal eager and compiled outputs); per-category and per-rewrite sums."""
    rows = [r for r in results if isinstance((r.get("original") or {}).get("breaks"), int)
            and isinstance((r.get("mended") or {}).get("breaks"), int)]
    before = sum(r["original"]["breaks"] for r in rows)
    after = sum(r["mended"]["breaks"] for r in rows)
    cats: dict[str, list[int]] = {}
    rew: dict[str, int] = {}
    for r in rows:
        bc = r.get("breaks_by_category") or {}
        for side, idx in (("original", 0), ("mended", 1)):
            for k, v in (bc.get(side) or {}).items():
                cats.setdefault(k, [0, 0])[idx] += v
        for k, v in (r.get("rewrites") or {}).items():
            rew[k] = rew.get(k, 0) + v
    clean = []
    for r in rows:
        if r["original"]["breaks"] != 0:
            continue
        outs = ((r.get("compare") or {}).get("outputs") or {})
        equal = all(isinstance(v, dict) and v.get("equal") for k, v in outs.items()
                    if k in ("eager", "compiled")) if outs else None
        clean.append({"spec": r["spec"], "fix": (r.get("fix") or {}).get("status"),
                      "rewrites": r.get("rewrites") or {}, "outputs_equal": equal,
                      "breaks_after": r["mended"]["breaks"],
                      "unchanged": r["mended"]["breaks"] == 0 and (
                          (r.get("fix") or {}).get("status") == "no-op" or bool(equal))})
    failed = [r["spec"] for r in results if r not in rows]
    return {
        "rows": len(rows), "breaks_before": before, "breaks_after": after,
        "eliminated": before - after,
        "eliminated_pct": round(100.0 * (before - after) / before, 1) if before else None,
        "rows_with_breaks": sum(1 for r in rows if r["original"]["breaks"] > 0),
        "rows_to_zero": sum(1 for r in rows if r["original"]["breaks"] > 0 and r["mended"]["breaks"] == 0),
        "by_category": {k: {"before": v[0], "after": v[1]} for k, v in sorted(cats.items())},
        "by_rewrite": dict(sorted(rew.items())),
        "clean_rows": clean,
        "still_breaking": sum(len(r.get("still_breaking") or []) for r in rows),
        "still_breaking_sites": [f"{r['spec']}: {b['file'].removeprefix('transformers/')}:{b['line']} "
                                 f"{b['gb'] or ''} {b['reason'][:60]}".rstrip()
                                 for r in rows for b in r.get("still_breaking") or []],
        "clean_unchanged": sum(1 for c in clean if c["unchanged"]),
        # rows whose mended copy ran with `import graphmend` failing (its vendored runtime alone)
        "without_graphmend": sum(1 for r in rows if r["mended"].get("graphmend_importable") is False),
        "without_graphmend_recorded": sum(1 for r in rows if "graphmend_importable" in r["mended"]),
        "not_measured": failed,
        "within_tolerance": [r["spec"] for r in rows if _tolerated(r)
                             and not all(v.get("equal") for v in ((r.get("compare") or {}).get("outputs")
                                                                   or {}).values() if isinstance(v, dict))],
    }


def _tolerated(r: dict[str, Any]) -> bool:
    """Outputs bitwise equal, or close where a rewrite that changes the arithmetic was applied."""
    outs = (r.get("compare") or {}).get("outputs") or {}
    if not outs or "error" in outs:
        return False
    arith = any(k in ARITHMETIC_REWRITES for k in (r.get("rewrites") or {}))
    return all(isinstance(v, dict) and (v.get("equal") or (arith and v.get("close"))) for v in outs.values())


def format_totals(t: dict[str, Any]) -> str:
    if not t["rows"]:
        return "Total: no row measured on both sides."
    pct = f"{t['eliminated_pct']:.1f}%" if t["eliminated_pct"] is not None else "n/a"
    lines = [f"Total: GraphMend eliminated {pct} of graph breaks over {t['rows']} rows "
             f"({t['breaks_before']} -> {t['breaks_after']}); {t['rows_to_zero']} of "
             f"{t['rows_with_breaks']} rows with breaks brought to zero; {t['clean_unchanged']} of "
             f"{len(t['clean_rows'])} break-free rows unchanged."]
    if t["by_category"]:
        lines.append("By category (before -> after): " + "; ".join(
            f"{k} {v['before']} -> {v['after']}" for k, v in t["by_category"].items()))
    lines.append(f"Mended but still breaking (a break on a line the fix wrote; must be 0): "
                 f"{t.get('still_breaking', 0)}" + (": " + "; ".join(t["still_breaking_sites"])
                                                    if t.get("still_breaking_sites") else ""))
    if t.get("without_graphmend_recorded"):
        lines.append(f"Mended copies run with graphmend unimportable (the vendored runtime alone): "
                     f"{t['without_graphmend']} of {t['rows']} rows"
                     + (f" ({t['rows'] - t['without_graphmend_recorded']} measured before this was recorded)"
                        if t["without_graphmend_recorded"] < t["rows"] else "") + ".")
    if t["by_rewrite"]:
        lines.append("Rewrites applied: " + ", ".join(f"{k} x{v}" for k, v in t["by_rewrite"].items()))
    if t.get("within_tolerance"):
        lines.append("Outputs within tolerance, not bitwise (tol(...); rewrites that change the arithmetic: "
                     + ", ".join(ARITHMETIC_REWRITES) + "; rtol/atol by dtype: "
                     + ", ".join(f"{k} {v[0]:g}/{v[1]:g}" for k, v in TOLERANCE.items()) + "): "
                     + ", ".join(t["within_tolerance"]))
    changed_clean = [c["spec"] for c in t["clean_rows"] if not c["unchanged"]]
    if changed_clean:
        lines.append("Break-free rows NOT unchanged: " + ", ".join(changed_clean))
    if t["not_measured"]:
        lines.append("Not measured on both sides: " + ", ".join(t["not_measured"]))
    return "\n".join(lines)


def format_table(results: list[dict[str, Any]], markdown: bool = False) -> str:
    header, rows = table_rows(results)
    if markdown:
        esc = lambda s: s.replace("|", "\\|")  # noqa: E731
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(header)]
    widths[-1] = len(header[-1])
    fmt = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    lines = [fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]
    return "\n".join(lines)


def format_details(results: list[dict[str, Any]], graphs: bool = False) -> str:
    """Per spec: every break reason (original and mended) with file:line and source text; with
    ``graphs``, every graph of the first call too."""
    out = []
    for e in results:
        for side in ("original", "mended"):
            res = e.get(side)
            if not res or res.get("skipped"):
                continue
            head = f"{e['spec']} [{side}]"
            if not res.get("ok"):
                out.append(f"{head}: {res.get('error', 'failed')}")
                continue
            ex = res.get("explain") or {}
            out.append(f"{head}: graphs {res['graphs']} breaks {res['breaks']} recompiles "
                       f"{res['recompiles']} (explain: graphs {ex.get('graph_count', '-')}, breaks "
                       f"{ex.get('graph_break_count', '-')})  [{res.get('model_class')}, "
                       f"{res.get('timings', {}).get('total_s')} s]")
            if res.get("graphs_from_recompiles"):
                out.append(f"    ({res['graphs_from_recompiles']} of the {res['graphs']} graphs come from "
                           f"recompilations during the first call)")
            for r in res.get("break_reasons", []):
                site = r.get("site") or {}
                out.append(f"    {reason_label(r)}\n        {site.get('source', '')}")
            if graphs:
                out.append("    graphs of the first call (compile id, frame it was traced from, ops, why "
                           "it ended):")
                for g in res.get("graph_details", []):
                    if g.get("call") != 0:
                        continue
                    fr = g.get("frame") or {}
                    r = g.get("reason") or {}
                    site = r.get("site") or {}
                    out.append(f"      [{g.get('compile_id')}] {fr.get('function', '?')} "
                               f"({fr.get('short', '?').removeprefix('transformers/')}) ops={g['ops']} "
                               f"-> {'BREAK ' if g.get('graph_break') else ''}{r.get('summary', '')[:50]} "
                               f"@ {site.get('short', '?').removeprefix('transformers/')}:"
                               f"{site.get('line', '?')}")
        fix = e.get("fix")
        if fix and fix.get("status") != "ok":
            out.append(f"{e['spec']} [fix]: {fix['status']}: {fix.get('detail', '')}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(DEFAULT_SPECS),
                    help="comma list of specs family[-fp16|-bf16] (any transformers model_type; unknown "
                         "ones use a generic small config) and/or set names "
                         f"{'/'.join(SPEC_SETS)} (default: {','.join(DEFAULT_SPECS)})")
    ap.add_argument("--side", choices=["both", "original"], default="both",
                    help="measure original and mended (default), or the original only")
    ap.add_argument("--json", help="write all results (including messages) to this file")
    ap.add_argument("--markdown", action="store_true", help="print a GitHub markdown table")
    ap.add_argument("--details", action="store_true", help="also print every break reason with source")
    ap.add_argument("--graphs", action="store_true",
                    help="with --details, also list every graph of the first call")
    ap.add_argument("--fix-cmd", default=DEFAULT_FIX_CMD,
                    help="fix command; file paths are appended; {python} is the interpreter "
                         f"(default: {DEFAULT_FIX_CMD!r}, run with PYTHONPATH=server)")
    ap.add_argument("--fix-ok-rc", default="0,1",
                    help="exit codes of the fix command that mean it worked (default 0,1: graphmend "
                         "fix exits 1 when breaks remain)")
    ap.add_argument("--files", help="comma list of files to mend, relative to the transformers package "
                                    "(globs and {family} allowed); replaces the default list")
    ap.add_argument("--extra-files", help="comma list of files to mend in addition")
    ap.add_argument("--python", default=sys.executable, help="interpreter for children and fix")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per child (default 600)")
    ap.add_argument("--fix-timeout", type=float, default=600, help="seconds for the fix command")
    ap.add_argument("--calls", type=int, default=2, help="calls per phase (default 2)")
    ap.add_argument("--no-explain", action="store_true", help="skip torch._dynamo.explain")
    ap.add_argument("--coverage", action="store_true",
                    help="also record the eager line coverage of the original (for precision.py "
                         "--from-json)")
    ap.add_argument("--auto-class", help="override the Auto class for every spec (e.g. AutoModel)")
    ap.add_argument("--jobs", type=int, default=1, help="specs measured in parallel (default 1)")
    ap.add_argument("--hook", action="store_true",
                    help="also measure the installed package mended at import by GraphMend's import "
                         "hook (graphmend run), and compare it with the mended copy")
    ap.add_argument("--hook-scope", default="transformers", help="with --hook: the scope (default "
                                                                  "transformers)")
    ap.add_argument("--hook-safe-only", action="store_true",
                    help="with --hook: safe fixes only (default: unsafe too, like the default fix command)")
    ap.add_argument("--measure-on-fix-failure", action="store_true",
                    help="measure the mended copy even if the fix command failed")
    ap.add_argument("--keep-temp", action="store_true", help="keep mended copies and outputs")
    ap.add_argument("--strict", action="store_true",
                    help="exit 1 also on fix failures and on unequal outputs or messages")
    ap.add_argument("--from-json", metavar="A.json[,B.json...]",
                    help="measure nothing: render (and total) the rows saved by earlier --json runs; "
                         "a spec in a later file replaces the same spec of an earlier one, and "
                         "--models (when given) selects and orders the rows")
    args = ap.parse_args(argv)

    if args.from_json:
        by_spec: dict[str, dict[str, Any]] = {}
        for f in args.from_json.split(","):
            for r in json.loads(Path(f).read_text())["results"]:
                by_spec[r["spec"]] = r
        if "--models" in (argv if argv is not None else sys.argv[1:]):
            results = [by_spec[s] for s in expand_specs(args.models) if s in by_spec]
        else:
            results = list(by_spec.values())
        print(format_table(results, markdown=args.markdown))
        print()
        print(format_totals(totals(results)))
        if any(r.get("hook") for r in results):
            print("\nImport hook (installed transformers mended at import) vs the mended copy:\n")
            print(format_hook_table(results, markdown=args.markdown))
        if args.json:
            Path(args.json).write_text(json.dumps({"results": results, "totals": totals(results)}, indent=1,
                                                  default=str))
        return 0

    specs = expand_specs(args.models)
    root = transformers_root(args.python)
    base = Path(tempfile.mkdtemp(prefix="graphmend-bench-"))
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    log(f"transformers: {root}\nwork dir: {base}")

    def one(spec: str) -> dict[str, Any]:
        t0 = time.perf_counter()
        res = measure_spec(
            spec, side=args.side, python=args.python, root=root,
            files=args.files.split(",") if args.files else None,
            extra_files=args.extra_files.split(",") if args.extra_files else None,
            fix_cmd=args.fix_cmd, timeout=args.timeout, fix_timeout=args.fix_timeout,
            calls=args.calls, explain=not args.no_explain, auto_class=args.auto_class,
            workdir=base / spec, measure_on_fix_failure=args.measure_on_fix_failure, log=log,
            fix_ok_rcs=tuple(int(x) for x in args.fix_ok_rc.split(",") if x.strip()),
            hook_scope=args.hook_scope if args.hook else None, hook_unsafe=not args.hook_safe_only,
            coverage=args.coverage)
        o = res.get("original", {})
        log(f"[{spec}] done in {time.perf_counter() - t0:.0f} s: original graphs {o.get('graphs')}"
            + (f", mended graphs {res['mended'].get('graphs')}" if res.get("mended") else "")
            + (f", hook graphs {res['hook'].get('graphs')}" if res.get("hook") else "")
            + (f", fix {res['fix']['status']}" if res.get("fix") else ""))
        if not args.keep_temp:
            shutil.rmtree(base / spec, ignore_errors=True)
        return res

    try:
        if args.jobs > 1:
            with ThreadPoolExecutor(args.jobs) as pool:
                results = list(pool.map(one, specs))
        else:
            results = [one(s) for s in specs]
    finally:
        if not args.keep_temp:
            shutil.rmtree(base, ignore_errors=True)

    print(format_table(results, markdown=args.markdown))
    tot = totals(results) if args.side == "both" else None
    if tot:
        print()
        print(format_totals(tot))
    if args.hook:
        print("\nImport hook (installed transformers mended at import) vs the mended copy:\n")
        print(format_hook_table(results, markdown=args.markdown))
    if args.details:
        print()
        print(format_details(results, graphs=args.graphs))
    fix_problems = [f"{r['spec']} ({r['fix']['status']}: {r['fix'].get('detail', '')})"
                    for r in results if r.get("fix") and r["fix"]["status"] != "ok"]
    if fix_problems:
        print("\nfix did not mend: " + "; ".join(fix_problems), file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps({"results": results, "totals": tot}, indent=1, default=str))
        log(f"wrote {args.json}")

    failed = [r["spec"] for r in results
              if not r.get("original", {}).get("ok")
              or (r.get("mended") and not r["mended"].get("ok") and not r["mended"].get("skipped"))
              or (r.get("hook") and not r["hook"].get("ok"))]
    if failed:
        print(f"measurement failed for: {', '.join(failed)}", file=sys.stderr)
        return 1
    if args.strict:
        if fix_problems or any(r.get("still_breaking") for r in results):
            return 1
        for r in results:
            if r.get("hook_vs_copy") and not r["hook_vs_copy"].get("equal"):
                return 1
            if (r.get("compare") or {}).get("outputs") and not _tolerated(r):
                return 1
            for cmp in (r.get("compare") or {}, r.get("hook_compare") or {}):
                for part in ("messages",) if cmp is r.get("compare") else ("outputs", "messages"):
                    for v in (cmp.get(part) or {}).values():
                        if isinstance(v, dict) and not v.get("equal", False):
                            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
