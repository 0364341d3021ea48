"""End-to-end tests of the language server over stdio (pytest-lsp), for the VS Code and Neovim
capability profiles: diagnostics, code actions, fix on save, hover, code lens, settings."""

from __future__ import annotations

import ast

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from lsp_client import PROFILES, SERVER, apply_text_edits, capabilities, edits_of, wait_for, workspace


@pytest_lsp.fixture(config=SERVER, params=PROFILES)
async def client(request, lsp_client: LanguageClient, tmp_path):
    root = workspace(tmp_path)
    install_handlers(lsp_client)
    lsp_client.profile = request.param
    lsp_client.root = root
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=capabilities(request.param),
        root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="project")],
        initialization_options={"debounceMs": 20}))
    yield
    await lsp_client.shutdown_session()


def install_handlers(client: LanguageClient) -> None:
    """What an editor answers: refresh requests, and applyEdit (recorded, applied by the test)."""
    client.applied_edits = []
    client.refreshes = []

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def _lens_refresh(params):
        client.refreshes.append("codeLens")

    @client.feature(types.WORKSPACE_DIAGNOSTIC_REFRESH)
    def _diag_refresh(params):
        client.refreshes.append("diagnostic")

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def _apply(params: types.ApplyWorkspaceEditParams):
        client.applied_edits.append(params.edit)
        return types.ApplyWorkspaceEditResult(applied=True)


def open_doc(client: LanguageClient, name: str = "model.py", text: str | None = None, version: int = 1):
    path = client.root / name
    if text is None:
        text = path.read_text(encoding="utf-8")
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))
    return uri, text


async def diagnostics(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    if client.profile == "vscode-pull":
        report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))
        return list(report.items)
    return await wait_for(lambda: client.diagnostics.get(uri))


@pytest.mark.asyncio
async def test_open_reports_breaks(client: LanguageClient):
    uri, text = open_doc(client)
    diags = await diagnostics(client, uri)
    got = sorted((d.code, d.range.start.line) for d in diags)
    assert got == [("GM101", 15), ("GM102", 22), ("GM201", 18), ("GM301", 16), ("GM401", 28)]
    d = next(d for d in diags if d.code == "GM101")
    assert d.source == "graphmend"
    assert d.code_description.href.endswith("/docs/rules/GM101.md")
    assert d.related_information and "Block.forward" in d.related_information[0].message
    # the print call starts after 8 spaces of indentation, on a line after non-ASCII text
    assert (d.range.start.character, d.range.end.line) == (8, 15)
