"""Language-server latency: drive the real `graphmend serve` over stdio, as an editor would.

    python benchmarks/lsp.py [--files A.py ...] [--edits 50] [--debounce 150] [--root] [--json OUT]

Per file (default: transformers' t5 and longformer modeling files, opened where they are, so that
their imports resolve as in an editor on that checkout: a copy alone in a temp dir resolves no
`from ...modeling_utils import`, and measured a check that never read the bases), a fresh
server is spawned and measured, as a client without pull diagnostics (so the server pushes):
  * spawn -> `initialize` result; `didOpen` -> the first `publishDiagnostics` (of that version),
    in three servers sharing a fresh $XDG_CACHE_HOME (what the server keeps for later sessions:
    the definitions index, the diagnostics of opened files): the first opens the file with a
    comment added and an empty cache (a file no session opened); the second opens the file as it
    is, with the imports' definitions the first indexed (a file changed since a session opened
    it); the measured server opens it again (the same text: the diagnostics the second kept);
  * edit -> diagnostics: N incremental `didChange`s (type a character, then delete it; the sites
    alternate between a comment and a statement inside `forward` methods and a break-site call
    such as `logger.warning(`), each waiting for the publish of its own version: p50/p95/max of
    the total, and of the total minus the configured debounce ("after the debounce");
  * a burst of 20 changes sent back to back: last change -> its diagnostics, and how many
    publishes of stale versions arrived (should be 0);
  * `textDocument/codeAction` on each diagnostic's range, `codeAction/resolve` of each action
    listed without an edit, the `source.fixAll.graphmend` listing and its resolve; hover on each
    diagnostic's start; the server's peak RSS (VmHWM, Linux).
`--root` passes the file's directory as the workspace folder (the server
indexes it in the background; the time to its "indexed" log line is reported). `--server CMD`
runs another server command (e.g. an instrumented one). Exit status: 0 done (targets missed
are only marked), 1 a timeout or a protocol error, 2 the server died.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import math
import os
import re
import shlex
import sys
import tempfile
import time
import traceback
from pathlib import Path

from lsprotocol import types as T
from pygls.lsp.client import LanguageClient

TARGETS = {"after_debounce_p95": 150.0, "code_action_p95": 100.0}  # ms
FIX_ALL = "source.fixAll.graphmend"
BURST = 20


class BenchError(Exception):
    pass


class ServerDied(BenchError):
    pass


def stats(xs: list[float]) -> dict:
    s = sorted(xs)
    p = lambda q: s[max(0, math.ceil(q / 100 * len(s)) - 1)] if s else None  # noqa: E731 (nearest rank)
    return {"n": len(s), "p50": p(50), "p95": p(95), "max": s[-1] if s else None}


def edit_sites(text: str, diags: list[T.Diagnostic]) -> list[tuple[str, int, int]]:
    """(kind, 0-based line, code-point column) where a typed "x" keeps the file parsing: up to
    4 each of comment and statement lines in `forward` methods and string arguments of calls on
    diagnostic lines (or of `*.warning(` calls), interleaved and spread over the file."""
    lines, tree = re.split(r"\r\n|\r|\n", text), ast.parse(text)
    col = lambda ln, byte: len(lines[ln].encode()[:byte].decode())  # noqa: E731 (ast columns are UTF-8)
    kinds: dict[str, set[tuple[int, int]]] = {"comment": set(), "statement": set(), "break": set()}
    break_lines = {d.range.start.line for d in diags}
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for ln in range(fn.lineno, fn.end_lineno or fn.lineno):
            if fn.name == "forward" and lines[ln].lstrip().startswith("#") and lines[ln].strip() != "#":
                kinds["comment"].add((ln, lines[ln].index("#") + 1))
        for node in ast.walk(fn):
            if fn.name == "forward" and isinstance(node, ast.Assign) and node.lineno == node.end_lineno \
                    and isinstance(node.targets[0], ast.Name):  # hidden_states| = ...
                kinds["statement"].add((node.lineno - 1, col(node.lineno - 1, node.targets[0].end_col_offset)))
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], (ast.Constant, ast.JoinedStr)) \
                    and (node.lineno - 1 in break_lines if break_lines else getattr(node.func, "attr", "") == "warning"):
                ln, c = node.args[0].lineno - 1, col(node.args[0].lineno - 1, node.args[0].col_offset)
                m = re.match(r"[rbfuRBFU]*('''|\"\"\"|'|\")", lines[ln][c:])  # just inside the quote
                if m:
                    kinds["break"].add((ln, c + m.end()))
    out = []
    for i in range(4):
        for k, found in kinds.items():
            found = sorted(found)
            if i < len(found):
                ln, c = found[i * len(found) // min(4, len(found))]
                try:
                    ast.parse("\n".join(lines[:ln] + [lines[ln][:c] + "x" + lines[ln][c:]] + lines[ln + 1:]))
                    out.append((k, ln, c))
                except SyntaxError:
                    pass
    if not out:
        raise BenchError("no edit sites found (no `forward` methods?)")
    return out


class Session:
    """One server process, and every publish it sent (arrival time, params)."""

    def __init__(self, command: list[str], debounce: int, timeout: float) -> None:
        self.command, self.debounce, self.timeout = command, debounce, timeout
        self.client = LanguageClient("graphmend-bench", "1")
        self.pubs: list[tuple[float, T.PublishDiagnosticsParams]] = []
        self.logs: list[tuple[float, str]] = []
        self.errors: list[str] = []  # what the server logged as an error (a check that raised)
        self.waiters: dict[tuple[str, int], asyncio.Future] = {}
        self.proc = None
        self.stderr: list[bytes] = []
        self.client.feature(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(lambda p: self._published(p))
        self.client.feature(T.WINDOW_LOG_MESSAGE)(lambda p: self._logged(p))
        self.client.feature(T.WINDOW_SHOW_MESSAGE)(lambda p: self.logs.append((time.perf_counter(), p.message)))

    def _logged(self, p: T.LogMessageParams) -> None:
        self.logs.append((time.perf_counter(), p.message))
        if p.type == T.MessageType.Error:
            self.errors.append(p.message)

    def _published(self, p: T.PublishDiagnosticsParams) -> None:
        now = time.perf_counter()
        self.pubs.append((now, p))
        fut = self.waiters.pop((p.uri, p.version), None)
        if fut is not None and not fut.done():
            fut.set_result((now, p))

    def expect(self, uri: str, version: int) -> asyncio.Future:
        """A future for the publish of this version (create it before sending the change)."""
        return self.waiters.setdefault((uri, version), asyncio.get_running_loop().create_future())

    async def wait(self, aw, what: str, timeout: float | None = None):
        task = asyncio.ensure_future(aw)
        done, _ = await asyncio.wait({task, self.dead}, timeout=timeout or self.timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        if task in done and (task.exception() is None or self.proc.returncode is None):
            return task.result()
        task.cancel()
        if self.proc.returncode is not None:  # pending requests fail as the process exits
            await asyncio.sleep(0.1)  # the last of stderr
            raise ServerDied(f"the server exited (status {self.proc.returncode}) while waiting for {what}\n"
                             + b"".join(self.stderr).decode(errors="replace")[-3000:])
        raise BenchError(f"timed out after {timeout or self.timeout:.0f} s waiting for {what}")

    async def timed(self, aw, what: str):
        t0 = time.perf_counter()
        got = await self.wait(aw, what)
        return got, (time.perf_counter() - t0) * 1000

    async def start(self, root: Path | None) -> float:
        t0 = time.perf_counter()
        await self.client.start_io(*self.command)
        self.proc = self.client._server
        self.dead = asyncio.ensure_future(self.proc.wait())
        self.drain = asyncio.ensure_future(self._drain())  # a full stderr pipe would block the server
        caps = T.ClientCapabilities(  # no textDocument.diagnostic: the server pushes
            text_document=T.TextDocumentClientCapabilities(
                publish_diagnostics=T.PublishDiagnosticsClientCapabilities(version_support=True, data_support=True),
                code_action=T.CodeActionClientCapabilities(
                    code_action_literal_support=T.ClientCodeActionLiteralOptions(
                        code_action_kind=T.ClientCodeActionKindOptions(value_set=["quickfix", "source"])),
                    data_support=True, is_preferred_support=True,
                    resolve_support=T.ClientCodeActionResolveOptions(properties=["edit"])),
                hover=T.HoverClientCapabilities(content_format=[T.MarkupKind.Markdown])),
            workspace=T.WorkspaceClientCapabilities(workspace_edit=T.WorkspaceEditClientCapabilities(document_changes=True)))
        await self.wait(self.client.initialize_async(T.InitializeParams(
            capabilities=caps, process_id=None, root_uri=root.as_uri() if root else None,
            workspace_folders=[T.WorkspaceFolder(uri=root.as_uri(), name=root.name)] if root else None,
            initialization_options={"debounceMs": self.debounce})), "the initialize result")
        ms = (time.perf_counter() - t0) * 1000
        self.client.initialized(T.InitializedParams())
        return ms

    async def _drain(self) -> None:
        while chunk := await self.proc.stderr.read(65536):
            self.stderr = self.stderr[-20:] + [chunk]

    def peak_rss_mib(self) -> float | None:
        try:
            m = re.search(r"VmHWM:\s+(\d+) kB", Path(f"/proc/{self.proc.pid}/status").read_text())
            return int(m.group(1)) / 1024 if m else None
        except OSError:
            return None

    async def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.returncode is None:
            try:
                await self.wait(self.client.shutdown_async(None), "the shutdown result", timeout=5)
                self.client.exit(None)
                await asyncio.wait_for(self.proc.wait(), 10)
            except (BenchError, RuntimeError, asyncio.TimeoutError):
                if self.proc.returncode is None:
                    self.proc.kill()
        await asyncio.wait_for(self.client.stop(), 10)
        if self.errors:  # a check that raised publishes nothing: its figures would be of no check
            raise BenchError(f"the server logged {len(self.errors)} error(s), the first:\n{self.errors[0][-3000:]}")


async def measure(s: Session, root: Path | None, path: Path, edits: int) -> dict:
    text, uri = path.read_text(encoding="utf-8"), path.as_uri()
    lines = re.split(r"\r\n|\r|\n", text)
    r: dict = {"spawn_to_initialize_ms": await s.start(root)}
    t_init, version = time.perf_counter(), 1
    fut = s.expect(uri, 1)
    t0 = time.perf_counter()
    s.client.text_document_did_open(T.DidOpenTextDocumentParams(
        text_document=T.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    t1, pub = await s.wait(fut, "the diagnostics of didOpen")
    r["open_to_diagnostics_ms"], r["diagnostics"], initial = (t1 - t0) * 1000, len(pub.diagnostics), pub.diagnostics
    if root is not None:  # the background index; when it is built, the open document is checked again
        done = re.compile(r"indexed \d+ files|workspace indexing (failed|cancelled)")
        logged = lambda: next(((t, m) for t, m in s.logs if done.search(m)), None)  # noqa: E731
        t_idx, msg = await s.wait(until(logged), "the workspace index", timeout=max(s.timeout, 300))
        r["index_ms"], r["index"] = (t_idx - t_init) * 1000, done.search(msg).group(0)
        if "indexed" in msg:
            await s.wait(until(lambda: any(t > t_idx for t, _ in s.pubs)), "the re-check after indexing")

    def change(ln: int, c: int, k0: int, k1: int, new: str) -> asyncio.Future:
        """Replace the typed (ASCII) characters k0..k1 after column c of the original line."""
        nonlocal version
        version += 1
        fut = s.expect(uri, version)
        u = len(lines[ln][:c].encode("utf-16-le")) // 2
        rng = T.Range(start=T.Position(line=ln, character=u + k0), end=T.Position(line=ln, character=u + k1))
        s.client.text_document_did_change(T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[T.TextDocumentContentChangePartial(range=rng, text=new)]))
        return fut

    sites = edit_sites(text, initial)
    samples = []
    for i in range(edits):  # type a character at a site, then delete it; next site
        kind, ln, c = sites[(i // 2) % len(sites)]
        t0 = time.perf_counter()
        fut = change(ln, c, 0, 0, "x") if i % 2 == 0 else change(ln, c, 0, 1, "")
        t1, _ = await s.wait(fut, f"the diagnostics of edit {i + 1} (version {version}, {kind} line {ln + 1})")
        samples.append((kind, (t1 - t0) * 1000))
    r["edit_ms"] = stats([t for _, t in samples])
    r["after_debounce_ms"] = stats([t - s.debounce for _, t in samples])
    r["after_debounce_by_site"] = {k: stats([t - s.debounce for k2, t in samples if k2 == k]) for k in
                                   dict.fromkeys(k for k, _, _ in sites)}
    r["edit_samples"] = samples

    kind, ln, c = next((x for x in sites if x[0] == "comment"), sites[0])  # type 10 characters, delete them
    before = len(s.pubs)
    for k in range(BURST):
        t0 = time.perf_counter()
        fut = change(ln, c, k, k, "y") if k < BURST // 2 else change(ln, c, BURST - k - 1, BURST - k, "")
    t1, last = await s.wait(fut, f"the diagnostics of the last change of the burst (version {version})")
    await asyncio.sleep(0.3 + s.debounce / 1000)  # a late stale publish would arrive by now
    got = [p.version for _, p in s.pubs[before:]]
    r["burst"] = {"changes": BURST, "last_change_to_diagnostics_ms": (t1 - t0) * 1000, "publishes": len(got),
                  "stale_publishes": sum(v != version for v in got), "versions": got}
    key = lambda d: (d.code, d.range.start.line, d.range.start.character)  # noqa: E731
    r["final_equals_initial"] = sorted(map(key, last.diagnostics)) == sorted(map(key, initial))

    doc = T.TextDocumentIdentifier(uri=uri)
    ca, res, hov = [], [], []
    for d in last.diagnostics:
        actions, ms = await s.timed(s.client.text_document_code_action_async(T.CodeActionParams(
            text_document=doc, range=d.range, context=T.CodeActionContext(diagnostics=[d]))),
            f"codeAction at line {d.range.start.line + 1}")
        ca.append(ms)
        for a in actions or []:
            if isinstance(a, T.CodeAction) and a.data is not None and a.edit is None and a.kind != FIX_ALL:
                res.append((await s.timed(s.client.code_action_resolve_async(a), f"resolve of {a.title!r}"))[1])
        hov.append((await s.timed(s.client.text_document_hover_async(T.HoverParams(
            text_document=doc, position=d.range.start)), f"hover at line {d.range.start.line + 1}"))[1])
    r["code_action_ms"], r["resolve_ms"], r["hover_ms"] = stats(ca), stats(res), stats(hov)
    whole = T.Range(start=T.Position(line=0, character=0), end=T.Position(line=len(lines), character=0))
    actions, ms = await s.timed(s.client.text_document_code_action_async(T.CodeActionParams(
        text_document=doc, range=whole, context=T.CodeActionContext(diagnostics=[], only=[FIX_ALL]))),
        "the fix-all action")
    r["fix_all"] = {"list_ms": ms, "actions": len(actions or [])}
    if actions:
        out, ms = await s.timed(s.client.code_action_resolve_async(actions[0]), "the fix-all resolve")
        e = out.edit
        r["fix_all"].update(resolve_ms=ms, text_edits=e and sum(len(dc.edits) for dc in e.document_changes or [])
                            + sum(map(len, (e.changes or {}).values())))
    r["peak_rss_mib"] = s.peak_rss_mib()
    return r


async def until(pred, step: float = 0.01):
    while not (got := pred()):
        await asyncio.sleep(step)
    return got


async def run(args) -> dict:
    command = shlex.split(args.server) if args.server else [sys.executable, "-m", "graphmend", "serve"]
    results = {}
    for name in args.files:
        src = Path(name).resolve()
        with tempfile.TemporaryDirectory(prefix="graphmend-lsp-bench-") as tmp:
            # the file in place (the server never writes a file; the texts of the sessions below
            # are sent, not saved)
            root = src.parent if args.root else None
            path = src
            # The server keeps what later sessions reuse in the user's cache directory (the
            # definitions index, analysis/definitions.py; the diagnostics of opened files,
            # lsp/opened.py): a fresh one per file, so that the first open is measured with it
            # empty (a new machine), the second with the imports indexed but the file's text
            # changed, and the measured session with what the second left (the same file again).
            cache_home = Path(tmp) / "xdg-cache"
            old_env = os.environ.get("XDG_CACHE_HOME")
            os.environ["XDG_CACHE_HOME"] = str(cache_home)
            try:
                changed = path.read_text(encoding="utf-8") + "\n# a file no session opened\n"
                opened = {}
                for key, text in (("open_empty_cache_ms", changed), ("open_indexed_imports_ms", None)):
                    first = Session(command, args.debounce, args.timeout)
                    try:
                        opened[key] = await open_only(first, root, path, text)
                    finally:
                        await first.stop()  # the server writes the definitions index when it shuts down
                s = Session(command, args.debounce, args.timeout)
                try:
                    results[src.name] = await measure(s, root, path, args.edits)
                finally:
                    await s.stop()
            finally:
                if old_env is None:
                    os.environ.pop("XDG_CACHE_HOME", None)
                else:
                    os.environ["XDG_CACHE_HOME"] = old_env
            results[src.name].update(opened)
            results[src.name]["user_cache_files"] = sorted(
                p.name for p in (cache_home / "graphmend").glob("*") if p.name.startswith(("definitions-", "opened-")))
    return results


async def open_only(s: Session, root: Path | None, path: Path, text: str | None = None,
                    kept: bool = True) -> float:
    """didOpen -> its diagnostics in a fresh server, ms (`text`: what the editor holds, else the
    file's); waits for the diagnostics kept for later sessions to be written (`kept`: a server
    that keeps none, editor.py's parse floor, is not waited for)."""
    uri = path.as_uri()
    text = path.read_text(encoding="utf-8") if text is None else text
    await s.start(root)
    fut = s.expect(uri, 1)
    started_ns = time.time_ns()
    t0 = time.perf_counter()
    s.client.text_document_did_open(T.DidOpenTextDocumentParams(
        text_document=T.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    t1, _ = await s.wait(fut, "the diagnostics of didOpen")
    if not kept:
        return (t1 - t0) * 1000
    from graphmend.analysis.definitions import user_cache_dir
    from graphmend.lsp.opened import OpenedCache
    record = Path(OpenedCache(user_cache_dir())._file(str(path)))  # this server's record of the file
    for _ in range(250):  # written off the check thread after the first check: wait for it before the stop
        if record.exists() and record.stat().st_mtime_ns >= started_ns:
            break
        await asyncio.sleep(0.02)
    return (t1 - t0) * 1000


def table(results: dict, args) -> str:
    num = lambda x: "-" if x is None else f"{x:.0f}"  # noqa: E731
    dist = lambda d: f"{num(d['p50'])} / {num(d['p95'])} / {num(d['max'])}" if d else "-"  # noqa: E731
    rows = [("", *results, "target")]

    def row(label: str, fn, target: float | None = None, key=None) -> None:
        ok = "" if target is None else f"p95 < {target:.0f}: " + ", ".join(
            "-" if key(r)["p95"] is None else "ok" if key(r)["p95"] < target else "MISSED" for r in results.values())
        rows.append((label, *(fn(r) for r in results.values()), ok))
    row("diagnostics when opened", lambda r: str(r["diagnostics"]))
    row("spawn -> initialize result ms", lambda r: num(r["spawn_to_initialize_ms"]))
    row("didOpen -> diagnostics ms, a file no session opened", lambda r: num(r["open_empty_cache_ms"]))
    row("didOpen -> diagnostics ms, changed since a session opened it", lambda r: num(r["open_indexed_imports_ms"]))
    row("didOpen -> diagnostics ms, the same file again", lambda r: num(r["open_to_diagnostics_ms"]))
    if args.root:
        row("initialized -> workspace indexed ms", lambda r: f"{num(r['index_ms'])} ({r['index']})")
    row(f"edit -> diagnostics ms, p50 / p95 / max ({args.edits})", lambda r: dist(r["edit_ms"]))
    row(f"  after the {args.debounce} ms debounce", lambda r: dist(r["after_debounce_ms"]),
        TARGETS["after_debounce_p95"], lambda r: r["after_debounce_ms"])
    for k in ("comment", "statement", "break"):
        row(f"    {k} sites", lambda r: dist(r["after_debounce_by_site"].get(k)))
    row(f"burst of {BURST}: last change -> diagnostics ms", lambda r: num(r["burst"]["last_change_to_diagnostics_ms"]))
    row("  publishes / of stale versions (want 0)", lambda r: f"{r['burst']['publishes']} / {r['burst']['stale_publishes']}")
    row("  diagnostics after edits == when opened", lambda r: str(r["final_equals_initial"]))
    for label, key in (("codeAction", "code_action_ms"), ("codeAction/resolve", "resolve_ms")):
        row(f"{label} ms, p50 / p95 / max (n)", lambda r: f"{dist(r[key])} ({r[key]['n']})",
            TARGETS["code_action_p95"], lambda r: r[key])
    row("fixAll: list / resolve ms (text edits)", lambda r: f"{num(r['fix_all']['list_ms'])} / "
        f"{num(r['fix_all'].get('resolve_ms'))} ({r['fix_all'].get('text_edits', 0)})")
    row("hover ms, p50 / p95 / max", lambda r: dist(r["hover_ms"]))
    row("server peak RSS (VmHWM) MiB", lambda r: num(r["peak_rss_mib"]))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows)


def default_files() -> list[str]:
    import importlib.util
    spec = importlib.util.find_spec("transformers")  # not imported: that takes seconds
    if spec is None or not spec.submodule_search_locations:
        sys.exit("transformers is not installed: pass --files")
    models = Path(list(spec.submodule_search_locations)[0]) / "models"
    return [str(models / "t5" / "modeling_t5.py"), str(models / "longformer" / "modeling_longformer.py")]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", nargs="+", help="Python files (default: transformers' t5 and longformer)")
    ap.add_argument("--edits", type=int, default=50, help="edit -> diagnostics samples (default 50)")
    ap.add_argument("--debounce", type=int, default=150, help="debounceMs given to the server (default 150)")
    ap.add_argument("--root", action="store_true", help="the file's directory is the workspace folder")
    ap.add_argument("--json", metavar="PATH", help="also write the figures (and the edit samples) as JSON")
    ap.add_argument("--server", metavar="CMD", help="server command (default: this python -m graphmend serve)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for any one reply (default 60)")
    args = ap.parse_args(argv)
    args.files = args.files or default_files()
    t0 = time.perf_counter()
    try:
        results = asyncio.run(run(args))
    except ServerDied as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except Exception:  # an error response, a malformed reply
        traceback.print_exc()
        return 1
    print(table(results, args))
    print(f"(debounceMs {args.debounce}; workspace folder: {'the file directory' if args.root else 'none'}; "
          f"{time.perf_counter() - t0:.1f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps({"debounce_ms": args.debounce, "edits": args.edits, "root": args.root,
                                               "targets_ms": TARGETS, "files": results}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
