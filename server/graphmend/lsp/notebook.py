"""Notebooks over LSP 3.17 notebook document sync (`notebookDocument/didOpen|didChange|didClose`).

pygls keeps the notebook and its cells' text (`ls.workspace`). The server checks a notebook as
one module: a `NotebookDoc` under the notebook's URI in `ls.docs`, whose text is
`graphmend.notebook.Cells` of the code cells, rebuilt at every change, scheduled and debounced
like a file. Its diagnostics are published per cell (the notebook URI itself gets none); code
actions, fix-all and hovers asked for a cell are asked of the module at the mapped position,
and their edits come back as edits of the cells they change (the runtime helper block in the
first code cell, as `graphmend fix` writes a .ipynb).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Optional

from lsprotocol import types
from pygls.uris import to_fs_path

from graphmend.lsp.document import Document
from graphmend.notebook import Cells, NotebookError

if TYPE_CHECKING:
    from graphmend.lsp.server import GraphMendServer

log = logging.getLogger("graphmend.lsp")

SYNC_OPTIONS = types.NotebookDocumentSyncOptions(notebook_selector=[
    types.NotebookDocumentFilterWithCells(notebook="*", cells=[types.NotebookCellLanguage(language="python")])])


class NotebookDoc(Document):
    """A notebook as the engine sees it: its code cells as one module."""

    def __init__(self, uri: str, path: str) -> None:
        super().__init__(uri, path, "", None)
        self.cells = Cells.build([])
        self.cell_uris: list[str] = []

    def rebuild(self, ls: "GraphMendServer") -> None:
        nb = ls.workspace.get_notebook_document(notebook_uri=self.uri)
        if nb is None:
            return
        code = [(i, c) for i, c in enumerate(nb.cells) if c.kind == types.NotebookCellKind.Code]
        docs = [ls.workspace.get_text_document(c.document) for _, c in code]
        keep = [(i, c, d) for (i, c), d in zip(code, docs) if (d.language_id or "python") == "python"]
        self.cells = Cells.build([d.source for _, _, d in keep], [i + 1 for i, _, _ in keep])
        self.cell_uris = [c.document for _, c, _ in keep]
        self.set_text(self.cells.text, nb.version)

    def cell_source(self, k: int) -> str:
        return "\n".join(_lines(self.text)[self.cells.starts[k] - 1:self.cells.starts[k] - 1 + self.cells.lengths[k]])


def _lines(text: str) -> list[str]:
    from graphmend.textlines import split_lines
    return split_lines(text)


def notebook_of(ls: "GraphMendServer", uri: str) -> Optional[tuple[NotebookDoc, int]]:
    """(the notebook, the code-cell index) of a cell URI; None for any other document."""
    nb_uri = ls.cell_owner.get(uri)
    doc = ls.docs.get(nb_uri) if nb_uri else None
    if not isinstance(doc, NotebookDoc) or uri not in doc.cell_uris:
        return None
    return doc, doc.cell_uris.index(uri)


# ---------------------------------------------------------------------- sync


def _refresh(ls: "GraphMendServer", doc: NotebookDoc, delay: float) -> None:
    old = set(doc.cell_uris)
    doc.rebuild(ls)
    for u in old - set(doc.cell_uris):
        ls.cell_owner.pop(u, None)
        ls.publish_cells(u, [])
    for u in doc.cell_uris:
        ls.cell_owner[u] = doc.uri
    if ls.settings.enable:
        ls.diagnostics.schedule(doc.uri, delay)


def did_open(ls: "GraphMendServer", params: types.DidOpenNotebookDocumentParams) -> None:
    uri = params.notebook_document.uri
    path = to_fs_path(uri) if uri.startswith("file:") else uri
    doc = NotebookDoc(uri, path or uri)
    ls.docs[uri] = doc
    _refresh(ls, doc, 0)


def did_change(ls: "GraphMendServer", params: types.DidChangeNotebookDocumentParams) -> None:
    doc = ls.docs.get(params.notebook_document.uri)
    if not isinstance(doc, NotebookDoc):
        log.warning("rejected a change to %s: the notebook is not open", params.notebook_document.uri)
        return
    _refresh(ls, doc, ls.settings.debounce_ms / 1000)


def did_save(ls: "GraphMendServer", params: types.DidSaveNotebookDocumentParams) -> None:
    doc = ls.docs.get(params.notebook_document.uri)
    if isinstance(doc, NotebookDoc) and ls.settings.enable:
        ls.diagnostics.schedule(doc.uri, 0)


def did_close(ls: "GraphMendServer", params: types.DidCloseNotebookDocumentParams) -> None:
    doc = ls.docs.pop(params.notebook_document.uri, None)
    if isinstance(doc, NotebookDoc):
        for u in doc.cell_uris:
            ls.cell_owner.pop(u, None)
            ls.publish_cells(u, [])
    ls.diagnostics.forget(params.notebook_document.uri)


# ---------------------------------------------------------------------- positions


def to_module(doc: NotebookDoc, k: int, pos: types.Position) -> types.Position:
    return types.Position(line=doc.cells.to_module(k, pos.line + 1) - 1, character=pos.character)


def to_cell(doc: NotebookDoc, pos: types.Position) -> Optional[tuple[int, types.Position]]:
    where = doc.cells.to_cell(pos.line + 1)
    if where is None:
        return None
    k, line = where
    return k, types.Position(line=line - 1, character=pos.character)


def cell_range(doc: NotebookDoc, rng: types.Range) -> Optional[tuple[int, types.Range]]:
    """A module range -> (code-cell index, the range in that cell); a range running past its
    cell ends at the cell's end."""
    a = to_cell(doc, rng.start)
    if a is None:
        return None
    b = to_cell(doc, rng.end)
    if b is None or b[0] != a[0]:
        n = doc.cells.lengths[a[0]]
        b = (a[0], types.Position(line=max(n - 1, 0), character=len(_lines(doc.cell_source(a[0]))[-1]) if n else 0))
    return a[0], types.Range(start=a[1], end=b[1])


def split_diagnostics(doc: NotebookDoc, diags: list[types.Diagnostic]) -> dict[str, list[types.Diagnostic]]:
    """The notebook module's diagnostics, per cell URI (every code cell, empty lists too)."""
    out: dict[str, list[types.Diagnostic]] = {u: [] for u in doc.cell_uris}
    for d in diags:
        where = cell_range(doc, d.range)
        if where is None:
            continue
        k, rng = where
        related = None
        for r in d.related_information or []:
            if r.location.uri == doc.uri:
                loc = cell_range(doc, r.location.range)
                if loc is None:
                    continue
                r = types.DiagnosticRelatedInformation(
                    location=types.Location(uri=doc.cell_uris[loc[0]], range=loc[1]), message=r.message)
            related = [*(related or []), r]
        out[doc.cell_uris[k]].append(types.Diagnostic(
            range=rng, message=d.message, severity=d.severity, code=d.code, code_description=d.code_description,
            source=d.source, related_information=related, data=d.data, tags=d.tags))
    return out


# ---------------------------------------------------------------------- edits


def cell_edit(ls: "GraphMendServer", doc: NotebookDoc, edit: Optional[types.WorkspaceEdit]) -> Optional[types.WorkspaceEdit]:
    """A workspace edit of the notebook module -> the same change as edits of the cells (None
    when it cannot be mapped: a mend that would garble a cell is not offered)."""
    if edit is None:
        return None
    edits: list[types.TextEdit] = []
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit) and change.text_document.uri == doc.uri:
            edits.extend(e for e in change.edits if isinstance(e, types.TextEdit))
    edits.extend((edit.changes or {}).get(doc.uri, []))
    if not edits:
        return edit
    text = doc.text
    spans = sorted(((doc.offset(e.range.start, ls.codec), doc.offset(e.range.end, ls.codec), e.new_text)
                    for e in edits), reverse=True)
    for a, b, new in spans:
        text = text[:a] + new + text[b:]
    try:
        new_sources = doc.cells.split(text)
        old_sources = doc.cells.split(doc.text)
    except NotebookError as e:
        log.info("%s: %s", doc.path, e)
        return None
    from graphmend.lsp.actions import diff_edits
    per_cell: list[tuple[str, list[types.TextEdit]]] = []
    for k, (old, new) in enumerate(zip(old_sources, new_sources)):
        if old == new:
            continue
        cell_doc = Document(doc.cell_uris[k], doc.path, old)
        per_cell.append((doc.cell_uris[k], [types.TextEdit(range=cell_doc.range(e.span, ls.codec), new_text=e.text)
                                            for e in diff_edits(old, new)]))
    if not per_cell:
        return None
    if ls.supports_document_changes:
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(
                uri=u, version=ls.workspace.get_text_document(u).version), edits=es) for u, es in per_cell])
    return types.WorkspaceEdit(changes=dict(per_cell))


# ---------------------------------------------------------------------- requests


async def code_actions(ls: "GraphMendServer", params: types.CodeActionParams) -> list[types.CodeAction]:
    from graphmend.lsp import actions
    doc, k = notebook_of(ls, params.text_document.uri)
    vparams = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=doc.uri),
        range=types.Range(start=to_module(doc, k, params.range.start), end=to_module(doc, k, params.range.end)),
        context=params.context)
    out = []
    for action in await actions.code_actions(ls, vparams):
        if action.edit is not None:
            action.edit = cell_edit(ls, doc, action.edit)
            if action.edit is None:
                continue
        out.append(action)
    return out


def resolved(ls: "GraphMendServer", action: types.CodeAction) -> types.CodeAction:
    """An action resolved on a notebook module: its edit as cell edits."""
    data = action.data if isinstance(action.data, dict) else {}
    doc = ls.docs.get(data.get("uri")) if isinstance(data.get("uri"), str) else None
    if isinstance(doc, NotebookDoc) and action.edit is not None:
        action.edit = cell_edit(ls, doc, action.edit)
    return action


async def hover(ls: "GraphMendServer", params: types.HoverParams) -> Optional[types.Hover]:
    from graphmend.lsp import hover as hovers
    doc, k = notebook_of(ls, params.text_document.uri)
    got = await hovers.hover(ls, types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc.uri), position=to_module(doc, k, params.position)))
    if got is not None and got.range is not None:
        where = cell_range(doc, got.range)
        got.range = where[1] if where is not None and where[0] == k else None
    return got


async def fix_all(ls: "GraphMendServer", doc: NotebookDoc) -> Optional[types.WorkspaceEdit]:
    from graphmend.lsp import actions
    return cell_edit(ls, doc, await actions.fix_all_edit(ls, doc.uri))

