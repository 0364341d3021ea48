"""The diagnostics of opened documents kept between sessions (lsp/opened.py): given back only for
the same text, settings, context and unchanged dependencies; and a second language server opening
the same file sends them at once, then the full check (code actions wait for it)."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from pathlib import Path

import pytest
from lsprotocol import types as T

from graphmend.config import Settings
from graphmend.findings import Finding, Pos, Span
from graphmend.lsp.opened import OpenedCache
from loading import load_path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "lsp_fixtures"


def _finding(line: int = 3) -> Finding:
    return Finding("GM101", "print() inside compiled code breaks the graph", Span(Pos(line, 4), Pos(line, 12)))


def test_given_back_only_for_the_same_text_settings_context_and_dependencies(tmp_path):
    dep = tmp_path / "base.py"
    dep.write_text("class Base: pass\n")
    src = tmp_path / "m.py"
    cache = OpenedCache(str(tmp_path / "cache"), "fp")
    s = Settings()
    assert cache.put(str(src), "text", s, {}, (), [_finding()], [str(dep)]) is None
    got = cache.get(str(src), "text", s, {}, ())
    assert [(f.code, f.span) for f in got] == [("GM101", _finding().span)]
    assert cache.get(str(src), "text!", s, {}, ()) is None  # another text
    assert cache.get(str(src), "text", Settings(scope="module"), {}, ()) is None  # other settings
    assert cache.get(str(src), "text", s, {"f": "Pipeline.forward"}, ()) is None  # reached from elsewhere
    assert cache.get(str(src), "text", s, {}, [("f", _finding(9))]) is None  # a caller elsewhere
    assert cache.get(str(tmp_path / "other.py"), "text", s, {}, ()) is None  # another file
    assert OpenedCache(str(tmp_path / "cache"), "other engine").get(str(src), "text", s, {}, ()) is None
    time.sleep(0.01)
    dep.write_text("class Base(object): pass\n")  # a module its analysis read changed
    assert cache.get(str(src), "text", s, {}, ()) is None
    assert cache.put(str(src), "text", s, {}, (), [_finding()], [str(dep)]) is None
    assert cache.get(str(src), "text", s, {}, ()) is not None
    Path(cache._file(str(src))).write_bytes(b"garbage")  # damaged: a miss, never an error
    assert cache.get(str(src), "text", s, {}, ()) is None


def test_an_unwritable_directory_is_reported(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    cache = OpenedCache(str(blocker / "sub"), "fp")
    err = cache.put(str(tmp_path / "m.py"), "t", Settings(), {}, (), [], [])
    assert err is not None and "cannot write the cache of opened documents" in err


def _bench():
    return load_path(ROOT / "benchmarks" / "lsp.py", "graphmend_bench_lsp_test", reuse=True)


async def _session(bench, root: Path, path: Path, version: int = 1):
    s = bench.Session([sys.executable, "-m", "graphmend", "serve"], 20, 60)
    await s.start(root)
    uri = path.as_uri()
    fut = s.expect(uri, version)
    s.client.text_document_did_open(T.DidOpenTextDocumentParams(text_document=T.TextDocumentItem(
        uri=uri, language_id="python", version=version, text=path.read_text())))
    _, first = await s.wait(fut, "the first diagnostics")
    return s, uri, first


@pytest.mark.asyncio
async def test_a_second_session_sends_them_at_once_then_checks(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    root = tmp_path / "project"
    shutil.copytree(FIXTURES, root)
    path = root / "model.py"
    bench = _bench()
    view = lambda p: [(d.code, d.range.start.line, d.message) for d in p.diagnostics]  # noqa: E731

    s, uri, first = await _session(bench, root, path)
    try:
        for _ in range(200):  # written off the check thread, after the first check
            if list((tmp_path / "xdg" / "graphmend").glob("opened-*/*.pickle")):
                break
            await asyncio.sleep(0.05)
        assert not any("an earlier session left" in m for _, m in s.logs)
    finally:
        await s.stop()
    assert len(view(first)) == 6

    s, uri, again = await _session(bench, root, path)
    try:
        assert view(again) == view(first)
        for _ in range(100):  # the log line is sent after the publish it tells of
            if any("the diagnostics an earlier session left" in m for _, m in s.logs):
                break
            await asyncio.sleep(0.02)
        assert any("the diagnostics an earlier session left" in m for _, m in s.logs)
        # a code action waits for the full check (it needs the analysis' sites)
        d = next(d for d in again.diagnostics if d.code == "GM101")
        acts = await s.wait(s.client.text_document_code_action_async(T.CodeActionParams(
            text_document=T.TextDocumentIdentifier(uri=uri), range=d.range,
            context=T.CodeActionContext(diagnostics=[d]))), "code actions")
        assert any(a.title.startswith("GraphMend (GM101)") for a in acts)
    finally:
        await s.stop()

    # another text: no start from the cache
    path.write_text(path.read_text() + "\n# edited\n")
    s, uri, third = await _session(bench, root, path)
    try:
        await asyncio.sleep(0.5)
        assert not any("an earlier session left" in m for _, m in s.logs)
        assert view(third) == view(first)
    finally:
        await s.stop()
