"""Verify a mend: run the entry twice, original and mended, and compare what a user can observe.

Each side is a fresh child process (`runner.run_probe`) with its own compile caches (inductor's
and triton's cache directories are private to each run, so neither side reuses the other's
compiled code). The mended side installs the mending import hook for `scope` before the entry is
imported: the modules under the scope are mended in memory as they are imported, no file is
written. The sides run one after the other, never together (timings are not disturbed).

Reported (each as [original, mended]): graphs and breaks of the first call, recompiles, compile
time, first call, cold start (first call minus compile time), steady-state median over `runs`
calls (CUDA synchronised on a GPU); whether the first call's outputs are bitwise equal (else the
largest absolute difference; compared in a small child, since that needs torch); whether the
messages (prints, log records, warnings, in order, of the first and second calls) are the same.

No torch here.
"""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile
import threading
from typing import Callable, Optional, Sequence

from graphmend.probe.runner import compare_outputs, run_probe


def _pair(a: dict, b: dict, key: str, sub: Optional[str] = None):
    def get(r):
        v = r.get(sub, {}) if sub else r
        return (v or {}).get(key)
    return [get(a), get(b)]


def _messages(r: dict) -> list[str]:
    out = list(r.get("messages") or [])
    if r.get("messages_second") is not None:
        out += ["--- second call ---"] + list(r["messages_second"])
    return out


# Backends that run the same kernels on both sides: a safe mend must be bitwise equal there.
SAME_KERNELS = frozenset({"eager", "aot_eager"})


def outputs_agree(v: dict) -> bool:
    """Bitwise equal; or within the dtype's tolerance (`outputs_close`) where bitwise equality
    cannot be asked for: a backend that fuses a whole graph and a split one differently
    (inductor), or unsafe fixes that change the arithmetic ([Route])."""
    if v.get("outputs_equal"):
        return True
    return bool(v.get("outputs_close")) and (v.get("backend") not in SAME_KERNELS or bool(v.get("unsafe")))


def verify(entry: str, *, python: str, cwd: str, device: str = "auto", backend: str = "eager",
           timeout_s: float = 300, scope: Sequence[str], unsafe: bool = False, runs: int = 20,
           on_stage: Optional[Callable[[str], None]] = None,
           cancel: Optional[threading.Event] = None, memory_mb: Optional[int] = 8192,
           extra_env: Optional[dict] = None, output_mb: Optional[int] = 512) -> dict:
    """Original vs mended; see the module docstring. `timeout_s`, `memory_mb` and `output_mb`
    apply to each child. Never raises for the user's code: failures come back as `ok: False` with `error`
    (with `side`: "original", "mended" or "compare")."""
    scope = [s for s in (scope or []) if s]
    out: dict = {"ok": False, "error": None, "entry": entry, "scope": scope, "unsafe": bool(unsafe),
                 "backend": backend, "runs": runs, "original": None, "mended": None,
                 "graphs": [None, None], "breaks": [None, None], "recompiles": [None, None],
                 "outputs_equal": None, "outputs_close": None, "max_abs_diff": None, "messages_equal": False,
                 "messages_diff": [], "compile_s": [None, None], "cold_start_s": [None, None],
                 "first_call_s": [None, None], "steady_median_ms": [None, None],
                 "mended_modules": [], "fixes_applied": 0}
    if not scope:
        out["error"] = {"kind": "bad-entry", "message": "verify needs a mend scope (packages to "
                        "mend, e.g. the entry's top-level package)", "traceback": None,
                        "file": None, "line": None, "side": None}
        return out
    work = tempfile.mkdtemp(prefix="graphmend-verify-")

    def staged(side: str):
        if on_stage is None:
            return None
        return lambda text: on_stage(f"{side}: {text}")

    try:
        sides = {}
        for side, mend in (("original", None), ("mended", scope)):
            if cancel is not None and cancel.is_set():
                break
            sides[side] = run_probe(
                entry, python=python, cwd=cwd, device=device, backend=backend,
                timeout_s=timeout_s, memory_mb=memory_mb, mend_scope=mend, unsafe=unsafe,
                runs=runs, on_stage=staged(side), cancel=cancel, extra_env=extra_env,
                outputs_dir=os.path.join(work, side), output_mb=output_mb)
            out[side] = sides[side]
            if not sides[side].get("ok"):
                err = dict(sides[side].get("error") or {"kind": "crashed", "message": "failed"})
                err["side"] = side
                err["message"] = f"{side} run: {err.get('message')}"
                out["error"] = err
                break
        if cancel is not None and cancel.is_set() and out["error"] is None:
            out["error"] = {"kind": "cancelled", "message": f"{entry}: cancelled",
                            "traceback": None, "file": None, "line": None, "side": None}
        a, b = out["original"], out["mended"]
        if a is not None and b is not None:
            out["graphs"] = _pair(a, b, "graphs")
            out["breaks"] = _pair(a, b, "breaks")
            out["recompiles"] = _pair(a, b, "recompiles")
            for k in ("compile_s", "cold_start_s", "first_call_s", "steady_median_ms"):
                out[k] = _pair(a, b, k, "timings")
            records = ((b.get("mend") or {}).get("records")) or []
            out["mended_modules"] = [
                {"module": r.get("module"), "path": r.get("path"), "applied": r.get("applied", 0),
                 "codes": r.get("codes", []), "error": r.get("error")}
                for r in records if isinstance(r, dict) and (r.get("applied") or r.get("error"))]
            out["fixes_applied"] = sum(int(r.get("applied") or 0) for r in records
                                       if isinstance(r, dict))
            ma, mb = _messages(a), _messages(b)
            out["messages_equal"] = ma == mb
            if ma != mb:
                out["messages_diff"] = list(difflib.unified_diff(
                    ma, mb, "original", "mended", lineterm="", n=1))[:200]
        if out["error"] is None and a and b:
            pa, pb = a.get("outputs_path"), b.get("outputs_path")
            if pa and pb:
                if on_stage is not None:
                    on_stage("comparing outputs")
                cmp = compare_outputs(pa, pb, python=python, cwd=cwd,
                                      timeout_s=min(timeout_s, 300), memory_mb=memory_mb,
                                      cancel=cancel)
                out["outputs_equal"] = cmp.get("outputs_equal")
                out["outputs_close"] = cmp.get("outputs_close")
                out["max_abs_diff"] = cmp.get("max_abs_diff")
                out["output_mismatches"] = cmp.get("mismatches", [])[:20]
                if not cmp.get("ok"):
                    out["error"] = {"kind": "crashed", "message": cmp.get("error") or
                                    "comparing outputs failed", "traceback": cmp.get("traceback"),
                                    "file": None, "line": None, "side": "compare"}
            else:
                out["outputs_equal"] = None
                out["error"] = {"kind": "crashed", "message": "no outputs were saved to compare "
                                f"({a.get('outputs_error') or b.get('outputs_error') or 'unknown'})",
                                "traceback": None, "file": None, "line": None, "side": "compare"}
        out["ok"] = out["error"] is None
    finally:
        shutil.rmtree(work, ignore_errors=True)
        for side in ("original", "mended"):
            if out.get(side):
                out[side]["outputs_path"] = None  # removed with the work directory
    return out
