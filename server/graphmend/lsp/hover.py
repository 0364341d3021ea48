"""Hover on a break site: why Dynamo breaks there (its registry entry), which rewrite mends it
and how safely, a preview of the mended lines, or why the mend declines."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from lsprotocol import types

from graphmend.dynamo_registry import explain
from graphmend.findings import CATALOGUE, Applicability, Finding, Pos
from graphmend.lsp.actions import finding_edits
from graphmend.lsp.checker import Checked
from graphmend.rewrite.apply import apply_edits
from graphmend.rewrite import runtime
from graphmend.rules import DOCS_URL
from graphmend.textlines import split_lines

if TYPE_CHECKING:
    from graphmend.lsp.server import GraphMendServer

REWRITE_NAMES = {"defer": "[Defer]", "where": "[Where]", "trap": "[Trap]", "align": "[Align]"}
PREVIEW_LINES = 25


def finding_at(checked: Checked, pos: Pos) -> Optional[Finding]:
    def inside(f: Finding) -> bool:
        s, e = f.span.start, f.span.end
        return (s.line, s.col) <= (pos.line, pos.col) <= (e.line, e.col)
    shown = checked.shown
    hit = [f for f in shown if inside(f)] or [f for f in shown if f.span.start.line == pos.line]
    return min(hit, key=lambda f: (f.span.end.line - f.span.start.line, f.span.end.col - f.span.start.col),
               default=None)


def preview(checked: Checked, f: Finding) -> Optional[str]:
    """The mended lines of the statement (the runtime's import left out)."""
    edits = finding_edits(checked, f, "import")
    if not edits:
        return None
    own = [e for e in edits if not runtime.binds_runtime(e.text)]
    if not own:
        return None
    first = min(e.span.start.line for e in own)
    last = max(e.span.end.line for e in own)
    old = split_lines(checked.text)
    new_text = apply_edits(checked.text, own)
    new = split_lines(new_text)
    grown = len(new) - len(old)
    region = new[first - 1: last + grown]
    if len(region) > PREVIEW_LINES:
        region = region[:PREVIEW_LINES] + ["# ..."]
    indent = min((len(s) - len(s.lstrip()) for s in region if s.strip()), default=0)
    return "\n".join(s[indent:] for s in region)


def markdown(checked: Checked, f: Finding) -> str:
    rule = CATALOGUE.get(f.code)
    name = rule.name if rule else ""
    out = [f"**GraphMend {f.code}** `{name}` ([docs]({DOCS_URL.format(code=f.code)}))", "", f.message]
    if f.note:
        out += ["", f"_{f.note}_"]
    if f.code == "GM001":
        return "\n".join(out + ["", "Nothing else in this file is checked until it parses."])
    e = explain(f.gb_id)
    if e is not None:
        out += ["", f"**Why Dynamo breaks here** ([{e['id']}]({e['link']})): {e['type']}."]
        if e.get("explanation"):
            out += ["", f"> {e['explanation']}"]
        if e.get("hints"):
            out += ["", "Dynamo's hint: " + " ".join(e["hints"])]
    if f.entry:
        out += ["", f"In compiled code: reached from `{f.entry}`."]
    rewrite = REWRITE_NAMES.get(f.rewrite or "", "")
    if f.applicability is Applicability.NONE:
        why = f.decline_reason or "no rewrite keeps the program's meaning here"
        label = f"{rewrite} mend declines" if rewrite else "No mend"
        out += ["", f"**{label}:** {why}"]
        return "\n".join(out)
    if f.site is None:  # carried over from the last version that parsed
        out += ["", "**Mend:** available once the file parses again."]
        return "\n".join(out)
    safety = "safe" if f.applicability is Applicability.SAFE else "**unsafe**"
    out += ["", f"**Mend {rewrite}** ({safety}): {f.fix_title or ''}"]
    if f.applicability is Applicability.UNSAFE and f.decline_reason:
        out += ["", f"Why unsafe: {f.decline_reason}"]
    shown = preview(checked, f)
    if shown:
        out += ["", "```python", shown, "```"]
    else:
        out += ["", "The mend cannot be built for this text (the result would not parse)."]
    return "\n".join(out)


async def hover(server: "GraphMendServer", params: types.HoverParams) -> Optional[types.Hover]:
    uri = params.text_document.uri
    doc = server.docs.get(uri)
    checked = await server.diagnostics.current(uri)
    if doc is None or checked is None:
        return None
    f = finding_at(checked, doc.engine_pos(params.position, server.codec))
    if f is None:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown(checked, f)),
                       range=doc.range(f.span, server.codec))
