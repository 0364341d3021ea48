"""Shared pieces of the language-server end-to-end tests (pytest-lsp over stdio)."""

from __future__ import annotations

import asyncio
import copy
import shutil
import sys
from pathlib import Path

from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

from graphmend.textlines import split_lines

FIXTURES = Path(__file__).parent / "lsp_fixtures"
SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "graphmend", "serve"])

# pytest-lsp's VS Code profile is 1.65; current VS Code (vscode-languageclient 9) also pulls
# diagnostics. "vscode-pull" is that profile with pull diagnostics, as today's VS Code sends it.
PROFILES = ["visual-studio-code", "neovim@v0.7.0", "vscode-pull"]


def capabilities(profile: str) -> types.ClientCapabilities:
    if profile == "vscode-pull":
        caps = copy.deepcopy(client_capabilities("visual-studio-code"))
        caps.text_document.diagnostic = types.DiagnosticClientCapabilities(
            dynamic_registration=True, related_document_support=False)
        caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
        return caps
    return client_capabilities(profile)


def workspace(tmp_path: Path) -> Path:
    """A copy of the fixture project (the server must never write to it)."""
    dst = tmp_path / "project"
    shutil.copytree(FIXTURES, dst)
    return dst


def apply_text_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP edits (UTF-16 positions) to text, as an editor would."""
    lines = split_lines(text, keepends=True)

    def offset(p: types.Position) -> int:
        if p.line >= len(lines):
            return len(text)
        line = lines[p.line]
        units = 0
        col = 0
        for ch in line:
            if units >= p.character:
                break
            units += 2 if ord(ch) > 0xFFFF else 1
            col += 1
        return sum(len(s) for s in lines[: p.line]) + col

    spans = sorted(((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits), reverse=True)
    for a, b, new in spans:
        text = text[:a] + new + text[b:]
    return text


def edits_of(edit: types.WorkspaceEdit, uri: str) -> list[types.TextEdit]:
    if edit.document_changes:
        return [e for dc in edit.document_changes if isinstance(dc, types.TextDocumentEdit)
                and dc.text_document.uri == uri for e in dc.edits]
    return list((edit.changes or {}).get(uri, []))


def created_files(edit: types.WorkspaceEdit) -> dict[str, str]:
    """{uri: text} of the files a workspace edit creates (CreateFile, then its TextDocumentEdit)."""
    out = {}
    for dc in edit.document_changes or ():
        if isinstance(dc, types.CreateFile):
            out[dc.uri] = ""
        elif isinstance(dc, types.TextDocumentEdit) and dc.text_document.uri in out:
            out[dc.text_document.uri] = apply_text_edits(out[dc.text_document.uri], list(dc.edits))
    return out


def creates_files(profile: str) -> bool:
    """Whether the profile's client applies documentChanges with CreateFile."""
    we = capabilities(profile).workspace.workspace_edit
    return bool(we and we.document_changes and "create" in [getattr(o, "value", o) for o in we.resource_operations or ()])


async def wait_for(pred, timeout: float = 20.0, step: float = 0.02):
    """Poll until pred() is truthy (returns its value) or fail."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        got = pred()
        if got:
            return got
        if loop.time() > end:
            raise AssertionError("timed out waiting for the server")
        await asyncio.sleep(step)
