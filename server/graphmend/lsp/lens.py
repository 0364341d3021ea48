"""Code lens above each compiled entry of the file (`forward`, `@torch.compile` functions,
`torch.compile(f)` targets) that reaches graph breaks: "N graph breaks (M mendable) · Mend all"."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from graphmend.findings import Pos, Span
from graphmend.lsp.checker import Checked

if TYPE_CHECKING:
    from graphmend.lsp.server import GraphMendServer

FIX_ALL_COMMAND = "graphmend.fixAll"


def entry_label(qualname: str, why: str) -> str:
    """The label `reach` gives findings reached from this entry."""
    return qualname if why == "nn.Module.forward" else f"{qualname} ({why})"


def entry_counts(checked: Checked) -> list[tuple[object, int, int]]:
    """(FunctionInfo, breaks, mendable) per entry of the file with at least one break."""
    if checked.scope is None or checked.symbols is None or checked.syntax_error is not None:
        return []
    by_label: dict[str, list] = {}
    for f in checked.findings:
        if f.code != "GM001" and f.entry:
            by_label.setdefault(f.entry, []).append(f)
    out = []
    for fi in checked.symbols.all_functions:
        why = checked.scope.entries.get(fi.qualname)
        if why is None:
            continue
        found = by_label.get(entry_label(fi.qualname, why), [])
        if found:
            out.append((fi, len(found), sum(1 for f in found if f.fixable)))
    return out


async def code_lenses(server: "GraphMendServer", params: types.CodeLensParams) -> list[types.CodeLens]:
    uri = params.text_document.uri
    doc = server.docs.get(uri)
    checked = await server.diagnostics.current(uri)
    if doc is None or checked is None:
        return []
    from graphmend.lsp import probe
    out = probe.lenses(server, doc.path)
    for fi, n, m in entry_counts(checked):
        line = fi.node.lineno
        pos = Pos(line, checked.line_index.col(line, fi.node.col_offset))
        title = f"{n} graph break{'s' if n != 1 else ''} ({m} mendable)"
        args = [{"uri": uri, "version": checked.version}]
        if m:
            title += " · Mend all"
        out.append(types.CodeLens(
            range=doc.range(Span(pos, pos), server.codec),
            command=types.Command(title=title, command=FIX_ALL_COMMAND if m else "", arguments=args if m else None)))
    return out
