"""Findings -> LSP diagnostics, and when they are computed and sent.

A change schedules a check after the debounce; the check runs in the analysis thread; its
result is kept only if the document is still at the version it was computed for (a result for
an older version is never published). Diagnostics are pushed (`publishDiagnostics` with the
version) unless the client pulls them (`textDocument/diagnostic`), which then waits for the
check of the current version and answers "unchanged" when nothing changed.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import logging
import re
import threading
from typing import TYPE_CHECKING, Optional

from lsprotocol import types

from graphmend.findings import CATALOGUE, Applicability, Finding, Pos, Span, severity
from graphmend.lsp import probe
from graphmend.lsp.checker import Checked, check
from graphmend.lsp.document import Document
from graphmend.lsp.notebook import NotebookDoc
from graphmend.rules import DOCS_URL

if TYPE_CHECKING:
    from graphmend.lsp.server import GraphMendServer

log = logging.getLogger("graphmend.lsp")
SOURCE = "graphmend"
_LABEL_RE = re.compile(r"^(?P<q>[\w.<>]+?)(?: \((?P<why>.*)\))?$")


# --------------------------------------------------------------------------- conversion


_SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
             "information": types.DiagnosticSeverity.Information, "hint": types.DiagnosticSeverity.Hint}


def to_diagnostic(f: Finding, doc: Document, checked: Checked, server: "GraphMendServer") -> types.Diagnostic:
    codec = server.codec
    rule = CATALOGUE.get(f.code)
    syntax = f.code == "GM001"
    carried = f in checked.carried if checked.syntax_error is not None else False
    message = f.message
    if f.decline_reason and f.applicability is not Applicability.SAFE and not syntax:
        message += f" (no safe fix: {f.decline_reason})" if f.applicability is Applicability.UNSAFE \
            else f" (not mendable: {f.decline_reason})"
    data = {"code": f.code, "version": checked.version, "line": f.span.start.line, "col": f.span.start.col,
            "fix": None if carried else f.applicability.value, "title": f.fix_title}
    return types.Diagnostic(
        range=doc.range(f.span, codec),
        message=message,
        severity=_SEVERITY[severity(f, getattr(checked.settings, "conditional_severity", "information"))],
        code=f.code,
        code_description=types.CodeDescription(href=DOCS_URL.format(code=f.code)) if rule else None,
        source=SOURCE,
        related_information=_related(f, doc, checked, server),
        data=data,
    )


def _related(f: Finding, doc: Document, checked: Checked, server: "GraphMendServer"):
    if not f.entry:
        return None
    m = _LABEL_RE.match(f.entry)
    qual = m.group("q") if m else f.entry
    if checked.symbols is not None:
        for fi in checked.symbols.all_functions:
            if fi.qualname == qual:
                line = fi.node.lineno
                start = Pos(line, checked.line_index.col(line, fi.node.col_offset))
                end = Pos(line, len(doc.lines[line - 1].rstrip("\r\n")) if line <= len(doc.lines) else 0)
                loc = types.Location(uri=doc.uri, range=doc.range(Span(start, end), server.codec))
                return [types.DiagnosticRelatedInformation(
                    location=loc, message=f"in scope: compiled entry {f.entry}")]
    where = server.index.locate(qual) if server.index is not None else None
    if where is not None:
        uri, line = where
        return [types.DiagnosticRelatedInformation(
            location=types.Location(uri=uri, range=types.Range(
                start=types.Position(line=line, character=0), end=types.Position(line=line, character=0))),
            message=f"in scope: reached from compiled entry {f.entry}")]
    return None


def result_id(diagnostics: list[types.Diagnostic]) -> str:
    """An id of exactly these diagnostics (for pulls, and to skip sending the same ones twice):
    a digest of their reprs, which attrs writes from every field (the converter's unstructure
    and a sorted JSON dump cost 1-5 ms per publish on a large file)."""
    return hashlib.sha1(repr(diagnostics).encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- the GC around a check


class _GcPause:
    """The cyclic GC held off from a check's start until its diagnostics are sent. The analysis
    allocates a tree's worth of objects; the collection they trigger (a first pass over all of
    them, 3-10 ms per check on transformers' large files, and now and then a pass over an older
    generation of 100-300 ms) then runs after the publish, between keystrokes, not before it.
    Counted, so overlapping checks (several documents) keep it off until the last one is sent."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held = 0
        self._was = True

    def hold(self) -> None:
        with self._lock:
            if self._held == 0:
                self._was = gc.isenabled()
                gc.disable()
            self._held += 1

    def release(self) -> None:
        with self._lock:
            self._held -= 1
            if self._held == 0 and self._was:
                gc.enable()


GC_PAUSE = _GcPause()


# --------------------------------------------------------------------------- scheduling


class Diagnostics:
    """Per-document check scheduling, version ordering, push and pull."""

    def __init__(self, server: "GraphMendServer") -> None:
        self.server = server
        self.checked: dict[str, Checked] = {}
        self.published: dict[str, tuple[list[types.Diagnostic], str]] = {}  # uri -> (diags, result id)
        self._tasks: dict[str, asyncio.Task] = {}
        self._done: dict[str, asyncio.Event] = {}
        self._pushed: dict[str, Optional[int]] = {}  # uri -> version of its last push

    @property
    def pull(self) -> bool:
        caps = self.server.client_capabilities
        td = caps.text_document if caps else None
        return bool(td and td.diagnostic is not None)

    def schedule(self, uri: str, delay: float) -> None:
        old = self._tasks.pop(uri, None)
        if old is not None:
            old.cancel()
        self._done.setdefault(uri, asyncio.Event()).clear()
        self._tasks[uri] = asyncio.ensure_future(self._run(uri, delay))

    def forget(self, uri: str) -> None:
        """The document was closed: stop its check and clear its diagnostics."""
        task = self._tasks.pop(uri, None)
        if task is not None:
            task.cancel()
        old = self.checked.pop(uri, None)
        if old is not None:
            old.release()
        self.published.pop(uri, None)
        self._pushed.pop(uri, None)
        ev = self._done.pop(uri, None)
        if ev is not None:
            ev.set()
        if not self.pull:
            self.server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def recheck_all(self) -> None:
        for uri in list(self.server.docs):
            self.schedule(uri, 0)

    async def _run(self, uri: str, delay: float) -> None:
        try:
            if delay > 0:
                await asyncio.sleep(delay)
            doc = self.server.docs.get(uri)
            if doc is None:
                return
            version, text = doc.version, doc.text
            settings, _ = self.server.engine_settings(doc.path)
            previous = self.checked.get(uri)
            index = self.server.index
            external = index.external(doc.path) if index else {}
            foreign = index.seeded_for(doc.path, text) if index else ()
            loop = asyncio.get_running_loop()
            opened = self.server.opened
            first = previous is None and uri not in self.published and not isinstance(doc, NotebookDoc)
            if first and opened is not None:  # as an earlier session left it (lsp/opened.py)
                hit = opened.get(doc.path, text, settings, external, foreign)
                if hit is not None:
                    log.info("%s: the diagnostics an earlier session left (the full check follows)", doc.path)
                    self._publish(uri, doc, Checked(version, text, settings, findings=hit), version)
            GC_PAUSE.hold()
            try:
                result = await loop.run_in_executor(
                    self.server.check_pool(text), check, text, doc.path, version, settings, self.server.model,
                    external, previous, foreign)
                doc = self.server.docs.get(uri)
                if doc is None or doc.version != version or doc.text != text:
                    return  # stale: the check of the newer version is scheduled
                old = self.checked.get(uri)
                self.checked[uri] = result
                if old is not None and old is not result:
                    old.release(result)
                self._publish(uri, doc, result, version)
            finally:
                GC_PAUSE.release()
            if first and opened is not None and result.syntax_error is None:
                deps = self.server.model.loaded_files()
                loop.run_in_executor(self.server.scan_pool, opened.put, doc.path, text, settings, external,
                                     foreign, list(result.findings), deps)
            self.server.after_check(uri)
        except asyncio.CancelledError:
            raise
        except Exception:  # never let one document's bug kill the server
            log.exception("checking %s failed", uri)
        finally:
            if self._tasks.get(uri) is asyncio.current_task():
                del self._tasks[uri]
                ev = self._done.get(uri)
                if ev is not None:
                    ev.set()

    def _publish(self, uri: str, doc: Document, checked: Checked, version: Optional[int]) -> None:
        """Record (for pulls) and push the diagnostics of `checked`, unless the same ones were
        the last sent for this version (the full check after a start from lsp/opened.py)."""
        diags = [to_diagnostic(f, doc, checked, self.server) for f in checked.shown]
        diags = probe.decorate(self.server, doc.path, doc.lines, diags)
        rid = result_id(diags)
        last = self.published.get(uri)
        self.published[uri] = (diags, rid)
        if last is not None and last[1] == rid and self._pushed.get(uri) == version:
            return
        self._pushed[uri] = version
        if not self.pull:
            self.server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=diags, version=version))

    async def current(self, uri: str) -> Optional[Checked]:
        """The check of the document's current version (waiting for it when one is running)."""
        doc = self.server.docs.get(uri)
        if doc is None:
            return None
        for _ in range(3):
            got = self.checked.get(uri)
            if got is not None and got.version == doc.version and got.text == doc.text:
                return got
            if uri not in self._tasks:
                self.schedule(uri, 0)
            ev = self._done.get(uri)
            if ev is not None:
                try:
                    await asyncio.wait_for(ev.wait(), timeout=30)
                except asyncio.TimeoutError:
                    return None
            doc = self.server.docs.get(uri)
            if doc is None:
                return None
        got = self.checked.get(uri)
        return got if got is not None and got.version == doc.version else None

    async def report(self, params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
        uri = params.text_document.uri
        checked = await self.current(uri)
        if checked is None or uri not in self.published:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        diags, rid = self.published[uri]
        if params.previous_result_id == rid:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=rid)
        return types.RelatedFullDocumentDiagnosticReport(items=diags, result_id=rid)
