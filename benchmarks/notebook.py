"""Notebook vs file: edit -> diagnostics latency of the same code as a .py file and as a notebook.

    python benchmarks/notebook.py [--file F.py] [--edits 20] [--debounce 50] [--json OUT]

The file (default: transformers' t5 modeling file) is cut into notebook cells at its top-level
statements (the leading imports one cell, then each class, function or statement run its own),
and sent both ways to a fresh `graphmend serve` each (as an editor does: `didOpen`/`didChange`
of the file; `notebookDocument/didOpen`/`didChange` of the cells). Each edit inserts, or then
removes, a `print(1)` line at the top of the first `forward` method, so that the diagnostics of
every edit differ from those before; the time from sending the change to the first publish with
the new number of findings (for the file, of that URI; for the notebook, of that cell) is the
latency; minus the configured debounce it is the figure "after the debounce". Prints p50/p95/max
of both and their ratio.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types as T

sys.path.insert(0, str(Path(__file__).parent))
from lsp import Session, default_files, stats  # noqa: E402


def cells_of(text: str) -> list[str]:
    """The file cut at top-level statements: the leading imports, then each statement."""
    lines = text.split("\n")
    tree = ast.parse(text)
    starts: list[int] = []
    imports_done = False
    for stmt in tree.body:
        first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])
        if isinstance(stmt, (ast.Import, ast.ImportFrom)) or (not starts and isinstance(stmt, ast.Expr)):
            if not starts:
                starts.append(1)
            if imports_done:
                starts.append(first)
            continue
        imports_done = True
        starts.append(first if starts else 1)
    starts = sorted(set(starts)) or [1]
    bounds = starts[1:] + [len(lines) + 1]
    return ["\n".join(lines[a - 1:b - 1]).strip("\n") for a, b in zip(starts, bounds)]


def edit_site(source: str) -> tuple[int, str]:
    """(0-based line, indentation) of the first statement of the first `forward` in `source`."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == "forward":
            body = node.body[1] if isinstance(node.body[0], ast.Expr) and len(node.body) > 1 else node.body[0]
            return body.lineno - 1, " " * body.col_offset
    raise SystemExit("no forward method to edit")


class Recorder(Session):
    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.by_uri: dict[str, list[tuple[float, int]]] = {}

    def _published(self, p: T.PublishDiagnosticsParams) -> None:
        self.by_uri.setdefault(p.uri, []).append((time.perf_counter(), len(p.diagnostics)))
        super()._published(p)

    async def after(self, uri: str, t0: float, count: int, what: str) -> float:
        async def seen():
            while True:
                for t, n in self.by_uri.get(uri, []):
                    if t >= t0 and n == count:
                        return t
                await asyncio.sleep(0.002)
        return (await self.wait(seen(), what) - t0) * 1000


def change(uri: str, version: int, line: int, insert: str | None) -> T.TextDocumentContentChangePartial:
    if insert is not None:
        rng = T.Range(start=T.Position(line=line, character=0), end=T.Position(line=line, character=0))
        return T.TextDocumentContentChangePartial(range=rng, text=insert)
    rng = T.Range(start=T.Position(line=line, character=0), end=T.Position(line=line + 1, character=0))
    return T.TextDocumentContentChangePartial(range=rng, text="")


async def bench_file(path: Path, edits: int, debounce: int, timeout: float) -> list[float]:
    s = Recorder([sys.executable, "-m", "graphmend", "serve"], debounce, timeout)
    await s.start(None)
    try:
        text, uri = path.read_text(), path.as_uri()
        s.client.text_document_did_open(T.DidOpenTextDocumentParams(
            text_document=T.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
        await s.wait(s.expect(uri, 1), "the first diagnostics")
        base = s.by_uri[uri][-1][1]
        line, indent = edit_site(text)
        out = []
        for i in range(edits):
            insert = f"{indent}print(1)\n" if i % 2 == 0 else None
            t0 = time.perf_counter()
            s.client.text_document_did_change(T.DidChangeTextDocumentParams(
                text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=i + 2),
                content_changes=[change(uri, i + 2, line, insert)]))
            out.append(await s.after(uri, t0, base + (1 if insert else 0), f"file edit {i}"))
        return out
    finally:
        await s.stop()


async def bench_notebook(path: Path, edits: int, debounce: int, timeout: float) -> list[float]:
    s = Recorder([sys.executable, "-m", "graphmend", "serve"], debounce, timeout)
    await s.start(None)
    try:
        sources = cells_of(path.read_text())
        nb_uri = path.with_suffix(".ipynb").as_uri()
        uris = [f"vscode-notebook-cell:{path.with_suffix('.ipynb')}#C{i}" for i in range(len(sources))]
        s.client.notebook_document_did_open(T.DidOpenNotebookDocumentParams(
            notebook_document=T.NotebookDocument(uri=nb_uri, notebook_type="jupyter-notebook", version=1, cells=[
                T.NotebookCell(kind=T.NotebookCellKind.Code, document=u) for u in uris]),
            cell_text_documents=[T.TextDocumentItem(uri=u, language_id="python", version=1, text=src)
                                 for u, src in zip(uris, sources)]))
        k = next(i for i, src in enumerate(sources) if "def forward" in src)
        cell = uris[k]
        async def first():
            while not s.by_uri.get(cell):
                await asyncio.sleep(0.005)
        await s.wait(first(), "the first notebook diagnostics")
        base = s.by_uri[cell][-1][1]
        line, indent = edit_site(sources[k])
        out = []
        for i in range(edits):
            insert = f"{indent}print(1)\n" if i % 2 == 0 else None
            t0 = time.perf_counter()
            s.client.notebook_document_did_change(T.DidChangeNotebookDocumentParams(
                notebook_document=T.VersionedNotebookDocumentIdentifier(uri=nb_uri, version=i + 2),
                change=T.NotebookDocumentChangeEvent(cells=T.NotebookDocumentCellChanges(text_content=[
                    T.NotebookDocumentCellContentChanges(
                        document=T.VersionedTextDocumentIdentifier(uri=cell, version=i + 2),
                        changes=[change(cell, i + 2, line, insert)])]))))
            out.append(await s.after(cell, t0, base + (1 if insert else 0), f"notebook edit {i}"))
        return out
    finally:
        await s.stop()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--file", help="a Python file with an nn.Module forward (default: transformers' t5)")
    ap.add_argument("--edits", type=int, default=20)
    ap.add_argument("--debounce", type=int, default=50, help="the server's debounceMs")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args(argv)
    src = Path(args.file or default_files()[0])
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / src.name
        path.write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
        file_ms = asyncio.run(bench_file(path, args.edits, args.debounce, args.timeout))
        nb_ms = asyncio.run(bench_notebook(path, args.edits, args.debounce, args.timeout))
    res = {"file": str(src), "cells": len(cells_of(src.read_text())), "debounce_ms": args.debounce,
           "py": stats([x - args.debounce for x in file_ms]), "notebook": stats([x - args.debounce for x in nb_ms])}
    print(f"{src.name}: {res['cells']} cells, {args.edits} edits, debounce {args.debounce} ms; "
          "edit -> diagnostics after the debounce (ms)")
    for k in ("py", "notebook"):
        st = res[k]
        print(f"  {k:9s} p50 {st['p50']:8.1f}  p95 {st['p95']:8.1f}  max {st['max']:8.1f}")
    ratio = res["notebook"]["p95"] / res["py"]["p95"] if res["py"]["p95"] else float("nan")
    res["p95_ratio"] = ratio
    print(f"  notebook p95 / .py p95 = {ratio:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
