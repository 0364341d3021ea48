"""The probe in the language server: opt-in and trust, Dynamo's breaks merged into the
diagnostics (confirmed / Dynamo-only), a failed entry, an imported log, the entry's lens."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from lsp_client import SERVER, capabilities, wait_for
from test_lsp import install_handlers, open_doc

FIXTURES = Path(__file__).parent / "probe_fixtures"


def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


async def start(client: LanguageClient, root: Path, options: dict) -> None:
    install_handlers(client)
    client.profile = "visual-studio-code"
    client.root = root
    await client.initialize_session(types.InitializeParams(
        capabilities=capabilities("visual-studio-code"), root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="proj")],
        initialization_options={"debounceMs": 20, **options}))


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path):
    root = project(tmp_path)
    # static analysis is told to ignore the logger call: Dynamo's break there is Dynamo-only
    models = root / "fixpkg" / "models.py"
    text = models.read_text(encoding="utf-8").replace(
        'logger.warning("net forward ran")  # BREAK:logger',
        'logger.warning("net forward ran")  # graphmend: ignore[GM102]')
    models.write_text(text, encoding="utf-8")
    await start(lsp_client, root, {"probe": {"enable": True}})
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER, params=["off", "untrusted"])
async def refusing(request, lsp_client: LanguageClient, tmp_path):
    opts = {"probe": {"enable": False}} if request.param == "off" else \
        {"probe": {"enable": True}, "workspaceTrusted": False}
    await start(lsp_client, project(tmp_path), opts)
    lsp_client.case = request.param
    yield
    await lsp_client.shutdown_session()


def by_source(client, uri):
    diags = client.diagnostics.get(uri) or []
    return sorted((d.source, d.code, d.range.start.line, d.message) for d in diags)


@pytest.mark.asyncio
async def test_probe_confirms_and_adds_dynamo_breaks(client: LanguageClient):
    uri, text = open_doc(client, "fixpkg/models.py")
    await wait_for(lambda: client.diagnostics.get(uri))
    res = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="graphmend.runProbe", arguments=[]))
    assert res["ok"] is True and res["graphs"] == 4 and res["breaks"] == 3

    def merged():
        got = by_source(client, uri)
        return got if any(s == "dynamo" for s, *_ in got) else None
    got = await wait_for(merged)
    lines = text.splitlines()
    line = {tag: next(i for i, ln in enumerate(lines) if tag in ln)
            for tag in ("BREAK:print", "graphmend: ignore[GM102]", "BREAK:branch")}
    static = [(c, ln, m) for s, c, ln, m in got if s == "graphmend"]
    assert [(c, ln) for c, ln, _ in static] == [("GM101", line["BREAK:print"]), ("GM201", line["BREAK:branch"])]
    assert all(m.endswith("(confirmed by Dynamo)") or "(confirmed by Dynamo)" in m for _, _, m in static)
    dyn = [(c, ln, m) for s, c, ln, m in got if s == "dynamo"]
    assert dyn == [(dyn[0][0], line["graphmend: ignore[GM102]"], dyn[0][2])]
    assert dyn[0][0] == "GB0291" and "Logger" in dyn[0][2]
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    titles = [ln.command.title for ln in lenses]
    assert any(t.startswith("Dynamo: 4 graphs, 3 breaks (probe ") for t in titles)
    assert "Run again" in titles and "Verify mends" in titles
    assert all(ln.range.start.line == next(i for i, l in enumerate(lines) if l.startswith("def probe"))
               for ln in lenses if ln.command.title in ("Run again", "Verify mends"))


@pytest.mark.asyncio
async def test_failing_entry_is_a_diagnostic_not_a_crash(client: LanguageClient):
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"graphmend": {"probe": {"enable": True, "entry": "fixpkg.broken:probe"}}}))
    uri, text = open_doc(client, "fixpkg/broken.py")
    await wait_for(lambda: uri in client.diagnostics)
    res = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="graphmend.runProbe", arguments=[]))
    assert res["ok"] is False and res["error"]["kind"] == "import"
    errs = await wait_for(lambda: [d for d in client.diagnostics.get(uri, []) if d.source == "dynamo"])
    assert errs[0].severity == types.DiagnosticSeverity.Error and "import" in errs[0].message
    assert errs[0].range.start.line == next(i for i, ln in enumerate(text.splitlines()) if "ERROR:import" in ln)
    assert any("failed" in m.message for m in client.messages)
    # the server is still up
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=0)))
    assert hover is None


@pytest.mark.asyncio
async def test_imported_log_written_elsewhere(client: LanguageClient, tmp_path):
    uri, text = open_doc(client, "fixpkg/models.py")
    await wait_for(lambda: client.diagnostics.get(uri))
    log = client.root / "logs" / "graph_breaks.log"
    # the log names files of another checkout: they are found in this workspace by their tail
    raw = log.read_text(encoding="utf-8")
    prefix = raw.split("Graph break in user code at ", 1)[1].split("fixpkg/models.py")[0]
    moved = tmp_path / "moved.log"
    moved.write_text(raw.replace(prefix, "/elsewhere/checkout/"), encoding="utf-8")
    res = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="graphmend.importLog", arguments=[str(moved)]))
    assert res["ok"] is True and len(res["break_list"]) == 3
    got = await wait_for(lambda: by_source(client, uri) if any(
        "confirmed by Dynamo" in d.message for d in client.diagnostics.get(uri, [])) else None)
    assert sum("confirmed by Dynamo" in m for *_, m in got) == 2
    bad = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="graphmend.importLog", arguments=[str(tmp_path / "missing.log")]))
    assert bad["ok"] is False


@pytest.mark.asyncio
async def test_probe_needs_opt_in_and_trust(refusing: LanguageClient):
    client = refusing
    res = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="graphmend.runProbe", arguments=[]))
    assert res["ok"] is False
    want = "off by default" if client.case == "off" else "does not trust"
    assert want in res["refused"]
    assert any(want in m.message for m in client.messages)
