"""The language server under stress: the CI version of benchmarks/stress_server.py (one round of
each scenario, smaller inputs), and tests of the fixes those runs led to.

The end-to-end tests drive a real `graphmend serve` over stdio and assert properties, not
timings: every request answered, no publish of a superseded version, the last publish equal to
`graphmend check` of the client's text, rejected input logged, a clean shutdown.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import random
from pathlib import Path
from types import SimpleNamespace

import pytest
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from loading import load_path
from graphmend.lsp.document import Document

REPO = Path(__file__).resolve().parent.parent
HARNESS = REPO / "benchmarks" / "stress_server.py"
UTF16 = PositionCodec(types.PositionEncodingKind.Utf16)


def _load_harness():
    return load_path(HARNESS, "graphmend_bench_stress_server", reuse=True)


S = _load_harness()
needs_transformers = pytest.mark.skipif(importlib.util.find_spec("transformers") is None,
                                        reason="the scenarios edit transformers' modeling files")


def change(start: tuple[int, int], end: tuple[int, int], text: str) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(range=types.Range(
        start=types.Position(line=start[0], character=start[1]),
        end=types.Position(line=end[0], character=end[1])), text=text)


# --------------------------------------------------------------------------- end to end


def run_scenarios(only: list[str], **cfg) -> tuple:
    fig, problems = asyncio.run(S.stress(budget_s=240, seed=0, cfg=S.Config(**cfg), timeout=90,
                                         only=only, max_rounds=1))
    assert not problems, "\n".join(problems)
    assert fig.crashes == 0 and fig.stale_publishes == 0 and fig.unanswered == 0
    assert fig.requests == fig.responses
    assert fig.final_checks > 0 and fig.final_mismatches == 0
    return fig, problems


@needs_transformers
def test_typing_bursts_cancellations_and_delete_all():
    fig, _ = run_scenarios(["typing", "delete-all", "cancel"], edits=300)
    assert fig.edits >= 300 and fig.cancels_sent > 10
    assert fig.cancelled_responses > 0  # cancelled requests are answered (RequestCancelled)


@needs_transformers
def test_huge_paste_and_thousands_of_breaks():
    """A 20,000-line paste (checked in its own thread while a small document keeps getting its
    diagnostics) and a forward with 1,000 print calls: open, edit, actions, fix all."""
    fig, _ = run_scenarios(["huge", "breaks"], edits=40, huge_lines=20_000, breaks=1_000)
    assert fig.publishes > 5


@needs_transformers
def test_garbage_deleted_files_and_documents_never_opened():
    run_scenarios(["garbage", "deleted", "unopened"], edits=40)


@needs_transformers
def test_malformed_messages_are_answered_or_logged():
    fig, _ = run_scenarios(["malformed"])
    assert fig.raw_malformed_sent >= 20
    assert fig.rejections_logged >= 15
    assert fig.show_messages == 0  # logged, not a pop-up per bad message


# --------------------------------------------------------------------------- document.py


def test_position_inside_a_surrogate_pair_means_the_one_before_it():
    """VS Code moves a position that splits a surrogate pair before the pair; the server moved it
    after, so the edit landed one character later than in the editor."""
    doc = Document("file:///x.py", "/x.py", "a😀b\n")
    doc.apply_change(change((0, 2), (0, 2), "X"), UTF16)  # unit 2 is inside 😀 (units 1-2)
    assert doc.text == "aX😀b\n"
    doc.apply_change(change((0, 4), (0, 3), ""), UTF16)  # reversed, from inside the pair: deletes 😀
    assert doc.text == "aXb\n"


def test_change_past_the_end_is_clamped_as_in_vs_code():
    doc = Document("file:///x.py", "/x.py", "x = 1\ny = 2")
    doc.apply_change(change((0, 99), (0, 120), "  # one"), UTF16)
    doc.apply_change(change((50, 3), (70, 0), "\nz = 3\n"), UTF16)
    assert doc.text == "x = 1  # one\ny = 2\nz = 3\n"
    assert doc.lines == ["x = 1  # one\n", "y = 2\n", "z = 3\n", ""]


def test_incremental_changes_match_the_editor():
    """Random changes (line breaks of every kind, \\r then \\n typed apart, surrogate pairs, lone
    surrogates, NUL, positions anywhere) give the text and lines the editor has."""
    rng = random.Random(7)
    for _ in range(150):
        text = S.garbage(rng, 120).replace("\ud83d", "")
        doc, mine = Document("u", "p", text), S.Doc("u", text)
        for _ in range(25):
            p0 = S.random_position(mine, rng)
            p1 = S.random_position(mine, rng) if rng.random() < 0.5 else p0
            new = rng.choice(["", "x", "\r", "\n", "\r\n", "😀", "é", "\x00"]) * rng.randrange(3)
            doc.apply_change(change((p0["line"], p0["character"]), (p1["line"], p1["character"]), new), UTF16)
            mine.apply(p0, p1, new)
            assert doc.text == mine.text
            assert doc.lines == Document("u", "p", mine.text).lines


# --------------------------------------------------------------------------- checker.py, actions.py


def test_carry_over_diffs_only_the_edited_region():
    """Findings carried over a syntax error move as with a diff of the whole file (which took 9 s
    per keystroke in a 50,000-line file)."""
    import difflib

    from graphmend.findings import Finding, Pos, Span
    from graphmend.lsp.checker import carry_over
    from graphmend.textlines import split_lines
    rng = random.Random(3)
    base = [f"line_{i % 40} = {i}" if i % 7 else "" for i in range(400)]
    for _ in range(60):
        findings = [Finding(code="GM101", message="m", span=Span(Pos(n, 0), Pos(n + rng.randrange(2), 1)))
                    for n in rng.sample(range(1, 390), 20)]
        new = list(base)
        for _ in range(rng.randrange(1, 3)):
            i = rng.randrange(len(new))
            new[i:i + rng.randrange(4)] = [rng.choice(["", "x = (", new[i]])] * rng.randrange(4)
        old_text, new_text = "\n".join(base), "\n".join(new)
        a, b = split_lines(old_text), split_lines(new_text)
        mapping = {}
        for blk in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
            mapping.update({blk.a + k + 1: blk.b + k + 1 for k in range(blk.size)})
        want = [(mapping[f.span.start.line], mapping[f.span.end.line]) for f in findings
                if f.span.start.line in mapping and f.span.end.line in mapping
                and mapping[f.span.end.line] - mapping[f.span.start.line] == f.span.end.line - f.span.start.line]
        got = [(f.span.start.line, f.span.end.line) for f in carry_over(findings, old_text, new_text)]
        assert got == want


def test_fix_all_diff_of_a_large_file_turns_old_into_new():
    from graphmend.lsp.actions import DIFF_EXACT_LINES, diff_edits
    from graphmend.rewrite.apply import apply_edits
    rng = random.Random(5)
    old_lines = [rng.choice(["", "    )", "        x = f(x)", f"y{i} = {i}"]) for i in range(DIFF_EXACT_LINES + 500)]
    new_lines = list(old_lines)
    for i in sorted(rng.sample(range(len(new_lines)), 60), reverse=True):
        new_lines[i:i + 1] = ["        __gm_defer(print, x)", new_lines[i]] if i % 2 else []
    old, new = "\n".join(old_lines) + "\n", "\n".join(new_lines) + "\n"
    assert apply_edits(old, diff_edits(old, new)) == new


def test_fix_all_is_computed_once_per_version(monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    from graphmend.lsp import actions
    calls = []

    def fake(server, path, checked, mode="vendor"):
        calls.append(path)
        return ["edit"]
    monkeypatch.setattr(actions, "fix_all_text_edits", fake)
    checked = SimpleNamespace(fix_all=None, text="x = 1\n", settings=SimpleNamespace(runtime="inline"))

    async def current(uri):
        return checked
    server = SimpleNamespace(docs={"u": SimpleNamespace(path="/x.py")}, fix_pool=ThreadPoolExecutor(1),
                             diagnostics=SimpleNamespace(current=current))

    async def main():
        first = asyncio.ensure_future(actions.fix_all_edits(server, "u"))
        await asyncio.sleep(0)
        first.cancel()  # a cancelled request leaves the computation to the others
        got = await asyncio.gather(*(actions.fix_all_edits(server, "u") for _ in range(3)))
        return got
    got = asyncio.run(main())
    assert calls == ["/x.py"] and all(edits == ["edit"] for _, _, edits in got)
    # not at all on a document too large to mend in the server (libcst would stall it for seconds)
    from graphmend.lsp.checker import LARGE_TEXT
    checked.fix_all, checked.text = None, "x = 1\n" * (LARGE_TEXT // 6 + 1)
    assert actions.too_large(checked.text)
    assert asyncio.run(actions.fix_all_edits(server, "u"))[2] == [] and calls == ["/x.py"]


def test_odd_data_sent_back_by_the_client_is_no_error():
    from graphmend.lsp import actions
    from graphmend.lsp.server import _target
    assert _target(({"uri": [1], "version": "3"},)) == (None, None)
    assert _target(({"uri": "file:///a.py", "version": True},)) == ("file:///a.py", None)
    server = SimpleNamespace(docs={})
    action = types.CodeAction(title="t", data={"uri": {"a": 1}, "version": "v"})
    assert asyncio.run(actions.resolve(server, action)) is action


# --------------------------------------------------------------------------- protocol.py


class Wire:
    """The server's protocol without a process: messages in as the stdio reader hands them over,
    what it writes collected."""

    def __init__(self) -> None:
        from graphmend.lsp.server import GraphMendServer
        self.server = GraphMendServer()
        self.protocol = self.server.protocol
        self.out: list[dict] = []
        wire = self

        class Writer:
            def write(self, data: bytes) -> None:
                wire.out.append(json.loads(data.split(b"\r\n\r\n", 1)[1]))

            def close(self) -> None:
                pass
        self.protocol.set_writer(Writer())

    def feed(self, body) -> None:
        """As pygls' reader does: decode, structure, handle; a failure goes to the error handler."""
        from pygls.exceptions import JsonRpcException
        try:
            raw = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.protocol.handle_message(json.loads(raw, object_hook=self.protocol.structure_message))
        except Exception as exc:
            self.server.report_server_error(exc, JsonRpcException)

    def response(self, msg_id) -> dict:
        return next(m for m in self.out if m.get("id") == msg_id and "method" not in m)


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None,
                                                                       "capabilities": {}}}


def test_invalid_requests_are_answered_and_rejections_logged(caplog):
    async def main():
        w = Wire()
        w.feed(INIT)
        await asyncio.sleep(0.05)
        td = {"uri": "file:///never.py"}
        w.feed({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {"textDocument": td,
                                                                                     "position": "abc"}})
        w.feed({"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover", "params": {
            "textDocument": td, "position": {"line": -1, "character": 0}}})
        w.feed({"jsonrpc": "2.0", "id": 4, "method": "textDocument/codeLens", "params": None})
        w.feed(INIT | {"id": 5})
        w.feed({"jsonrpc": "1.0", "id": 6, "method": "shutdown"})
        w.feed(b'{"jsonrpc": "2.0", "id": ')
        w.feed([1, 2])
        w.feed({"jsonrpc": "2.0", "method": "graphmend/nothing", "params": {}})
        await asyncio.sleep(0.05)
        return w
    with caplog.at_level(logging.WARNING, logger="graphmend.lsp"):
        w = asyncio.run(main())
    assert "result" in w.response(1)
    for msg_id in (2, 3, 4):
        assert w.response(msg_id)["error"]["code"] == -32602  # InvalidParams
    assert w.response(5)["error"]["code"] == -32600  # a second initialize: InvalidRequest
    assert w.response(6)["error"]["code"] == -32600  # not JSON-RPC 2.0
    rejected = [r.getMessage() for r in caplog.records if "rejected" in r.getMessage()]
    assert len(rejected) >= 8, rejected
    assert not any(m.get("method") == "window/showMessage" for m in w.out)  # no pop-ups


def test_notifications_leave_no_futures_behind():
    """pygls kept every handled notification's future in its table of requests in flight
    (about 1.9 KB a keystroke, forever)."""
    async def main():
        w = Wire()
        w.feed(INIT)
        await asyncio.sleep(0.05)
        uri = "file:///leak.py"
        w.feed({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}}})
        for v in range(2, 502):
            w.feed({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": v}, "contentChanges": [{"range": {
                    "start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "#"}]}})
            w.feed({"jsonrpc": "2.0", "method": "textDocument/didSave", "params": {"textDocument": {"uri": uri}}})
            if v % 50 == 0:
                await asyncio.sleep(0)
        await asyncio.sleep(0.1)
        left = len(w.protocol._request_futures)
        w.feed({"jsonrpc": "2.0", "id": 9, "method": "shutdown"})  # cancels what is in flight
        await asyncio.sleep(0.05)
        return left, w
    left, w = asyncio.run(main())
    assert left < 20
    assert "result" in w.response(9)


def test_a_change_to_a_document_never_opened_is_ignored():
    """pygls' own copy raised KeyError (an "Error in server" pop-up) for it."""
    async def main():
        w = Wire()
        w.feed(INIT)
        await asyncio.sleep(0.05)
        w.feed({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": "file:///never.py", "version": 2}, "contentChanges": [{"text": "x"}]}})
        await asyncio.sleep(0.05)
        return w
    w = asyncio.run(main())
    assert not any(m.get("method") == "window/showMessage" for m in w.out)


def test_large_documents_are_checked_in_their_own_thread():
    from graphmend.lsp.server import LARGE_TEXT, GraphMendServer
    s = GraphMendServer()
    assert s.check_pool("x" * (LARGE_TEXT + 1)) is s.large_pool
    assert s.check_pool("x = 1\n") is s.pool


def test_a_malformed_response_of_the_client_fails_the_servers_request():
    """Nothing of the server waits forever for an answer it could not read."""
    async def main():
        w = Wire()
        w.feed(INIT)
        await asyncio.sleep(0.05)
        fut = w.protocol.send_request("workspace/applyEdit", types.ApplyWorkspaceEditParams(
            edit=types.WorkspaceEdit(changes={})))
        msg_id = w.out[-1]["id"]
        w.feed({"jsonrpc": "2.0", "id": msg_id, "result": "not an ApplyWorkspaceEditResult"})
        await asyncio.sleep(0.05)
        return fut
    fut = asyncio.run(main())
    assert fut.done() and fut.exception() is not None
