"""Notebooks over LSP 3.17 notebook document sync (pytest-lsp over stdio): a client with VS
Code's capabilities plus notebook sync and pull diagnostics opens tests/notebook_fixtures/
model.ipynb cell by cell, and gets diagnostics per cell, quick fixes and fix-all as cell edits
(equal to what `graphmend fix` writes into the .ipynb), hovers, and clean-up on close."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from graphmend import cli
from graphmend.notebook import Cells
from lsp_client import SERVER, apply_text_edits, capabilities, edits_of, wait_for
from test_lsp import install_handlers

FIXTURE = Path(__file__).parent / "notebook_fixtures" / "model.ipynb"


def notebook_capabilities() -> types.ClientCapabilities:
    caps = copy.deepcopy(capabilities("vscode-pull"))
    caps.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities(
            dynamic_registration=True, execution_summary_support=True))
    return caps


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    shutil.copyfile(FIXTURE, root / "model.ipynb")
    install_handlers(lsp_client)
    lsp_client.root = root
    result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=notebook_capabilities(), root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="project")],
        initialization_options={"debounceMs": 20}))
    lsp_client.server_capabilities = result.capabilities
    yield
    await lsp_client.shutdown_session()


def open_notebook(client: LanguageClient):
    """didOpen of the fixture, every cell (markdown too) as VS Code sends them."""
    path = client.root / "model.ipynb"
    nb_uri = path.as_uri()
    cells = json.loads(path.read_text())["cells"]
    uris, items = [], []
    for i, c in enumerate(cells):
        uri = f"vscode-notebook-cell:{path}#W{i}"
        uris.append(uri)
        items.append(types.TextDocumentItem(uri=uri, language_id="python" if c["cell_type"] == "code" else "markdown",
                                            version=1, text="".join(c["source"])))
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(
            uri=nb_uri, notebook_type="jupyter-notebook", version=1,
            cells=[types.NotebookCell(kind=types.NotebookCellKind.Code if c["cell_type"] == "code" else types.NotebookCellKind.Markup,
                                      document=u) for c, u in zip(cells, uris)]),
        cell_text_documents=items))
    return nb_uri, uris, {u: it.text for u, it in zip(uris, items)}, cells


def cli_findings(tmp_path: Path) -> set[tuple]:
    """What `graphmend check` reports for the fixture: (code, cell, 0-based line, column)."""
    from graphmend import scan
    from graphmend.config import Settings
    (res,) = scan.check_files([str(FIXTURE)], Settings(), jobs=1)
    return {(f.code, f.cell, f.span.start.line - 1, f.span.start.col) for f in res.findings}


@pytest.mark.asyncio
async def test_server_announces_notebook_sync(client: LanguageClient):
    sync = client.server_capabilities.notebook_document_sync
    assert sync is not None
    (sel,) = sync.notebook_selector
    assert [c.language for c in sel.cells] == ["python"]


@pytest.mark.asyncio
async def test_diagnostics_per_cell_match_the_cli(client: LanguageClient, tmp_path):
    nb_uri, uris, texts, cells = open_notebook(client)
    code = [u for u, c in zip(uris, cells) if c["cell_type"] == "code"]
    await wait_for(lambda: all(u in client.diagnostics for u in code))
    got = {(d.code, uris.index(u) + 1, d.range.start.line, d.range.start.character)
           for u in code for d in client.diagnostics[u]}
    assert got == cli_findings(tmp_path)
    assert nb_uri not in client.diagnostics  # only the cells get diagnostics
    model = uris[3]
    for d in client.diagnostics[model]:  # each range is on the text the finding is about
        line = texts[model].split("\n")[d.range.start.line]
        assert line[d.range.start.character:].startswith(
            {"GM101": "print(", "GM301": "torch.isnan", "GM401": "y.sum().item()"}[d.code])
    # a client that pulls asks for a cell: answered (empty), the pushed ones stand
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=model)))
    assert list(report.items) == []


@pytest.mark.asyncio
async def test_cell_edit_updates_only_after_the_change(client: LanguageClient):
    nb_uri, uris, texts, cells = open_notebook(client)
    model = uris[3]
    await wait_for(lambda: len(client.diagnostics.get(model, [])) == 3)
    line = texts[model].split("\n").index('        print("shape", x.shape)')
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(uri=nb_uri, version=2),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
            types.NotebookDocumentCellContentChanges(
                document=types.VersionedTextDocumentIdentifier(uri=model, version=2),
                changes=[types.TextDocumentContentChangePartial(
                    range=types.Range(start=types.Position(line=line, character=0),
                                      end=types.Position(line=line + 1, character=0)), text="")])]))))
    await wait_for(lambda: sorted(d.code for d in client.diagnostics.get(model, [])) == ["GM301", "GM401"])
    # the guard moved up one line in the cell
    (guard,) = [d for d in client.diagnostics[model] if d.code == "GM301"]
    assert guard.range.start.line == line


def apply_cells(texts: dict, edit: types.WorkspaceEdit) -> dict:
    out = dict(texts)
    touched = {dc.text_document.uri for dc in edit.document_changes or []} | set(edit.changes or {})
    for u in touched:
        out[u] = apply_text_edits(texts[u], edits_of(edit, u))
    return out


@pytest.mark.asyncio
async def test_quick_fix_edits_the_cells(client: LanguageClient):
    nb_uri, uris, texts, cells = open_notebook(client)
    model = uris[3]
    await wait_for(lambda: len(client.diagnostics.get(model, [])) == 3)
    (diag,) = [d for d in client.diagnostics[model] if d.code == "GM101"]
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=model), range=diag.range,
        context=types.CodeActionContext(diagnostics=[diag])))
    (fix,) = [a for a in actions if a.title.startswith("GraphMend (GM101)")]
    if fix.edit is None:
        fix = await client.code_action_resolve_async(fix)
    touched = {dc.text_document.uri for dc in fix.edit.document_changes}
    assert touched == {uris[1], model}  # the helper block goes into the first code cell
    new = apply_cells(texts, fix.edit)
    assert '        graphmend.print("shape", x.shape)' in new[model].split("\n")
    assert new[uris[1]].startswith("%pip install -q torch\n%load_ext autoreload\nimport torch\nfrom torch import nn\n")
    assert "# --- graphmend runtime v" in new[uris[1]]
    import ast
    code = [new[u] for u, c in zip(uris, cells) if c["cell_type"] == "code"]
    ast.parse(Cells.build(code).text)


@pytest.mark.asyncio
async def test_fix_all_on_a_cell_equals_cli_fix_of_the_file(client: LanguageClient, tmp_path):
    nb_uri, uris, texts, cells = open_notebook(client)
    model = uris[3]
    await wait_for(lambda: len(client.diagnostics.get(model, [])) == 3)
    res = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="graphmend.fixAll", arguments=[{"uri": model, "version": 1}]))
    assert res["applied"] is True
    (edit,) = client.applied_edits
    new = apply_cells(texts, edit)
    fixed = tmp_path / "cli.ipynb"
    shutil.copyfile(FIXTURE, fixed)
    cli.main(["fix", str(fixed)])
    want = ["".join(c["source"]) for c in json.loads(fixed.read_text())["cells"]]
    assert [new[u] for u in uris] == want
    assert (client.root / "model.ipynb").read_bytes() == FIXTURE.read_bytes()  # the server wrote nothing


@pytest.mark.asyncio
async def test_hover_in_a_cell(client: LanguageClient):
    nb_uri, uris, texts, cells = open_notebook(client)
    model = uris[3]
    await wait_for(lambda: len(client.diagnostics.get(model, [])) == 3)
    (diag,) = [d for d in client.diagnostics[model] if d.code == "GM101"]
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=model), position=diag.range.start))
    assert "GraphMend GM101" in hover.contents.value
    assert hover.range is None or hover.range.start.line == diag.range.start.line


@pytest.mark.asyncio
async def test_close_clears_the_cells(client: LanguageClient):
    nb_uri, uris, texts, cells = open_notebook(client)
    model = uris[3]
    await wait_for(lambda: len(client.diagnostics.get(model, [])) == 3)
    client.notebook_document_did_close(types.DidCloseNotebookDocumentParams(
        notebook_document=types.NotebookDocumentIdentifier(uri=nb_uri),
        cell_text_documents=[types.TextDocumentIdentifier(uri=u) for u in uris]))
    await wait_for(lambda: all(len(client.diagnostics.get(u, [None])) == 0 for u in uris if u != uris[0]))


def test_latency_benchmark_runs(tmp_path):
    """benchmarks/notebook.py on the example, 2 edits: its figures are there (never timed here)."""
    import subprocess
    import sys
    root = Path(__file__).resolve().parent.parent
    out = tmp_path / "nb.json"
    run = subprocess.run([sys.executable, str(root / "benchmarks" / "notebook.py"), "--file",
                          str(root / "examples" / "tiny_model.py"), "--edits", "2", "--json", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(out.read_text())
    assert got["cells"] >= 3
    for k in ("py", "notebook"):
        assert got[k]["n"] == 2 and got[k]["p95"] is not None
    assert "notebook p95 / .py p95" in run.stdout


@pytest.mark.asyncio
async def test_cells_added_and_removed(client: LanguageClient):
    nb_uri, uris, texts, cells = open_notebook(client)
    model = uris[3]
    await wait_for(lambda: len(client.diagnostics.get(model, [])) == 3)
    new = f"vscode-notebook-cell:{client.root / 'model.ipynb'}#new"
    src = "@torch.compile\ndef step(x):\n    print(x)\n    return x * 2\n"

    def structure(start: int, delete: int, cells, opened=(), closed=()):
        return types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(uri=nb_uri, version=2 + len(closed)),
            change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(
                structure=types.NotebookDocumentCellChangeStructure(
                    array=types.NotebookCellArrayChange(start=start, delete_count=delete, cells=cells),
                    did_open=list(opened), did_close=list(closed)))))

    # a cell inserted before the model cell: checked with the others, and numbered in place
    client.notebook_document_did_change(structure(3, 0, [types.NotebookCell(kind=types.NotebookCellKind.Code, document=new)],
                                                  opened=[types.TextDocumentItem(uri=new, language_id="python", version=1, text=src)]))
    await wait_for(lambda: [d.code for d in client.diagnostics.get(new, [])] == ["GM101"])
    (d,) = client.diagnostics[new]
    assert (d.range.start.line, d.range.start.character) == (2, 4)
    assert len(client.diagnostics[model]) == 3  # the model cell's findings stay where they were
    # removed again: its diagnostics are cleared
    client.notebook_document_did_change(structure(3, 1, [], closed=[types.TextDocumentIdentifier(uri=new)]))
    await wait_for(lambda: new in client.diagnostics and len(client.diagnostics[new]) == 0)
    assert len(client.diagnostics[model]) == 3
