"""The live probe in the editor: run Dynamo on the user's entry (opt-in, trusted workspaces only,
in a subprocess with the user's interpreter), import a log instead, verify the mends, and show
what Dynamo really did next to what the static analysis found.

- A break Dynamo reports at a line where a static finding sits marks that finding "confirmed by
  Dynamo"; a Dynamo-only break becomes a diagnostic with source `dynamo` and Dynamo's reason (a
  gap in the static analysis, logged); a static finding in a file the probe traced, with no
  break there, is marked "not confirmed by the probe".
- A failed run (import error, exception, timeout, memory) is a message and an error diagnostic
  at the entry, never a dead server.
- A code lens on the entry: "Dynamo: G graphs, B breaks (probe N s ago)" · Run again · Verify mends.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from lsprotocol import types
from pygls.uris import from_fs_path

if TYPE_CHECKING:
    from graphmend.lsp.server import GraphMendServer

log = logging.getLogger("graphmend.lsp")
SOURCE = "dynamo"
RUN_COMMAND = "graphmend.runProbe"
VERIFY_COMMAND = "graphmend.verifyMends"
IMPORT_LOG_COMMAND = "graphmend.importLog"


@dataclass
class ProbeState:
    """The latest probe run (or imported log) and verification."""

    result: Optional[dict] = None  # run_probe's result, or {"ok": True, "break_list": [...]} for a log
    origin: str = "probe"  # "probe" | "log"
    finished: float = 0.0  # time.time() when it ended
    verify: Optional[dict] = None
    running: Optional[str] = None  # what runs now ("probe", "verify"), for the lens
    cancel: Optional[threading.Event] = None
    by_file: dict[str, list[dict]] = field(default_factory=dict)  # normalised path -> breaks

    def set(self, result: dict, origin: str) -> None:
        self.result, self.origin, self.finished = result, origin, time.time()
        self.by_file = {}
        for b in result.get("break_list") or []:
            if b.get("file") and b.get("line"):
                self.by_file.setdefault(_norm(b["file"]), []).append(b)

    @property
    def traced_files(self) -> set[str]:
        """Files the probe is known to have traced: the entry's and those with a break."""
        if self.result is None or self.origin != "probe" or not self.result.get("ok"):
            return set()
        out = set(self.by_file)
        if self.result.get("entry_file"):
            out.add(_norm(self.result["entry_file"]))
        return out


def _norm(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


# --------------------------------------------------------------------------- settings


@dataclass
class ProbeOptions:
    enable: bool = False
    entry: Optional[str] = None
    python: str = sys.executable
    device: str = "auto"
    backend: str = "eager"
    timeout_s: float = 120.0
    memory_mb: Optional[int] = 8192
    output_mb: Optional[int] = 512
    runs: int = 20
    scope: list[str] = field(default_factory=list)
    cwd: Optional[str] = None


def options(server: "GraphMendServer") -> tuple[ProbeOptions, list[str]]:
    """[tool.graphmend.probe] of the first workspace root, overridden by the editor's `probe`."""
    from graphmend.probe.config import load_probe_settings
    root = server.roots[0] if server.roots else os.getcwd()
    ps, errors = load_probe_settings(root)
    o = ProbeOptions(entry=ps.entry, python=ps.interpreter(), device=ps.device or "auto",
                     backend=ps.backend or "eager", timeout_s=float(ps.timeout or 120),
                     memory_mb=ps.memory_mb, output_mb=ps.output_mb, runs=int(ps.runs or 20),
                     scope=ps.default_scope(),
                     cwd=ps.root or root)
    ed = server.settings.probe or {}
    o.enable = bool(ed.get("enable", False)) is True
    if isinstance(ed.get("entry"), str) and ed["entry"]:
        o.entry = ed["entry"]
    if isinstance(ed.get("python"), str) and ed["python"]:
        o.python = ed["python"]
    if ed.get("device") in ("auto", "cpu", "cuda"):
        o.device = ed["device"]
    if ed.get("backend") in ("eager", "aot_eager", "inductor"):
        o.backend = ed["backend"]
    t = ed.get("timeoutSeconds")
    if isinstance(t, (int, float)) and not isinstance(t, bool) and t > 0:
        o.timeout_s = float(t)
    return o, errors


def refusal(server: "GraphMendServer", o: ProbeOptions) -> Optional[str]:
    """Why the probe may not run here (None: it may)."""
    if not o.enable:
        return ("the probe runs your code, so it is off by default: set `graphmend.probe.enable` "
                "to true to allow it")
    if not server.workspace_trusted:
        return "the probe never runs code in a workspace the editor does not trust"
    if not o.entry:
        return ('no probe entry: set `entry = "package.module:function"` under [tool.graphmend.probe] '
                "in pyproject.toml (a function returning the model or callable and its example inputs)")
    return None


# --------------------------------------------------------------------------- running


async def _with_progress(server: "GraphMendServer", title: str, work, state: ProbeState, kind: str):
    """Run `work(on_stage, cancel)` in the probe thread with cancellable work-done progress."""
    loop = asyncio.get_running_loop()
    token = f"graphmend-{kind}-{time.monotonic_ns()}"
    progress = bool(server._client("window.work_done_progress", False))
    cancel = threading.Event()
    state.cancel, state.running = cancel, kind
    if progress:
        try:
            await server.work_done_progress.create_async(token)
            server.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=title, cancellable=True))
            fut = server.work_done_progress.tokens.get(token)
            if fut is not None:
                fut.add_done_callback(lambda f: cancel.set() if f.cancelled() else None)
        except Exception:
            progress = False

    def on_stage(stage: str) -> None:
        log.info("%s: %s", title, stage)
        if progress:
            loop.call_soon_threadsafe(server.work_done_progress.report, token,
                                      types.WorkDoneProgressReport(message=stage))

    try:
        return await loop.run_in_executor(server.probe_pool, work, on_stage, cancel)
    finally:
        state.cancel, state.running = None, None
        if progress:
            server.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))


async def run(server: "GraphMendServer") -> dict:
    from graphmend.probe.runner import run_probe
    o, errors = options(server)
    why = refusal(server, o)
    if why:
        server.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning,
                                                           message=f"GraphMend probe: {why}"))
        return {"ok": False, "refused": why}
    state = server.probe

    def work(on_stage, cancel):
        return run_probe(o.entry, python=o.python, cwd=o.cwd, device=o.device, backend=o.backend,
                         timeout_s=o.timeout_s, memory_mb=o.memory_mb, output_mb=o.output_mb,
                         on_stage=on_stage, cancel=cancel)

    result = await _with_progress(server, f"GraphMend: probing {o.entry}", work, state, "probe")
    state.set(result, "probe")
    _announce(server, result, o.entry)
    server.refresh()
    return summary(result)


async def verify(server: "GraphMendServer") -> dict:
    from graphmend.probe.verify import verify as run_verify
    o, errors = options(server)
    why = refusal(server, o)
    if why:
        server.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning,
                                                           message=f"GraphMend probe: {why}"))
        return {"ok": False, "refused": why}
    state = server.probe
    scope = o.scope or [o.entry.split(":")[0].split(".")[0]]
    unsafe = server.settings.engine.get("unsafeFixes", False) is True

    def work(on_stage, cancel):
        return run_verify(o.entry, python=o.python, cwd=o.cwd, device=o.device, backend=o.backend,
                          timeout_s=o.timeout_s, scope=scope, unsafe=unsafe, runs=o.runs,
                          memory_mb=o.memory_mb, output_mb=o.output_mb, on_stage=on_stage, cancel=cancel)

    result = await _with_progress(server, f"GraphMend: verifying the mends of {o.entry}", work, state, "verify")
    state.verify = result
    if result.get("ok"):
        g, b = result.get("graphs", [None, None]), result.get("breaks", [None, None])
        msg = (f"GraphMend verify: graphs {g[0]} -> {g[1]}, breaks {b[0]} -> {b[1]}, outputs "
               f"{'equal' if result.get('outputs_equal') else 'DIFFER (max diff %s)' % result.get('max_abs_diff')}, "
               f"messages {'equal' if result.get('messages_equal') else 'DIFFER'}")
        kind = types.MessageType.Info if result.get("outputs_equal") and result.get("messages_equal") \
            else types.MessageType.Warning
    else:
        err = result.get("error") or {}
        msg, kind = f"GraphMend verify failed: {err.get('kind')}: {err.get('message')}", types.MessageType.Error
    server.window_show_message(types.ShowMessageParams(type=kind, message=msg))
    server.refresh()
    return result


async def import_log(server: "GraphMendServer", path: Optional[str]) -> dict:
    from graphmend.probe.logs import read_log
    if not path:
        return {"ok": False, "reason": "give the path of a TORCH_LOGS log file or a TORCH_TRACE directory"}
    loop = asyncio.get_running_loop()
    root = server.roots[0] if server.roots else None
    result = await loop.run_in_executor(server.probe_pool, read_log, path, root)
    if not result.get("ok"):
        why = (result.get("error") or {}).get("message", "unreadable")
        server.window_show_message(types.ShowMessageParams(
            type=types.MessageType.Error, message=f"GraphMend: cannot read {path}: {why}"))
        return {"ok": False, "reason": why}
    server.probe.set(result, "log")
    server.refresh()
    return summary(result)


def summary(result: dict) -> dict:
    keys = ("ok", "error", "graphs", "breaks", "recompiles", "device", "backend", "duration_s")
    return {k: result.get(k) for k in keys if k in result} | {"break_list": result.get("break_list", [])}


def _announce(server: "GraphMendServer", result: dict, entry: str) -> None:
    if result.get("ok"):
        msg = (f"GraphMend probe {entry}: {result.get('graphs')} graphs, {result.get('breaks')} breaks"
               f" ({result.get('device')}, {result.get('backend')})")
        server.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=msg))
    else:
        err = result.get("error") or {}
        msg = f"GraphMend probe {entry} failed ({err.get('kind')}): {err.get('message')}"
        server.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=msg))
        log.warning("%s\n%s", msg, err.get("traceback") or "")


# --------------------------------------------------------------------------- diagnostics


def _reason(b: dict) -> str:
    gb = f" [{b['gb_id']}]" if b.get("gb_id") else ""
    return f"Dynamo: graph break{gb}: {b.get('gb_type') or ''}{': ' if b.get('gb_type') else ''}{b.get('reason', '')}".rstrip(": ")


def decorate(server: "GraphMendServer", path: str, doc_lines: list[str], static: list[types.Diagnostic]) -> list[types.Diagnostic]:
    """Mark static diagnostics confirmed / not confirmed and add Dynamo-only breaks (for one file)."""
    state = server.probe
    if state.result is None:
        return static
    key = _norm(path)
    breaks = state.by_file.get(key, [])
    out = list(static)
    matched: set[int] = set()
    for d in static:
        if d.code == "GM001":
            continue
        lines = range(d.range.start.line + 1, d.range.end.line + 2)
        hit = [i for i, b in enumerate(breaks) if b.get("line") in lines]
        data = d.data if isinstance(d.data, dict) else {}
        if hit:
            matched.update(hit)
            d.message += " (confirmed by Dynamo)"
            data["dynamo"] = "confirmed"
        elif key in state.traced_files:
            d.message += " (not confirmed: the probe ran this file without a break here)"
            data["dynamo"] = "not-confirmed"
        d.data = data
    for i, b in enumerate(breaks):
        if i in matched:
            continue
        log.info("static analysis gap: Dynamo broke at %s:%s (%s) with no GraphMend finding",
                 b.get("file"), b.get("line"), b.get("gb_type") or b.get("reason"))
        out.append(break_diagnostic(b, doc_lines))
    failure = _failure_here(state, key)
    if failure is not None:
        out.append(failure)
    return out


def break_diagnostic(b: dict, doc_lines: list[str]) -> types.Diagnostic:
    n = max(int(b.get("line") or 1) - 1, 0)
    text = doc_lines[n].rstrip("\r\n") if n < len(doc_lines) else ""
    start = len(text) - len(text.lstrip())
    return types.Diagnostic(
        range=types.Range(start=types.Position(line=n, character=start),
                          end=types.Position(line=n, character=len(text))),
        message=_reason(b), severity=types.DiagnosticSeverity.Warning, code=b.get("gb_id") or "dynamo",
        code_description=types.CodeDescription(
            href=f"https://meta-pytorch.github.io/compile-graph-break-site/gb/{b['gb_id'].lower()}.html")
        if b.get("gb_id") else None,
        source=SOURCE, data={"dynamo": "only", "function": b.get("function")})


def _failure_here(state: ProbeState, key: str) -> Optional[types.Diagnostic]:
    r = state.result
    if r is None or r.get("ok") or state.origin != "probe":
        return None
    err = r.get("error") or {}
    where = err.get("file") or r.get("entry_file")
    line = err.get("line") or r.get("entry_line") or 1
    if not where or _norm(where) != key:
        return None
    n = max(int(line) - 1, 0)
    return types.Diagnostic(
        range=types.Range(start=types.Position(line=n, character=0), end=types.Position(line=n + 1, character=0)),
        message=f"GraphMend probe failed ({err.get('kind')}): {err.get('message')}",
        severity=types.DiagnosticSeverity.Error, code="probe", source=SOURCE)


def files_outside(server: "GraphMendServer", open_paths: set[str]) -> dict[str, list[dict]]:
    """Files with Dynamo breaks that are not open (published directly, push only)."""
    return {p: bs for p, bs in server.probe.by_file.items() if p not in open_paths}


def publish_closed_files(server: "GraphMendServer") -> None:
    """Dynamo's breaks in files that are not open (e.g. an installed package's modeling file)."""
    open_paths = {_norm(d.path) for d in server.docs.values()}
    wanted = files_outside(server, open_paths)
    for p in set(server._probe_published) - set(wanted):
        server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=from_fs_path(p), diagnostics=[]))
    for p, bs in wanted.items():
        try:
            with open(p, encoding="utf-8", errors="replace") as f:
                lines = f.read().split("\n")
        except OSError:
            lines = []
        server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=from_fs_path(p), diagnostics=[break_diagnostic(b, lines) for b in bs]))
    server._probe_published = set(wanted)


# --------------------------------------------------------------------------- lens


def lenses(server: "GraphMendServer", path: str) -> list[types.CodeLens]:
    """On the probe entry's line: what Dynamo did, Run again, Verify mends."""
    o_entry_file = (server.probe.result or {}).get("entry_file")
    entry_file, entry_line = o_entry_file, (server.probe.result or {}).get("entry_line")
    if not entry_file or _norm(entry_file) != _norm(path) or not entry_line:
        return []
    r = server.probe.result
    ago = int(time.time() - server.probe.finished)
    if r.get("ok"):
        text = f"Dynamo: {r.get('graphs')} graphs, {r.get('breaks')} breaks (probe {ago} s ago)"
    else:
        text = f"Dynamo: probe failed ({(r.get('error') or {}).get('kind')}, {ago} s ago)"
    v = server.probe.verify
    if v and v.get("ok"):
        text += f" · verified: graphs {v['graphs'][0]} -> {v['graphs'][1]}, outputs " + (
            "equal" if v.get("outputs_equal") else "differ")
    pos = types.Position(line=int(entry_line) - 1, character=0)
    rng = types.Range(start=pos, end=pos)
    return [types.CodeLens(range=rng, command=types.Command(title=text, command="")),
            types.CodeLens(range=rng, command=types.Command(title="Run again", command=RUN_COMMAND)),
            types.CodeLens(range=rng, command=types.Command(title="Verify mends", command=VERIFY_COMMAND))]


def verified_suffix(server: "GraphMendServer") -> str:
    v = server.probe.verify
    if not v or not v.get("ok"):
        return ""
    g = v.get("graphs") or [None, None]
    return f" · verified: graphs {g[0]} -> {g[1]}, outputs {'equal' if v.get('outputs_equal') else 'differ'}"


def as_args(args: tuple) -> Optional[Any]:
    return args[0] if args else None
