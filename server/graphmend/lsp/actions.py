"""Code actions: "GraphMend (CODE): <fix>" per diagnostic, "Ignore CODE on this line", and
"Mend all graph breaks in this file" (`source.fixAll.graphmend`, also used on save).

Actions are listed cheaply; their edits are computed when the client resolves one
(`codeAction/resolve`) or, for clients that cannot resolve, when listed. Every edit is built
from the analysis of exactly the text the client has (same version), and checked to parse.

The runtime (setting `runtime`, rewrite/runtime.py): with "vendor" (the default) a mend adds one
import line, and the workspace edit creates the vendored copy `_graphmend_runtime.py` when it is
missing (or replaces an older, unedited one): `documentChanges` with a `CreateFile` and the
copy's text. A client whose `workspace.workspaceEdit.resourceOperations` lacks "create" gets the
runtime inline instead, and the action's title says so. Fix on save (`willSaveWaitUntil`) may
only return edits of the document being saved: when the copy is missing it first asks the client
to create it (`workspace/applyEdit`, the same CreateFile); if the client cannot or refuses, the
saved document gets the runtime inline, so the saved code always runs.
"""

from __future__ import annotations

import ast
import asyncio
import difflib
import logging
from typing import TYPE_CHECKING, Optional

from lsprotocol import types

from graphmend.analysis.engine import SUPPRESS_RE, suppressions
from graphmend.findings import Applicability, Finding, Pos, Span, TextEdit
from graphmend.lsp.checker import LARGE_TEXT, Checked
from graphmend.lsp.document import Document
from graphmend.rewrite import runtime as rt
from graphmend.rewrite.apply import edits_for, fix_source
from graphmend.textlines import split_lines

if TYPE_CHECKING:
    from graphmend.lsp.server import GraphMendServer

log = logging.getLogger("graphmend.lsp")
FIX_ALL_KIND = "source.fixAll.graphmend"
FIX_ALL_TITLE = "GraphMend: Mend all graph breaks in this file"
DIFF_EXACT_LINES = 5_000
INLINE_NOTE = " (runtime inline: this editor cannot create _graphmend_runtime.py)"
TOO_LARGE = ("the file is too large to mend all at once in the editor: run `graphmend fix` on it "
             "(its quick fixes work)")


def too_large(text: str) -> bool:
    """Fix all is not run in the server on documents over LARGE_TEXT characters: `fix` of a
    50,000-line file took 20 s (measured when fixes were built with libcst, whose parser held
    the GIL for seconds at a time), so that every document's diagnostics and every request
    stalled (up to 50 s)."""
    return len(text) > LARGE_TEXT


def _wanted(kind: str, only: Optional[list]) -> bool:
    return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)


def fix_title(f: Finding) -> str:
    title = f"GraphMend ({f.code}): {f.fix_title or 'Mend graph break'}"
    if f.applicability is Applicability.UNSAFE:
        title += " (unsafe" + (f": {f.decline_reason}" if f.decline_reason else "") + ")"
    return title


def probe_suffix(server: "GraphMendServer") -> str:
    from graphmend.lsp.probe import verified_suffix
    return verified_suffix(server)


def _overlaps_lines(f: Finding, start: Pos, end: Pos) -> bool:
    return f.span.start.line <= end.line and f.span.end.line >= start.line


def _matching_diagnostic(f: Finding, context: types.CodeActionContext) -> Optional[types.Diagnostic]:
    for d in context.diagnostics:
        data = d.data if isinstance(d.data, dict) else {}
        if d.code == f.code and data.get("line") == f.span.start.line and data.get("col") == f.span.start.col:
            return d
    return None


async def code_actions(server: "GraphMendServer", params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    doc = server.docs.get(uri)
    checked = await server.diagnostics.current(uri)
    if doc is None or checked is None:
        return []
    only = list(params.context.only) if params.context.only else None
    start = doc.engine_pos(params.range.start, server.codec)
    end = doc.engine_pos(params.range.end, server.codec)
    lazy = server.can_resolve_actions
    out: list[types.CodeAction] = []
    if _wanted(types.CodeActionKind.QuickFix, only):
        for f in checked.findings:
            if not _overlaps_lines(f, start, end):
                continue
            diag = _matching_diagnostic(f, params.context)
            diags = [diag] if diag else None
            key = {"uri": uri, "version": checked.version, "code": f.code,
                   "line": f.span.start.line, "col": f.span.start.col}
            if f.fixable and f.site is not None:
                action = types.CodeAction(
                    title=fix_title(f) + probe_suffix(server) + inline_note(server, checked, doc),
                    kind=types.CodeActionKind.QuickFix, diagnostics=diags,
                    is_preferred=f.applicability is Applicability.SAFE, data={**key, "action": "fix"})
                if not lazy:
                    action.edit = fix_edit(server, doc, checked, f)
                    if action.edit is None:
                        continue
                out.append(action)
            ignore = types.CodeAction(
                title=f"GraphMend: Ignore {f.code} on this line", kind=types.CodeActionKind.QuickFix,
                diagnostics=diags, data={**key, "action": "ignore"})
            if not lazy:
                ignore.edit = ignore_edit(server, doc, checked, f)
                if ignore.edit is None:
                    continue
            out.append(ignore)
    if _wanted(FIX_ALL_KIND, only) and checked.syntax_error is None and not too_large(checked.text) and any(
            _in_fix_all(f, checked) for f in checked.findings):
        action = types.CodeAction(title=FIX_ALL_TITLE + inline_note(server, checked, doc), kind=FIX_ALL_KIND,
                                  data={"uri": uri, "version": checked.version, "action": "fixAll"})
        if not lazy:
            action.edit = await fix_all_edit(server, uri)
        out.append(action)
    return out


def _in_fix_all(f: Finding, checked: Checked) -> bool:
    return f.applicability is Applicability.SAFE or (
        f.applicability is Applicability.UNSAFE and checked.settings.unsafe_fixes)


async def resolve(server: "GraphMendServer", action: types.CodeAction) -> types.CodeAction:
    data = action.data if isinstance(action.data, dict) else {}
    uri = data.get("uri")
    doc = server.docs.get(uri) if isinstance(uri, str) else None  # data comes back from the client
    if doc is None:
        return action
    checked = await server.diagnostics.current(uri)
    if checked is None or checked.version != data.get("version"):
        return action  # the document changed since the action was listed: no edit
    kind = data.get("action")
    if kind == "fixAll":
        action.edit = await fix_all_edit(server, uri)
        return action
    f = _find(checked, data)
    if f is None:
        return action
    action.edit = fix_edit(server, doc, checked, f) if kind == "fix" else ignore_edit(server, doc, checked, f)
    return action


def _find(checked: Checked, data: dict) -> Optional[Finding]:
    for f in checked.findings:
        if f.code == data.get("code") and f.span.start.line == data.get("line") \
                and f.span.start.col == data.get("col"):
            return f
    return None


# --------------------------------------------------------------------------- edits


def can_create_files(server: "GraphMendServer") -> bool:
    """The client applies `documentChanges` with CreateFile operations."""
    ops = server._client("workspace.workspace_edit.resource_operations", None) or []
    return server.supports_document_changes and any(
        (getattr(o, "value", o)) == "create" for o in ops)


def runtime_mode(server: "GraphMendServer", checked: Checked, doc: Optional[Document] = None) -> str:
    """The runtime mode the editor's edits use: the setting's, but inline for "vendor" where the
    client cannot create the copy, and in a notebook (its runtime goes in the first code cell)."""
    mode = getattr(checked.settings, "runtime", "vendor")
    if mode == "vendor" and (not can_create_files(server) or is_notebook(doc)):
        return "inline"
    return mode


def is_notebook(doc: Optional[Document]) -> bool:
    return doc is not None and str(doc.path).endswith(".ipynb")


def inline_note(server: "GraphMendServer", checked: Checked, doc: Optional[Document] = None) -> str:
    return INLINE_NOTE if getattr(checked.settings, "runtime", "vendor") == "vendor" \
        and not is_notebook(doc) and runtime_mode(server, checked, doc) == "inline" else ""


def vendor_operations(doc: Document, new_text: str) -> list:
    """The CreateFile and its text for the vendored runtime the mended `new_text` imports, when
    it is missing or an older unedited copy; [] when none is needed (or an edited copy is left
    alone)."""
    if not rt.uses_runtime(new_text) or rt.IMPORT_LINE in new_text or "(inline;" in new_text:
        return []
    if not doc.uri.startswith("file:"):
        return []
    target = rt.vendor_path(doc.path)
    overwrite = False
    if target.exists():
        try:
            status = rt.vendored_status(target.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            return []
        if status != "stale":
            return []
        overwrite = True
    uri = target.as_uri()
    return [types.CreateFile(uri=uri, options=types.CreateFileOptions(overwrite=overwrite,
                                                                        ignore_if_exists=not overwrite)),
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
                edits=[types.TextEdit(range=types.Range(start=types.Position(line=0, character=0),
                                                        end=types.Position(line=0, character=0)),
                                      new_text=rt.vendored_text())])]


def workspace_edit(server: "GraphMendServer", doc: Document, version: Optional[int],
                   edits: list[TextEdit], create: Optional[list] = None) -> types.WorkspaceEdit:
    """The document's edits, after the vendored runtime's creation (`create`) when one is needed."""
    lsp_edits = [types.TextEdit(range=doc.range(e.span, server.codec), new_text=e.text) for e in edits]
    if server.supports_document_changes:
        return types.WorkspaceEdit(document_changes=[*(create or []), types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=doc.uri, version=version),
            edits=lsp_edits)])
    return types.WorkspaceEdit(changes={doc.uri: lsp_edits})


def finding_edits(checked: Checked, f: Finding, mode: str = "vendor", path: str = "<string>"
                  ) -> Optional[list[TextEdit]]:
    if checked.symbols is None or checked.syntax_error is not None:
        return None
    try:
        return edits_for(f, checked.text, checked.symbols, checked.line_index, mode, path,
                         checked.settings.line_length)
    except Exception:  # a bug in a rule must not kill the request
        log.exception("building the fix of %s at line %d failed", f.code, f.span.start.line)
        return None


def fix_edit(server: "GraphMendServer", doc: Document, checked: Checked, f: Finding) -> Optional[types.WorkspaceEdit]:
    mode = runtime_mode(server, checked, doc)
    edits = finding_edits(checked, f, mode, doc.path)
    if not edits:
        return None
    create = vendor_operations(doc, "\n".join(e.text for e in edits)) if mode == "vendor" else []
    return workspace_edit(server, doc, checked.version, edits, create)


def ignore_edits(checked: Checked, f: Finding) -> Optional[list[TextEdit]]:
    """`# graphmend: ignore[CODE]` on the finding's first line (extending a comment already
    there); None where no comment can go (the line ends inside a string or a backslash)."""
    n = f.span.start.line
    lines = split_lines(checked.text)
    if n > len(lines):
        return None
    line = lines[n - 1]
    sup = suppressions(line + "\n").get(1, False)
    if sup is None or (sup and f.code in sup):
        return None  # already ignored
    m = SUPPRESS_RE.search(line)
    if sup and m and m.group("codes") is not None:
        inside = m.start("codes")
        codes = [c.strip() for c in m.group("codes").split(",") if c.strip()] + [f.code]
        edit = TextEdit(Span(Pos(n, inside), Pos(n, m.end("codes"))), ", ".join(codes))
    else:
        if line.rstrip().endswith("\\") or _ends_in_string(checked, n):
            return None
        body = line.rstrip()
        edit = TextEdit(Span(Pos(n, len(body)), Pos(n, len(line))), f"  # graphmend: ignore[{f.code}]")
    new_line = line[:edit.span.start.col] + edit.text + line[edit.span.end.col:]
    got = suppressions(new_line + "\n").get(1, False)
    if not (got is None or (got and f.code in got)):
        return None  # the comment would not be recognised (e.g. a quote in an earlier comment)
    return [edit]


def _ends_in_string(checked: Checked, n: int) -> bool:
    tree = checked.symbols.tree if checked.symbols is not None else None
    if tree is None:
        return True
    for node in ast.walk(tree):
        if isinstance(node, (ast.Constant, ast.JoinedStr)) and node.lineno <= n < (node.end_lineno or 0):
            return True
    return False


def ignore_edit(server: "GraphMendServer", doc: Document, checked: Checked, f: Finding) -> Optional[types.WorkspaceEdit]:
    edits = ignore_edits(checked, f)
    return workspace_edit(server, doc, checked.version, edits) if edits else None


def diff_edits(old: str, new: str) -> list[TextEdit]:
    """Minimal whole-line edits that turn `old` into `new`."""
    a, b = split_lines(old, keepends=True), split_lines(new, keepends=True)

    def pos(i: int) -> Pos:
        if i < len(a):
            return Pos(i + 1, 0)
        if a and not a[-1].endswith(("\n", "\r")):
            return Pos(len(a), len(a[-1]))
        return Pos(len(a) + 1, 0)

    out = []
    # Past a few thousand lines, lines that recur everywhere (blank lines, closing brackets) made
    # the exact matcher take 40 s on a 50,000-line file; autojunk sets them aside (2 s). The edits
    # still turn `old` into `new`, at worst replacing a few more lines.
    junk = len(a) > DIFF_EXACT_LINES
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=junk).get_opcodes():
        if tag != "equal":
            out.append(TextEdit(Span(pos(i1), pos(i2)), "".join(b[j1:j2])))
    return out


def fix_all_text_edits(server: "GraphMendServer", doc_path: str, checked: Checked,
                       mode: str = "vendor") -> list[TextEdit]:
    """The edits of `fix` for this text: safe fixes (unsafe too when the settings allow them),
    repeated until nothing changes; nothing when the text does not parse. Runs in a worker."""
    if checked.syntax_error is not None:
        return []
    external = server.index.external(doc_path) if server.index is not None else {}
    result = fix_source(checked.text, doc_path, checked.settings, unsafe=checked.settings.unsafe_fixes,
                        workspace=server.model, external=external, runtime=mode)
    if result.text == checked.text:
        return []
    return diff_edits(checked.text, result.text)


async def fix_all_edits(server: "GraphMendServer", uri: str, mode: Optional[str] = None
                        ) -> tuple[Optional[Document], Optional[Checked], list[TextEdit]]:
    doc = server.docs.get(uri)
    checked = await server.diagnostics.current(uri)
    if doc is None or checked is None:
        return doc, checked, []
    if too_large(checked.text):
        log.info("%s: %s", doc.path, TOO_LARGE)
        return doc, checked, []
    mode = mode or runtime_mode(server, checked, doc)
    if not isinstance(checked.fix_all, dict):
        checked.fix_all = {}
    if mode not in checked.fix_all:  # once per version and mode (seconds in a huge file), shared
        loop = asyncio.get_running_loop()
        checked.fix_all[mode] = loop.run_in_executor(server.fix_pool, fix_all_text_edits, server, doc.path,
                                                     checked, mode)
    edits = await asyncio.shield(checked.fix_all[mode])  # a cancelled request leaves it to the others
    return doc, checked, edits


async def fix_all_edit(server: "GraphMendServer", uri: str) -> Optional[types.WorkspaceEdit]:
    doc, checked, edits = await fix_all_edits(server, uri)
    if not edits or doc is None or doc.version != checked.version:
        return None
    create = vendor_operations(doc, "\n".join(e.text for e in edits)) \
        if runtime_mode(server, checked, doc) == "vendor" else []
    return workspace_edit(server, doc, checked.version, edits, create)


async def will_save_edits(server: "GraphMendServer", uri: str) -> list[types.TextEdit]:
    """Fix on save: the safe mends (unsafe ones only when allowed); none when the file does not
    parse, so code being typed is never moved or removed. Only edits of this document can be
    returned: a missing vendored runtime is created first through `workspace/applyEdit`; when
    that is refused, the saved text carries the runtime inline."""
    if not server.settings.fix_on_save or not server.settings.enable:
        return []
    doc, checked, edits = await fix_all_edits(server, uri)
    if not edits or doc is None or checked is None or doc.version != checked.version:
        return []
    if runtime_mode(server, checked, doc) == "vendor":
        create = vendor_operations(doc, "\n".join(e.text for e in edits))
        if create and not await _apply(server, types.WorkspaceEdit(document_changes=create),
                                       "GraphMend: create the vendored runtime"):
            doc, checked, edits = await fix_all_edits(server, uri, "inline")
            if not edits or doc is None or checked is None or doc.version != checked.version:
                return []
    return [types.TextEdit(range=doc.range(e.span, server.codec), new_text=e.text) for e in edits]


async def _apply(server: "GraphMendServer", edit: types.WorkspaceEdit, label: str) -> bool:
    try:
        res = await asyncio.wait_for(server.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=edit, label=label)), timeout=2.0)
    except Exception:
        log.exception("creating the vendored runtime through workspace/applyEdit failed")
        return False
    return bool(res and res.applied)
