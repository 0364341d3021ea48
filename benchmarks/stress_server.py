"""Stress the language server: drive one real `graphmend serve` over stdio with what editors and
broken clients send, and check that it stays up and right.

    python benchmarks/stress_server.py [--budget-seconds 120] [--seed 0] [--edits 300]
                                       [--huge-lines 50000] [--breaks 3000] [--json OUT]

Rounds of these scenarios run until the budget is spent (at least one round, the last one cut
short at the deadline):
  typing      --edits incremental changes at 100 a second to a copy of transformers'
              modeling_t5.py: half-typed code (unclosed brackets, a partial `def`, an open
              string), deletions, pastes, non-ASCII, positions past the end of a line or inside a
              surrogate pair; hover / codeAction / codeLens / diagnostic / resolve requests and
              cancellations interleaved
  delete-all  select all, delete, then paste everything back
  huge        a --huge-lines file (modeling files concatenated) pasted into an open document and
              typed in, while a small document is edited: its diagnostics must keep coming
  breaks      a generated `forward` with --breaks print calls: open, edit, actions, fix all
  garbage     random bytes (lone surrogates, U+FFFD, NUL, control characters) opened and typed
  deleted     a file removed from disk (and then its folder) while open, then edited and saved
  unopened    every request, and didChange / didSave / didClose, for documents never opened
  cancel      requests cancelled at once, after a while, twice, and for unknown ids
  malformed   raw bytes on stdin between valid traffic: bad JSON, not JSON-RPC, unknown methods,
              params of the wrong type, a position out of range, a negative version, a change
              range past the end, a second `initialize`, a response nobody asked for
The checks, throughout: every request is answered (result or error) within --timeout; no
publishDiagnostics for a version older than one already published for that document; after
each scenario the last publish is of the last version and equals a fresh `graphmend check` of
the text the client has (codes and lines); what was rejected is logged (window/logMessage);
the process is alive at the end and answers `shutdown`, then exits 0 on `exit`; resident
memory after the last round is within --rss-growth-mib of that after the first.

Exit status: 0 every check held; 1 a check failed (listed); 2 the server died.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import importlib.util
import json
import math
import os
import random
import re
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

EOL = re.compile(r"\r\n|\r|\n")
RATE = 100.0  # edits a second
REQUEST_CANCELLED = -32800


class ServerDied(Exception):
    pass


# --------------------------------------------------------------------------- the client's text


def units(s: str) -> int:
    """Length in UTF-16 code units (a lone surrogate counts one)."""
    return len(s) if s.isascii() else sum(2 if ord(c) > 0xFFFF else 1 for c in s)


def codepoints(body: str, u: int) -> int:
    """Code-point column of UTF-16 column `u`, as VS Code validates a position: clamped to the
    line, and moved before a surrogate pair it would split."""
    if body.isascii():
        return min(u, len(body))
    seen = 0
    for i, ch in enumerate(body):
        n = 2 if ord(ch) > 0xFFFF else 1
        if seen + n > u:
            return i
        seen += n
    return len(body)


class Doc:
    """The client's copy of an open document: its text and version, edits applied as VS Code
    applies them (lines split at \\r\\n, \\r and \\n; positions past a line's end or the last
    line clamped)."""

    def __init__(self, uri: str, text: str, path: Optional[Path] = None) -> None:
        self.uri, self.text, self.path, self.version = uri, text, path, 1
        self._lines: Optional[tuple[list[int], list[int]]] = None

    def _split(self) -> tuple[list[int], list[int]]:
        if self._lines is None:
            starts, ends = [0], []
            for m in EOL.finditer(self.text):
                ends.append(m.start())
                starts.append(m.end())
            ends.append(len(self.text))
            self._lines = (starts, ends)
        return self._lines

    @property
    def line_count(self) -> int:
        return len(self._split()[0])

    def body(self, line: int) -> str:
        starts, ends = self._split()
        return self.text[starts[line]:ends[line]]

    def offset(self, line: int, char: int) -> int:
        starts, ends = self._split()
        if line >= len(starts):
            return len(self.text)
        return starts[line] + codepoints(self.text[starts[line]:ends[line]], char)

    def position(self, offset: int) -> dict:
        starts, _ = self._split()
        import bisect
        line = bisect.bisect_right(starts, offset) - 1
        return {"line": line, "character": units(self.text[starts[line]:offset])}

    def end(self) -> dict:
        return self.position(len(self.text))

    def apply(self, start: dict, end: dict, new: str) -> None:
        a, b = self.offset(start["line"], start["character"]), self.offset(end["line"], end["character"])
        a, b = min(a, b), max(a, b)
        old = self.text[a:b]
        self.text = self.text[:a] + new + self.text[b:]
        if self._lines is not None and not EOL.search(old) and not EOL.search(new) \
                and self.text[a - 1:a + 1] != "\r\n":
            # within one line: the lines after it move (unless a \r and a \n now meet: one break)
            starts, ends = self._lines
            import bisect
            line, d = bisect.bisect_right(starts, a) - 1, len(new) - (b - a)
            starts[line + 1:] = map(d.__add__, starts[line + 1:])
            ends[line:] = map(d.__add__, ends[line:])
        else:
            self._lines = None

    def random_offset(self, rng: random.Random) -> int:
        starts, ends = self._split()
        line = rng.randrange(len(starts))
        return rng.randint(starts[line], ends[line])


# --------------------------------------------------------------------------- figures


@dataclass
class Figures:
    messages_sent: int = 0
    bytes_sent: int = 0
    raw_malformed_sent: int = 0
    edits: int = 0
    requests: int = 0
    responses: int = 0
    error_responses: int = 0
    cancelled_responses: int = 0
    cancels_sent: int = 0
    unanswered: int = 0
    unexpected_responses: int = 0
    latencies_ms: dict = field(default_factory=dict)  # method -> [ms]
    publishes: int = 0
    stale_publishes: int = 0
    superseded_on_arrival: int = 0
    publishes_of_unknown_versions: int = 0
    log_messages: int = 0
    rejections_logged: int = 0
    show_messages: int = 0
    final_checks: int = 0
    final_mismatches: int = 0
    settle_ms_max: float = 0.0
    settle_slowest: str = ""
    small_doc_while_huge_ms_max: float = 0.0
    rss_mib: list = field(default_factory=list)  # after each round
    rss_start_mib: float = 0.0
    rss_peak_mib: float = 0.0
    rss_end_mib: float = 0.0
    crashes: int = 0
    rounds: int = 0
    scenario_s: dict = field(default_factory=dict)

    def summary(self) -> dict:
        d = asdict(self)
        allms = [x for v in self.latencies_ms.values() for x in v]
        d["latencies_ms"] = {m: pct(v) for m, v in sorted(self.latencies_ms.items())}
        d["latency_ms"] = pct(allms)
        d["scenario_s"] = {k: round(v, 1) for k, v in self.scenario_s.items()}
        return d


def pct(xs: list[float]) -> dict:
    s = sorted(xs)
    p = lambda q: round(s[max(0, math.ceil(q / 100 * len(s)) - 1)], 1) if s else None  # noqa: E731
    return {"n": len(s), "p50": p(50), "p95": p(95), "max": p(100)}


# --------------------------------------------------------------------------- the session


@dataclass
class Pending:
    method: str
    sent: float
    future: asyncio.Future
    cancelled: bool = False


class Session:
    """One server process over stdio, spoken to in raw JSON-RPC (so that malformed messages can
    go between valid ones), and every check on what comes back."""

    def __init__(self, tmp: Path, figures: Figures, problems: list[str], timeout: float = 60.0,
                 command: Optional[list[str]] = None) -> None:
        self.tmp, self.fig, self.problems, self.timeout = tmp, figures, problems, timeout
        self.command = command or [sys.executable, "-m", "graphmend", "serve"]
        self.proc: Optional[asyncio.subprocess.Process] = None
        self.pending: dict[Any, Pending] = {}
        self.next_id = 0
        self.docs: dict[str, Doc] = {}
        self.sent_seq: dict[str, dict[int, int]] = {}  # uri -> version -> order sent
        self.max_published: dict[str, int] = {}  # uri -> highest order published
        self.last_publish: dict[str, dict] = {}  # uri -> params of the last publish
        self.publish_times: dict[str, list[tuple[float, Optional[int]]]] = {}
        self.logs: list[tuple[float, int, str]] = []  # (time, type, message)
        self.seq = 0
        self.stderr = bytearray()
        self.exit_code: Optional[int] = None

    # ------------------------------------------------------------------ process
    async def start(self, root: Optional[Path] = None, options: Optional[dict] = None) -> dict:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = await asyncio.create_subprocess_exec(
            *self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=str(self.tmp), env=env, limit=1 << 24)
        self.reader = asyncio.ensure_future(self._read())
        self.err_reader = asyncio.ensure_future(self._drain_stderr())
        caps = {
            "textDocument": {
                "synchronization": {"didSave": True, "willSaveWaitUntil": True},
                "publishDiagnostics": {"versionSupport": True, "dataSupport": True},
                "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "source"]}},
                               "dataSupport": True, "isPreferredSupport": True,
                               "resolveSupport": {"properties": ["edit"]}},
                "hover": {"contentFormat": ["markdown"]}, "codeLens": {}},
            "workspace": {"workspaceEdit": {"documentChanges": True}, "configuration": True,
                          "codeLens": {"refreshSupport": True}},
            "window": {"workDoneProgress": True}}
        init = await self.call("initialize", {
            "processId": os.getpid(), "capabilities": caps, "rootUri": root.as_uri() if root else None,
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}] if root else None,
            "initializationOptions": options or {}})
        if "result" not in init:
            raise ServerDied(f"initialize failed: {init}")
        self.notify("initialized", {})
        await self.flush()
        self.fig.rss_start_mib = self.fig.rss_start_mib or (self.rss()[0] or 0.0)
        return init["result"]

    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    def rss(self) -> tuple[Optional[float], Optional[float]]:
        """(VmRSS, VmHWM) of the server in MiB (Linux)."""
        try:
            status = Path(f"/proc/{self.proc.pid}/status").read_text()
        except (OSError, AttributeError):
            return None, None
        got = {k: int(v) / 1024 for k, v in re.findall(r"(VmRSS|VmHWM):\s+(\d+) kB", status)}
        if "VmHWM" in got:
            self.fig.rss_peak_mib = max(self.fig.rss_peak_mib, got["VmHWM"])
        return got.get("VmRSS"), got.get("VmHWM")

    async def _drain_stderr(self) -> None:
        while chunk := await self.proc.stderr.read(65536):
            self.stderr += chunk
            del self.stderr[:-200_000]

    def died(self) -> ServerDied:
        tail = self.stderr.decode(errors="replace")[-3000:]
        return ServerDied(f"the server exited (status {self.proc.returncode})\n{tail}")

    async def stop(self) -> None:
        """`shutdown` must be answered and `exit` end the process with status 0."""
        if not self.alive():
            self.fig.crashes += 1
            self.problems.append(f"the server was not running at the end (status {self.proc.returncode})")
            return
        self.fig.rss_end_mib = self.rss()[0] or 0.0
        got = await self.call("shutdown", None, timeout=30)
        if "result" not in got:
            self.problems.append(f"shutdown was not answered with a result: {got}")
        self.notify("exit", None)
        await self.flush()
        try:
            self.exit_code = await asyncio.wait_for(self.proc.wait(), 20)
        except asyncio.TimeoutError:
            self.problems.append("the server did not exit after `exit`")
            self.proc.kill()
            self.exit_code = await self.proc.wait()
        if self.exit_code != 0:
            self.problems.append(f"the server exited with status {self.exit_code} after shutdown and exit")
        await asyncio.gather(self.reader, self.err_reader, return_exceptions=True)

    async def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()

    # ------------------------------------------------------------------ wire
    def send_bytes(self, data: bytes, malformed: bool = False) -> None:
        if not self.alive():
            raise self.died()
        self.proc.stdin.write(data)
        self.fig.bytes_sent += len(data)
        if malformed:
            self.fig.raw_malformed_sent += 1
        else:
            self.fig.messages_sent += 1

    @staticmethod
    def frame(body: bytes, extra_headers: str = "") -> bytes:
        return f"Content-Length: {len(body)}\r\n{extra_headers}\r\n".encode("ascii") + body

    def send(self, obj: dict) -> None:
        # ensure_ascii: lone surrogates go as \\udcXX escapes, as JSON.stringify writes them
        self.send_bytes(self.frame(json.dumps(obj).encode("ascii")))

    async def flush(self) -> None:
        try:
            await asyncio.wait_for(self.proc.stdin.drain(), self.timeout)
        except (ConnectionResetError, BrokenPipeError):
            raise self.died()
        except asyncio.TimeoutError:
            self.problems.append(f"the server read nothing from stdin for {self.timeout:.0f} s")
            raise

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def expect(self, msg_id: Any, method: str) -> Pending:
        p = Pending(method, time.perf_counter(), asyncio.get_running_loop().create_future())
        self.pending[msg_id] = p
        self.fig.requests += 1
        return p

    def request(self, method: str, params: Any) -> int:
        self.next_id += 1
        self.expect(self.next_id, method)
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def cancel(self, msg_id: Any) -> None:
        if msg_id in self.pending:
            self.pending[msg_id].cancelled = True
        self.fig.cancels_sent += 1
        self.notify("$/cancelRequest", {"id": msg_id})

    async def response(self, msg_id: Any, timeout: Optional[float] = None) -> dict:
        p = self.pending.get(msg_id)
        if p is None:
            raise KeyError(msg_id)
        return await self.wait_for(p.future, f"the response to {p.method} (id {msg_id})", timeout)

    async def call(self, method: str, params: Any, timeout: Optional[float] = None) -> dict:
        msg_id = self.request(method, params)
        await self.flush()
        return await self.response(msg_id, timeout)

    async def wait_for(self, aw, what: str, timeout: Optional[float] = None):
        task = asyncio.ensure_future(aw)
        dead = asyncio.ensure_future(self.proc.wait())
        done, _ = await asyncio.wait({task, dead}, timeout=timeout or self.timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        dead.cancel()
        if task in done:
            return task.result()
        task.cancel()
        if not self.alive():
            await asyncio.sleep(0.2)
            raise self.died()
        raise asyncio.TimeoutError(f"timed out after {timeout or self.timeout:.0f} s waiting for {what}")

    async def until(self, pred: Callable[[], Any], what: str, timeout: Optional[float] = None):
        async def poll():
            while not (got := pred()):
                await asyncio.sleep(0.01)
            return got
        return await self.wait_for(poll(), what, timeout)

    async def _read(self) -> None:
        out = self.proc.stdout
        try:
            while True:
                length = None
                while True:
                    line = await out.readline()
                    if not line:
                        return
                    if line.strip() == b"":
                        break
                    k, _, v = line.decode("ascii", "replace").partition(":")
                    if k.strip().lower() == "content-length":
                        length = int(v)
                if length is None:
                    self.problems.append("the server sent a message without Content-Length")
                    continue
                body = await out.readexactly(length)
                try:
                    msg = json.loads(body)
                except ValueError:
                    self.problems.append(f"the server sent bad JSON: {body[:200]!r}")
                    continue
                self._dispatch(msg)
        except (asyncio.IncompleteReadError, ConnectionResetError):
            return

    def _dispatch(self, msg: dict) -> None:
        now = time.perf_counter()
        if "method" not in msg:  # a response
            p = self.pending.pop(msg.get("id"), None)
            if p is None:
                self.fig.unexpected_responses += 1
                self.problems.append(f"a response to no pending request: {str(msg)[:200]}")
                return
            self.fig.responses += 1
            self.fig.latencies_ms.setdefault(p.method, []).append((now - p.sent) * 1000)
            if "error" in msg:
                self.fig.error_responses += 1
                if msg["error"].get("code") == REQUEST_CANCELLED:
                    self.fig.cancelled_responses += 1
            if not p.future.done():
                p.future.set_result(msg)
            return
        method, params = msg["method"], msg.get("params")
        if "id" in msg:  # a request from the server
            result: Any = None
            if method == "workspace/configuration":
                result = [{} for _ in (params or {}).get("items", [])]
            elif method == "workspace/applyEdit":
                result = {"applied": False, "failureReason": "the stress client applies nothing"}
            self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            return
        if method == "textDocument/publishDiagnostics":
            self._published(now, params)
        elif method == "window/logMessage":
            self.fig.log_messages += 1
            self.logs.append((now, params.get("type", 0), params.get("message", "")))
            if "rejected" in params.get("message", ""):
                self.fig.rejections_logged += 1
        elif method == "window/showMessage":
            self.fig.show_messages += 1
            self.logs.append((now, params.get("type", 0), "[shown] " + params.get("message", "")))

    def _published(self, now: float, p: dict) -> None:
        self.fig.publishes += 1
        uri, version = p["uri"], p.get("version")
        self.publish_times.setdefault(uri, []).append((now, version))
        if version is None:  # a close clears the document's diagnostics without a version
            self.last_publish[uri] = p
            return
        order = self.sent_seq.get(uri, {}).get(version)
        if order is None:
            self.fig.publishes_of_unknown_versions += 1
            self.problems.append(f"a publish for {short(uri)} version {version}, which is not open at that version")
            return
        if order < self.max_published.get(uri, -1):
            self.fig.stale_publishes += 1
            self.problems.append(f"a stale publish: {short(uri)} version {version} after a later version")
        self.max_published[uri] = max(order, self.max_published.get(uri, -1))
        doc = self.docs.get(uri)
        if doc is not None and doc.version != version:
            self.fig.superseded_on_arrival += 1
        self.last_publish[uri] = p

    # ------------------------------------------------------------------ documents
    def _sent_version(self, doc: Doc) -> None:
        self.seq += 1
        self.sent_seq.setdefault(doc.uri, {})[doc.version] = self.seq

    def open(self, uri: str, text: str, path: Optional[Path] = None, version: int = 1) -> Doc:
        doc = Doc(uri, text, path)
        doc.version = version
        self.docs[uri] = doc
        self.sent_seq[uri], self.max_published[uri] = {}, -1
        self.last_publish.pop(uri, None)
        self._sent_version(doc)
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "python", "version": version, "text": text}})
        return doc

    def change(self, doc: Doc, start: dict, end: dict, text: str, version: Optional[int] = None) -> None:
        """One incremental change (applied to the client's copy as VS Code would)."""
        doc.apply(start, end, text)
        doc.version = doc.version + 1 if version is None else version
        self._sent_version(doc)
        self.fig.edits += 1
        self.notify("textDocument/didChange", {
            "textDocument": {"uri": doc.uri, "version": doc.version},
            "contentChanges": [{"range": {"start": start, "end": end}, "text": text}]})

    def change_offsets(self, doc: Doc, a: int, b: int, text: str) -> None:
        self.change(doc, doc.position(a), doc.position(b), text)

    def replace_all(self, doc: Doc, text: str) -> None:
        self.change(doc, {"line": 0, "character": 0}, doc.end(), text)

    def close(self, doc: Doc) -> None:
        self.notify("textDocument/didClose", {"textDocument": {"uri": doc.uri}})
        self.docs.pop(doc.uri, None)
        self.sent_seq.pop(doc.uri, None)
        self.max_published.pop(doc.uri, None)

    def ident(self, doc_or_uri) -> dict:
        return {"uri": doc_or_uri if isinstance(doc_or_uri, str) else doc_or_uri.uri}

    async def settle(self, doc: Doc, timeout: Optional[float] = None, what: str = "") -> dict:
        """The publish of the document's current version (none of an older one may follow)."""
        t0 = time.perf_counter()
        await self.flush()
        pub = await self.until(
            lambda: (p := self.last_publish.get(doc.uri)) is not None and p.get("version") == doc.version and p,
            f"the diagnostics of {short(doc.uri)} version {doc.version} {what}".strip(), timeout)
        ms = (time.perf_counter() - t0) * 1000
        if ms > self.fig.settle_ms_max:
            self.fig.settle_ms_max, self.fig.settle_slowest = ms, f"{short(doc.uri)} {what}".strip()
        return pub

    async def idle(self, timeout: Optional[float] = None) -> None:
        """Every request sent so far answered; those that are not within the timeout are counted."""
        await self.flush()
        try:
            await self.until(lambda: not self.pending, "every response", timeout)
        except asyncio.TimeoutError:
            for msg_id, p in list(self.pending.items()):
                self.fig.unanswered += 1
                self.problems.append(f"no response to {p.method} (id {msg_id}) after "
                                     f"{time.perf_counter() - p.sent:.0f} s")
                self.pending.pop(msg_id)

    async def compare_with_cli(self, doc: Doc, pub: dict, label: str) -> None:
        """The published diagnostics equal `graphmend check` of the client's text (codes and lines;
        on a syntax error only the syntax error, as the server carries the last findings over)."""
        self.fig.final_checks += 1
        want = await cli_findings(doc.text, str(doc.path or self.tmp / "untitled.py"), self.tmp)
        if want is None:
            return
        got = sorted((d.get("code"), d["range"]["start"]["line"] + 1) for d in pub["diagnostics"]
                     if d.get("source") == "graphmend")
        if any(c == "GM001" for c, _ in want):
            got = [k for k in got if k[0] == "GM001"]
            want = [k for k in want if k[0] == "GM001"]
        if got != want:
            self.fig.final_mismatches += 1
            extra, missing = sorted(set(got) - set(want)), sorted(set(want) - set(got))
            self.problems.append(f"{label}: the diagnostics of version {pub.get('version')} differ from "
                                 f"`graphmend check`: {len(got)} vs {len(want)}; only the server: {extra[:5]}; "
                                 f"only the CLI: {missing[:5]}")


def short(uri: str) -> str:
    return uri.rsplit("/", 1)[-1][:60]


async def cli_findings(text: str, path: str, cwd: Path) -> Optional[list[tuple[str, int]]]:
    """(code, line) of `graphmend check` on `text` (None when the text cannot be a file: lone
    surrogates)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        return None
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "graphmend", "check", "--no-cache", "--format", "json", "--exit-zero",
        "--stdin-filename", path, "-", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, cwd=str(cwd))
    out, err = await proc.communicate(data)
    try:
        return sorted((f["code"], f["line"]) for f in json.loads(out))
    except ValueError:
        raise RuntimeError(f"graphmend check failed: {err.decode(errors='replace')[-2000:]}")


# --------------------------------------------------------------------------- inputs


def modeling_dir() -> Path:
    spec = importlib.util.find_spec("transformers")  # not imported: that takes seconds
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("transformers is not installed")
    return Path(list(spec.submodule_search_locations)[0]) / "models"


def huge_text(lines: int) -> str:
    """At least `lines` lines of real modeling code (files concatenated in name order)."""
    out, n = [], 0
    for p in sorted(modeling_dir().glob("*/modeling_*.py")):
        if "_tf_" in p.name or "_flax_" in p.name:
            continue
        text = p.read_text(encoding="utf-8")
        text = "\n".join(ln for ln in text.split("\n") if not ln.startswith("from __future__"))
        out.append(text if text.endswith("\n") else text + "\n")
        n += text.count("\n") + 1
        if n >= lines:
            break
    return "".join(out)


def breaks_text(n: int) -> str:
    body = "".join(f"        print('step {i}', x.shape)\n" for i in range(n))
    return ("import torch\nfrom torch import nn\n\n\nclass Many(nn.Module):\n"
            "    def forward(self, x):\n" + body + "        return x\n")


SMALL = '''import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


class Small(nn.Module):
    def forward(self, x):
        print("in", x.shape)
        if x.sum() > 0:
            x = x * 2
        logger.warning("done")
        return x
'''

SNIPPETS = [
    "x = foo(", "def half_typed(self, a", "if hidden_states.sum() > 0:\n    print('hi')\n",
    'print("unterminated', "'''docstring", "return (", "lambda q: [", "}", "class Half(nn.Module",
    "    ", "\t", "é😀 ünï", "# comment with (", "logger.warning('typed %s', x)\n", "torch.", "\n",
    "x.item()", "for i in range(", "@torch.compile\ndef g(x):\n    return x.sum().item()\n", "\\",
]


def garbage(rng: random.Random, n: int) -> str:
    raw = bytes(rng.randrange(256) for _ in range(n)).decode("utf-8", "surrogateescape")
    extra = ["\x00", "\ufffd", "\x0c", "\u2028", "\r", "\x1b[31m", "😀", "\ud83d"]
    return "".join(c if rng.random() > 0.05 else rng.choice(extra) for c in raw)


# --------------------------------------------------------------------------- scenarios


@dataclass
class Config:
    edits: int = 300
    huge_lines: int = 50_000
    breaks: int = 3_000
    deadline: float = float("inf")  # perf_counter time after which loops stop early


def random_position(doc: Doc, rng: random.Random) -> dict:
    r = rng.random()
    if r < 0.05:  # past the end of the document
        return {"line": doc.line_count + rng.randrange(5), "character": rng.randrange(200)}
    if r < 0.1:  # past the end of a line
        return {"line": rng.randrange(doc.line_count), "character": 1000 + rng.randrange(100)}
    if r < 0.15:  # any unit: inside a surrogate pair where there is one
        line = rng.randrange(doc.line_count)
        return {"line": line, "character": rng.randrange(units(doc.body(line)) + 1)}
    return doc.position(doc.random_offset(rng))


def random_request(s: Session, doc_or_uri, rng: random.Random, doc: Optional[Doc] = None) -> int:
    """hover, codeAction (quick fixes or fix all), codeLens, pull diagnostic or a resolve."""
    td = s.ident(doc_or_uri)
    pos = random_position(doc, rng) if doc else {"line": rng.randrange(100), "character": rng.randrange(80)}
    kind = rng.randrange(6)
    if kind == 0:
        return s.request("textDocument/hover", {"textDocument": td, "position": pos})
    if kind in (1, 2):
        end = random_position(doc, rng) if doc else pos
        only = ["source.fixAll.graphmend"] if kind == 2 else None
        ctx = {"diagnostics": [], **({"only": only} if only else {})}
        return s.request("textDocument/codeAction", {"textDocument": td, "range": {"start": pos, "end": end},
                                                     "context": ctx})
    if kind == 3:
        return s.request("textDocument/codeLens", {"textDocument": td})
    if kind == 4:
        return s.request("textDocument/diagnostic", {"textDocument": td})
    return s.request("codeAction/resolve", {"title": "x", "data": {
        "uri": td["uri"], "version": doc.version if doc else 1, "action": rng.choice(["fix", "ignore", "fixAll"]),
        "code": "GM101", "line": pos["line"] + 1, "col": 0}})


def parses(text: str) -> bool:
    try:
        ast.parse(text)
        return True
    except (SyntaxError, ValueError):
        return False


async def type_edits(s: Session, doc: Doc, rng: random.Random, n: int, cfg: Config,
                     requests: bool = True, original_len: Optional[int] = None) -> int:
    """`n` changes at RATE a second: snippets typed a character at a time (and half the time
    erased again), selections deleted, lines pasted; requests and cancellations between."""
    original_len = original_len or len(doc.text)
    queue: list[Callable[[], None]] = []
    t_next = time.perf_counter()
    done = 0
    in_flight: list[int] = []
    while done < n and time.perf_counter() < cfg.deadline:
        if not queue:
            r = rng.random()
            if r < 0.55:
                at, snip = doc.random_offset(rng), rng.choice(SNIPPETS)
                for k, ch in enumerate(snip):
                    queue.append(lambda at=at, k=k, ch=ch: s.change_offsets(doc, at + k, at + k, ch))
                if rng.random() < 0.5:
                    for k in reversed(range(len(snip))):
                        queue.append(lambda at=at, k=k: s.change_offsets(doc, at + k, at + k + 1, ""))
            elif r < 0.8 or len(doc.text) > 1.3 * original_len:
                a = doc.random_offset(rng)
                b = min(len(doc.text), a + rng.choice([1, 1, 1, 5, 30, 200]))
                queue.append(lambda a=a, b=b: s.change_offsets(doc, a, b, ""))
            elif r < 0.9:
                a = doc.random_offset(rng)
                chunk = doc.text[a:a + rng.randrange(400)]
                queue.append(lambda chunk=chunk: s.change_offsets(doc, (b := doc.random_offset(rng)), b, chunk))
            else:  # a raw position: past the end, inside a surrogate pair
                p0 = random_position(doc, rng)
                queue.append(lambda p0=p0: s.change(doc, p0, p0, rng.choice(["z", "é", "😀", ""])))
        queue.pop(0)()
        done += 1
        if requests and rng.random() < 0.12:
            in_flight.append(random_request(s, doc, rng, doc))
            if rng.random() < 0.3:
                s.cancel(in_flight.pop())
        if in_flight and rng.random() < 0.02:
            s.cancel(in_flight.pop(rng.randrange(len(in_flight))))
        t_next += 1 / RATE
        await s.flush()
        await asyncio.sleep(max(0.0, t_next - time.perf_counter()))
    return done


async def finish(s: Session, doc: Doc, label: str, timeout: Optional[float] = None) -> dict:
    """Settle on the last version and compare its diagnostics with the CLI's."""
    pub = await s.settle(doc, timeout, f"after {label}")
    await s.compare_with_cli(doc, pub, label)
    return pub


async def scenario_typing(s: Session, rng: random.Random, cfg: Config, t5: Path) -> None:
    text = t5.read_text(encoding="utf-8")
    doc = s.open(t5.as_uri(), text, t5)
    await s.settle(doc, what="when opened")
    last_good = text
    await type_edits(s, doc, rng, cfg.edits, cfg)
    await finish(s, doc, "typing")
    if parses(doc.text):
        last_good = doc.text
    else:  # undo to a text that parses (one change over everything), as an editor's undo would
        s.replace_all(doc, last_good)
        await finish(s, doc, "typing, repaired")
    await s.idle()
    s.close(doc)


async def scenario_delete_all(s: Session, rng: random.Random, cfg: Config, t5: Path) -> None:
    text = t5.read_text(encoding="utf-8")
    doc = s.open(t5.as_uri(), text, t5)
    first = await s.settle(doc, what="when opened")
    s.replace_all(doc, "")
    pub = await s.settle(doc, what="after deleting everything")
    if pub["diagnostics"]:
        s.problems.append(f"an empty document has {len(pub['diagnostics'])} diagnostics")
    for _ in range(3):  # requests on the empty document
        random_request(s, doc, rng, doc)
    s.change(doc, {"line": 0, "character": 0}, {"line": 0, "character": 0}, text)  # paste it back
    pub = await s.settle(doc, what="after pasting everything back")
    key = lambda p: sorted((d["code"], d["range"]["start"]["line"]) for d in p["diagnostics"])  # noqa: E731
    if key(pub) != key(first):
        s.problems.append("delete-all then paste: the diagnostics differ from those when opened")
    await s.idle()
    s.close(doc)


async def scenario_huge(s: Session, rng: random.Random, cfg: Config, tmp: Path) -> None:
    """A huge paste into one document while another is edited: the small one's diagnostics keep
    coming (behind at most the huge check that is running), and the huge one settles right."""
    huge = huge_text(cfg.huge_lines)
    big = s.open((tmp / "pasted.py").as_uri(), "import torch\n", tmp / "pasted.py")
    small = s.open((tmp / "small.py").as_uri(), SMALL, tmp / "small.py")
    await s.settle(big)
    await s.settle(small)
    s.change(big, big.end(), big.end(), huge)
    await s.flush()
    t_end = time.perf_counter() + 4
    cli = asyncio.ensure_future(cli_findings(big.text, str(big.path), tmp))
    while time.perf_counter() < t_end and time.perf_counter() < cfg.deadline:  # edit the small one meanwhile
        line = 10 + rng.randrange(5)
        s.change(small, {"line": line, "character": 0}, {"line": line, "character": 0}, "")  # a no-op change
        t0 = time.perf_counter()
        await s.settle(small, what="while a huge document is checked")
        s.fig.small_doc_while_huge_ms_max = max(s.fig.small_doc_while_huge_ms_max, (time.perf_counter() - t0) * 1000)
        random_request(s, big, rng, big)
        await asyncio.sleep(0.3)
    pub = await s.settle(big, timeout=max(s.timeout, 180), what="after the huge paste")
    want = await cli
    got = sorted((d["code"], d["range"]["start"]["line"] + 1) for d in pub["diagnostics"])
    s.fig.final_checks += 1
    if want is not None and got != want:
        s.fig.final_mismatches += 1
        s.problems.append(f"huge paste: {len(got)} diagnostics, `graphmend check` {len(want)}")
    await type_edits(s, big, rng, min(cfg.edits, 50), cfg, requests=True)
    await finish(s, big, "typing in the huge document", timeout=max(s.timeout, 180))
    await s.idle(timeout=max(s.timeout, 180))
    s.close(big)
    s.close(small)


async def scenario_breaks(s: Session, rng: random.Random, cfg: Config, tmp: Path) -> None:
    path = tmp / "many_breaks.py"
    text = breaks_text(cfg.breaks)
    path.write_text(text, encoding="utf-8")
    doc = s.open(path.as_uri(), text, path)
    pub = await s.settle(doc, timeout=max(s.timeout, 120), what="when opened")
    if len(pub["diagnostics"]) < cfg.breaks:
        s.problems.append(f"{cfg.breaks} break sites, {len(pub['diagnostics'])} diagnostics")
    d = pub["diagnostics"][len(pub["diagnostics"]) // 2] if pub["diagnostics"] else None
    if d is not None:
        s.request("textDocument/hover", {"textDocument": s.ident(doc), "position": d["range"]["start"]})
        got = await s.call("textDocument/codeAction", {"textDocument": s.ident(doc), "range": d["range"],
                                                       "context": {"diagnostics": [d]}})
        for a in (got.get("result") or [])[:2]:
            s.request("codeAction/resolve", a)
    s.request("textDocument/codeLens", {"textDocument": s.ident(doc)})
    whole = {"start": {"line": 0, "character": 0}, "end": doc.end()}
    fix_all = await s.call("textDocument/codeAction", {"textDocument": s.ident(doc), "range": whole, "context": {
        "diagnostics": [], "only": ["source.fixAll.graphmend"]}}, timeout=max(s.timeout, 120))
    for a in (fix_all.get("result") or []):
        s.request("codeAction/resolve", a)  # the edit of every mend
    await s.idle(timeout=max(s.timeout, 180))
    for _ in range(min(cfg.edits // 10, 30)):  # add and remove break sites at RATE
        line = 6 + rng.randrange(cfg.breaks)
        if rng.random() < 0.5:
            s.change(doc, {"line": line, "character": 0}, {"line": line, "character": 0}, "        print('new')\n")
        else:
            s.change(doc, {"line": line, "character": 0}, {"line": line + 1, "character": 0}, "")
        await s.flush()
        await asyncio.sleep(1 / RATE)
    await finish(s, doc, "editing the many-breaks file", timeout=max(s.timeout, 120))
    await s.idle()
    s.close(doc)


async def scenario_garbage(s: Session, rng: random.Random, cfg: Config, tmp: Path) -> None:
    path = tmp / "garbage.py"
    doc = s.open(path.as_uri(), garbage(rng, 4000), path)
    await s.settle(doc, what="when opened with garbage")
    for _ in range(40):
        at = doc.random_offset(rng)
        s.change_offsets(doc, at, min(len(doc.text), at + rng.randrange(3)), garbage(rng, rng.randrange(1, 30)))
        if rng.random() < 0.3:
            random_request(s, doc, rng, doc)
        await s.flush()
        await asyncio.sleep(1 / RATE)
    await s.settle(doc, what="after typing garbage")
    s.replace_all(doc, SMALL)  # and back to code
    await finish(s, doc, "garbage replaced by code")
    await s.idle()
    s.close(doc)


async def scenario_deleted(s: Session, rng: random.Random, cfg: Config, tmp: Path) -> None:
    folder = tmp / f"gone{rng.randrange(10**6)}"
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[tool.graphmend]\nselect = [\"GM1\"]\n")
    path = folder / "deleted.py"
    path.write_text(SMALL, encoding="utf-8")
    doc = s.open(path.as_uri(), SMALL, path)
    await s.settle(doc, what="when opened")
    path.unlink()
    for step in range(2):
        s.change(doc, {"line": 10, "character": 0}, {"line": 10, "character": 0}, "        print('more')\n")
        s.notify("textDocument/willSave", {"textDocument": s.ident(doc), "reason": 1})
        s.request("textDocument/willSaveWaitUntil", {"textDocument": s.ident(doc), "reason": 1})
        s.notify("textDocument/didSave", {"textDocument": s.ident(doc)})
        for _ in range(4):
            random_request(s, doc, rng, doc)
        await s.settle(doc, what="after the file was deleted")
        if step == 0:
            shutil.rmtree(folder)
    pub = await s.settle(doc)
    await s.idle()
    if not any(d.get("code") == "GM101" for d in pub["diagnostics"]):
        s.problems.append("a deleted file's document lost its diagnostics")
    s.close(doc)


async def scenario_unopened(s: Session, rng: random.Random, cfg: Config, tmp: Path) -> None:
    uris = [(tmp / "never_opened.py").as_uri(), "untitled:Untitled-1", "file:///no/such/dir/%E2%82%AC%20x.py",
            "not a uri", "", "file:///" + "a/" * 200 + "deep.py", "vscode-notebook-cell:/x.ipynb#W0sZmlsZQ%3D%3D"]
    ids, t0 = [], time.perf_counter()
    for uri in uris:
        for _ in range(6):
            ids.append(random_request(s, uri, rng))
        ids.append(s.request("textDocument/willSaveWaitUntil", {"textDocument": {"uri": uri}, "reason": 1}))
        ids.append(s.request("workspace/executeCommand", {"command": "graphmend.fixAll",
                                                          "arguments": [{"uri": uri, "version": 3}]}))
        s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "x"}]})
        s.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        s.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    waiting = [(i, s.pending[i]) for i in ids if i in s.pending]
    await s.idle()
    await asyncio.sleep(0.2)
    logged = sum(1 for t, _, m in s.logs if t >= t0 and "the document is not open" in m)
    if logged < len(uris):
        s.problems.append(f"{len(uris)} changes to documents never opened, {logged} logged as rejected")
    for msg_id, p in waiting:  # documents never opened: answered with nothing, never with an error
        if p.future.done() and "error" in p.future.result() and not p.cancelled:
            s.problems.append(f"{p.method} for a document never opened answered with an error: "
                              f"{str(p.future.result()['error'])[:300]}")


async def scenario_cancel(s: Session, rng: random.Random, cfg: Config, t5: Path) -> None:
    text = t5.read_text(encoding="utf-8")
    doc = s.open(t5.as_uri(), text, t5)
    await s.settle(doc, what="when opened")
    for i in range(30):
        msg_id = random_request(s, doc, rng, doc)
        if i % 3 == 0:
            s.cancel(msg_id)  # at once
        elif i % 3 == 1:
            await s.flush()
            await asyncio.sleep(rng.random() * 0.05)
            s.cancel(msg_id)
            s.cancel(msg_id)  # twice
        if i % 5 == 0:  # a change makes the pending ones wait for a new check
            s.change(doc, {"line": 0, "character": 0}, {"line": 0, "character": 0}, "#" if i % 10 else "")
    s.cancel(10**9)  # unknown ids
    s.cancel("no-such-request")
    await s.idle()
    await finish(s, doc, "cancellations")
    s.close(doc)


def malformed_messages(s: Session, doc: Doc) -> list[tuple[str, bytes, Optional[int], bool]]:
    """(name, bytes, the id a response must come for, whether it is logged as rejected)."""
    def msg(obj) -> bytes:
        return Session.frame(json.dumps(obj).encode())

    def rid() -> int:
        s.next_id += 1
        return s.next_id
    td = s.ident(doc)
    out = []
    out.append(("bad JSON", Session.frame(b'{"jsonrpc": "2.0", "method": "textDocument/hover", "id": '), None, True))
    out.append(("invalid UTF-8", Session.frame(b'{"jsonrpc": "2.0", "method": "\xff\xfe"}'), None, True))
    out.append(("a JSON array", msg([1, 2, 3]), None, True))
    out.append(("a JSON number", msg(42), None, True))
    out.append(("no jsonrpc member", msg({"id": "x", "method": "textDocument/hover"}), None, True))
    i = rid()
    out.append(("jsonrpc 1.0", msg({"jsonrpc": "1.0", "id": i, "method": "textDocument/hover", "params": {}}), i, True))
    i = rid()
    out.append(("unknown request", msg({"jsonrpc": "2.0", "id": i, "method": "graphmend/noSuchMethod", "params": {}}),
                i, True))
    out.append(("unknown notification", msg({"jsonrpc": "2.0", "method": "graphmend/noSuchNote", "params": {}}),
                None, True))
    i = rid()
    out.append(("params of the wrong type", msg({"jsonrpc": "2.0", "id": i, "method": "textDocument/hover",
                                                 "params": {"textDocument": td, "position": "abc"}}), i, True))
    i = rid()
    out.append(("params null", msg({"jsonrpc": "2.0", "id": i, "method": "textDocument/codeAction", "params": None}),
                i, True))
    i = rid()
    out.append(("no params", msg({"jsonrpc": "2.0", "id": i, "method": "textDocument/codeLens"}), i, True))
    i = rid()
    out.append(("a negative position", msg({"jsonrpc": "2.0", "id": i, "method": "textDocument/hover", "params": {
        "textDocument": td, "position": {"line": -1, "character": -5}}}), i, True))
    out.append(("a change of the wrong type", msg({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": doc.uri, "version": doc.version + 1000}, "contentChanges": "x"}}), None, True))
    i = rid()
    out.append(("a second initialize", msg({"jsonrpc": "2.0", "id": i, "method": "initialize", "params": {
        "processId": None, "rootUri": None, "capabilities": {}}}), i, True))
    i = rid()
    out.append(("an unknown command", msg({"jsonrpc": "2.0", "id": i, "method": "workspace/executeCommand",
                                           "params": {"command": "graphmend.noSuchCommand"}}), i, False))
    i = rid()
    out.append(("fixAll with odd arguments", msg({"jsonrpc": "2.0", "id": i, "method": "workspace/executeCommand",
                                                  "params": {"command": "graphmend.fixAll",
                                                             "arguments": [{"uri": [1]}, None, 3]}}), i, False))
    i = rid()
    out.append(("resolve with odd data", msg({"jsonrpc": "2.0", "id": i, "method": "codeAction/resolve",
                                              "params": {"title": "t", "data": {"uri": {"a": 1}, "version": "v"}}}),
                i, False))
    i = rid()
    out.append(("a string id", msg({"jsonrpc": "2.0", "id": f"s-{i}", "method": "textDocument/codeLens",
                                    "params": {"textDocument": td}}), f"s-{i}", False))
    out.append(("a response nobody asked for", msg({"jsonrpc": "2.0", "id": 987654321, "result": None}), None, False))
    out.append(("junk header lines", b"X-Junk: 1\r\nanother junk line\r\n" + msg(
        {"jsonrpc": "2.0", "method": "$/setTrace", "params": {"value": "off"}}), None, False))
    body = json.dumps({"jsonrpc": "2.0", "method": "$/noSuchThing"}).encode()
    out.append(("a Content-Type header", Session.frame(
        body, "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"), None, False))
    out.append(("deep nesting", Session.frame(b"[" * 100_000 + b"]" * 100_000), None, True))
    return out


async def scenario_malformed(s: Session, rng: random.Random, cfg: Config, tmp: Path) -> None:
    """Malformed messages between valid traffic; afterwards the document the valid changes (and a
    negative version, a change past the end) produced must be what the server checked."""
    path = tmp / "target.py"
    path.write_text(SMALL, encoding="utf-8")
    doc = s.open(path.as_uri(), SMALL, path)
    await s.settle(doc, what="when opened")
    t0 = time.perf_counter()
    items = malformed_messages(s, doc)
    rng.shuffle(items)
    for name, data, msg_id, _logged in items:
        if msg_id is not None:
            s.expect(msg_id, f"malformed: {name}")
        s.send_bytes(data, malformed=True)
        # valid traffic between: a request and a change
        s.request("textDocument/hover", {"textDocument": s.ident(doc), "position": {"line": 10, "character": 9}})
        s.change(doc, {"line": 9, "character": 0}, {"line": 9, "character": 0}, "# " + name + "\n")
        await s.flush()
        await asyncio.sleep(0.01)
    # positions out of range (valid JSON-RPC): a request, a change past the end, a negative version
    s.request("textDocument/hover", {"textDocument": s.ident(doc), "position": {"line": 10**6, "character": 10**6}})
    s.request("textDocument/codeAction", {"textDocument": s.ident(doc), "context": {"diagnostics": []}, "range": {
        "start": {"line": 10**6, "character": 0}, "end": {"line": 0, "character": 10**6}}})
    s.change(doc, {"line": 5000, "character": 7}, {"line": 6000, "character": 0}, "\nprint('past the end')\n")
    s.change(doc, {"line": 2, "character": 500}, {"line": 2, "character": 900}, "  # past the end of a line")
    s.change(doc, {"line": 11, "character": 0}, {"line": 11, "character": 0}, "        print('neg')\n", version=-7)
    s.change(doc, {"line": 11, "character": 0}, {"line": 11, "character": 0}, "        print('pos')\n",
             version=max(v for v in s.sent_seq[doc.uri]) + 1)
    await finish(s, doc, "malformed input")
    await s.idle()
    await asyncio.sleep(0.5)  # the last log lines
    logged = [m for t, _, m in s.logs if t >= t0]
    want = sum(1 for *_, lg in items if lg)
    got = sum(1 for m in logged if "rejected" in m)
    if got < want:
        s.problems.append(f"{want} malformed messages should be logged as rejected, {got} were")
    if not any("versions must increase" in m for m in logged):
        s.problems.append("a change with a lower version was not logged")
    s.close(doc)


SCENARIOS = ["typing", "delete-all", "huge", "breaks", "garbage", "deleted", "unopened", "cancel", "malformed"]


async def run_round(s: Session, rng: random.Random, cfg: Config, tmp: Path, t5: Path,
                    only: Optional[list[str]] = None) -> None:
    for name in only or SCENARIOS:
        if time.perf_counter() > cfg.deadline and name != (only or SCENARIOS)[0]:
            break
        t0 = time.perf_counter()
        fn = {"typing": scenario_typing, "delete-all": scenario_delete_all, "cancel": scenario_cancel}.get(name)
        if fn is not None:
            await fn(s, rng, cfg, t5)
        else:
            await globals()["scenario_" + name.replace("-", "_")](s, rng, cfg, tmp)
        s.fig.scenario_s[name] = s.fig.scenario_s.get(name, 0.0) + time.perf_counter() - t0


async def stress(budget_s: float, seed: int, cfg: Config, timeout: float = 60.0,
                 only: Optional[list[str]] = None, rss_growth_mib: float = 64.0,
                 command: Optional[list[str]] = None, max_rounds: Optional[int] = None
                 ) -> tuple[Figures, list[str]]:
    """Rounds of the scenarios on one server until the budget is spent (or `max_rounds` ran);
    (figures, problems)."""
    fig, problems = Figures(), []
    rng = random.Random(seed)
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="graphmend-stress-") as name:
        tmp = Path(name) / "ws"
        tmp.mkdir()
        t5 = tmp / "modeling_t5.py"
        shutil.copy(modeling_dir() / "t5" / "modeling_t5.py", t5)
        s = Session(tmp, fig, problems, timeout, command)
        try:
            await s.start(root=tmp)
            round_s = 0.0
            while True:
                t0 = time.perf_counter()
                cfg.deadline = t_start + budget_s
                await run_round(s, rng, cfg, tmp, t5, only)
                await s.idle()
                await asyncio.sleep(0.5)
                fig.rounds += 1
                fig.rss_mib.append(round(s.rss()[0] or 0.0, 1))
                round_s = time.perf_counter() - t0
                if time.perf_counter() + round_s > t_start + budget_s or fig.rounds == max_rounds:
                    break
            if len(fig.rss_mib) > 1 and fig.rss_mib[-1] - fig.rss_mib[0] > rss_growth_mib:
                problems.append(f"resident memory grew from {fig.rss_mib[0]} MiB after round 1 to "
                                f"{fig.rss_mib[-1]} MiB after round {len(fig.rss_mib)}")
            await s.stop()
        except ServerDied as e:
            fig.crashes += 1
            problems.append(str(e))
        except asyncio.TimeoutError as e:
            problems.append(f"timeout: {e}")
            await s.kill()
        finally:
            await s.kill()
    fig.rss_end_mib = fig.rss_end_mib or 0.0
    fig.scenario_s["total"] = time.perf_counter() - t_start
    return fig, problems


def report(fig: Figures, problems: list[str], args) -> str:
    sm = fig.summary()
    lat = sm["latency_ms"]
    rows = [
        ("rounds / seconds", f"{fig.rounds} / {fig.scenario_s.get('total', 0):.0f}"),
        ("messages sent (valid) / malformed raw", f"{fig.messages_sent} / {fig.raw_malformed_sent}"),
        ("MiB sent", f"{fig.bytes_sent / 2**20:.1f}"),
        ("edits (didChange)", fig.edits),
        ("requests / responses / unanswered", f"{fig.requests} / {fig.responses} / {fig.unanswered}"),
        ("error responses (of which cancelled)", f"{fig.error_responses} ({fig.cancelled_responses})"),
        ("cancellations sent", fig.cancels_sent),
        ("response latency ms p50 / p95 / max", f"{lat['p50']} / {lat['p95']} / {lat['max']}"),
        ("publishes / stale (want 0)", f"{fig.publishes} / {fig.stale_publishes}"),
        ("  superseded on arrival (a newer change in flight)", fig.superseded_on_arrival),
        ("last version -> its diagnostics, max ms", f"{fig.settle_ms_max:.0f} ({fig.settle_slowest})"),
        ("small document during a huge check, max ms", f"{fig.small_doc_while_huge_ms_max:.0f}"),
        ("final diagnostics == graphmend check", f"{fig.final_checks - fig.final_mismatches} of {fig.final_checks}"),
        ("log messages / rejections logged / shown",
         f"{fig.log_messages} / {fig.rejections_logged} / {fig.show_messages}"),
        ("RSS MiB start / peak (VmHWM) / end",
         f"{fig.rss_start_mib:.0f} / {fig.rss_peak_mib:.0f} / {fig.rss_end_mib:.0f}"),
        ("RSS MiB after each round", " ".join(f"{x:.0f}" for x in fig.rss_mib)),
        ("crashes (want 0)", fig.crashes),
    ]
    w = max(len(a) for a, _ in rows)
    out = [f"{a.ljust(w)}  {b}" for a, b in rows]
    out.append("slowest methods (max ms): " + ", ".join(
        f"{m} {v['max']}" for m, v in sorted(sm["latencies_ms"].items(), key=lambda kv: -kv[1]["max"])[:4]))
    out.append("scenario seconds: " + ", ".join(f"{k} {v}" for k, v in sm["scenario_s"].items()))
    out.append("problems: none" if not problems else f"problems ({len(problems)}):")
    out += [f"  - {p}" for p in problems[:50]]
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget-seconds", type=float, default=120.0, help="rounds run until this is spent (default 120)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--edits", type=int, default=300, help="typing edits per round (default 300, at 100 a second)")
    ap.add_argument("--huge-lines", type=int, default=50_000, help="lines of the pasted file (default 50000)")
    ap.add_argument("--breaks", type=int, default=3_000, help="break sites of the generated file (default 3000)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds any one response may take (default 60)")
    ap.add_argument("--rss-growth-mib", type=float, default=64.0,
                    help="allowed growth of RSS from the first round to the last (default 64)")
    ap.add_argument("--only", nargs="+", choices=SCENARIOS, help="run only these scenarios")
    ap.add_argument("--rounds", type=int, help="stop after this many rounds (default: when the budget is spent)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures and problems as JSON")
    args = ap.parse_args(argv)
    cfg = Config(edits=args.edits, huge_lines=args.huge_lines, breaks=args.breaks)
    fig, problems = asyncio.run(stress(args.budget_seconds, args.seed, cfg, args.timeout, args.only,
                                       args.rss_growth_mib, max_rounds=args.rounds))
    print(report(fig, problems, args))
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "figures": fig.summary(), "problems": problems},
                                              indent=1, default=str))
    return 2 if fig.crashes else 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
