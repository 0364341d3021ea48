"""End-to-end tests of the language server over stdio (pytest-lsp), for the VS Code and Neovim
capability profiles: diagnostics, code actions, fix on save, hover, code lens, settings."""

from __future__ import annotations

import ast
import asyncio

import pytest
import pytest_lsp

from graphmend.rewrite import runtime
from lsprotocol import types
from pytest_lsp import LanguageClient

from lsp_client import (PROFILES, SERVER, apply_text_edits, capabilities, created_files, creates_files, edits_of,
                        wait_for, workspace)


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
    client.published = []  # every publishDiagnostics, in arrival order
    client.versions = {}

    # pytest-lsp keeps only the latest diagnostics; record every publish (with its version)
    client.protocol.fm._features.pop(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, None)

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _published(params: types.PublishDiagnosticsParams):
        client.published.append(params)
        client.versions[params.uri] = params.version
        client.diagnostics[params.uri] = params.diagnostics

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def _lens_refresh(params):
        client.refreshes.append("codeLens")

    @client.feature(types.WORKSPACE_DIAGNOSTIC_REFRESH)
    def _diag_refresh(params):
        client.refreshes.append("diagnostic")

    client.accept_edits = True

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def _apply(params: types.ApplyWorkspaceEditParams):
        client.applied_edits.append(params.edit)
        return types.ApplyWorkspaceEditResult(applied=client.accept_edits)


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


async def diagnostics_now(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    """What the client holds (or pulls) now, without waiting for any."""
    if client.profile == "vscode-pull":
        report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))
        return list(report.items)
    return list(client.diagnostics.get(uri) or [])


@pytest.mark.asyncio
async def test_open_reports_breaks(client: LanguageClient):
    uri, text = open_doc(client)
    diags = await diagnostics(client, uri)
    got = sorted((d.code, d.range.start.line) for d in diags)
    assert got == [("GM101", 15), ("GM101", 29), ("GM102", 22), ("GM201", 18), ("GM301", 16), ("GM401", 28)]
    d = next(d for d in diags if d.code == "GM101")
    assert d.source == "graphmend"
    assert d.code_description.href.endswith("/docs/rules/GM101.md")
    assert d.related_information and "Block.forward" in d.related_information[0].message
    # the print call starts after 8 spaces of indentation, on a line after non-ASCII text
    assert (d.range.start.character, d.range.end.line) == (8, 15)


def line_of(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines()) if needle in ln)


async def change(client: LanguageClient, uri: str, version: int, text: str) -> None:
    """Replace the whole text with an incremental edit (range over the old text)."""
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


def insert(client: LanguageClient, uri: str, version: int, line: int, char: int, new: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(line=line, character=char),
                              end=types.Position(line=line, character=char)), text=new)]))


async def settle(client: LanguageClient, uri: str, version: int) -> list[types.Diagnostic]:
    """The diagnostics of `version` (pushed with that version, or pulled)."""
    if client.profile == "vscode-pull":
        return await diagnostics(client, uri)
    await wait_for(lambda: client.versions.get(uri) == version)
    return list(client.diagnostics[uri])


async def actions_at(client: LanguageClient, uri: str, diag: types.Diagnostic, only=None):
    return await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=diag.range,
        context=types.CodeActionContext(diagnostics=[diag], only=only)))


async def resolved(client: LanguageClient, action: types.CodeAction) -> types.CodeAction:
    if action.edit is None:
        action = await client.code_action_resolve_async(action)
    assert action.edit is not None, action.title
    return action


@pytest.mark.asyncio
async def test_non_ascii_before_a_break_on_the_same_line(client: LanguageClient):
    uri, text = open_doc(client)
    diags = await diagnostics(client, uri)
    n = line_of(text, 'print(tag, n)')
    line = text.splitlines()[n]
    (d,) = [d for d in diags if d.range.start.line == n]
    # UTF-16: the emoji before the call counts twice
    assert d.range.start.character == len(line[: line.index("print")].encode("utf-16-le")) // 2
    assert d.range.end.character == len(line.encode("utf-16-le")) // 2


@pytest.mark.asyncio
async def test_tabs_count_as_one_unit(client: LanguageClient):
    uri, text = open_doc(client, "tabs.py")
    diags = await diagnostics(client, uri)
    got = sorted((d.code, d.range.start.line, d.range.start.character) for d in diags)
    assert got == [("GM101", 9, 1), ("GM201", 5, 4)]


@pytest.mark.asyncio
async def test_change_updates_and_close_clears(client: LanguageClient):
    uri, text = open_doc(client)
    await settle(client, uri, 1) if client.profile != "vscode-pull" else await diagnostics(client, uri)
    n = line_of(text, 'print("Block input"')
    lines = text.splitlines(keepends=True)
    lines[n] = lines[n].replace('print("Block input", x.shape)', "pass")
    await change(client, uri, 2, "".join(lines))
    diags = await settle(client, uri, 2)
    assert "GM101" not in [d.code for d in diags if d.range.start.line < 25]
    assert len(diags) == 5
    client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    if client.profile != "vscode-pull":
        await wait_for(lambda: uri in client.diagnostics and not client.diagnostics[uri])


@pytest.mark.asyncio
async def test_burst_of_edits_publishes_only_the_last_version(client: LanguageClient):
    if client.profile == "vscode-pull":
        pytest.skip("versions are pushed only")
    uri, text = open_doc(client)
    await settle(client, uri, 1)
    client.published.clear()
    n = line_of(text, "logger.warning")
    for v in range(2, 22):  # type "abcdefghijklmnopqrst" into a comment, one key per version
        end = len(text.splitlines()[n - 1])
        insert(client, uri, v, n - 1, end if v == 2 else end + 5 + v - 3, "x" if v > 2 else "  # x")
    diags = await settle(client, uri, 21)
    versions = [p.version for p in client.published if p.uri == uri]
    assert versions and versions[-1] == 21
    assert versions == sorted(versions)  # never an older version after a newer one
    assert len(versions) <= 3  # debounced: not one check per keystroke
    assert sorted(d.code for d in diags) == ["GM101", "GM101", "GM102", "GM201", "GM301", "GM401"]


@pytest.mark.asyncio
async def test_pull_answers_unchanged(client: LanguageClient):
    if client.profile != "vscode-pull":
        pytest.skip("pull diagnostics only")
    uri, text = open_doc(client)
    first = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    assert first.kind == "full" and first.result_id and len(first.items) == 6
    again = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=uri), previous_result_id=first.result_id))
    assert again.kind == "unchanged" and again.result_id == first.result_id
    n = line_of(text, 'print("Block input"')
    insert(client, uri, 2, n, 0, "#")  # comment the print out
    third = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=uri), previous_result_id=first.result_id))
    assert third.kind == "full" and len(third.items) == 5 and third.result_id != first.result_id
    assert client.diagnostics.get(uri) is None  # nothing pushed to a pulling client


@pytest.mark.asyncio
async def test_quick_fix_mends_one_site(client: LanguageClient):
    uri, text = open_doc(client)
    diags = await diagnostics(client, uri)
    d = next(d for d in diags if d.code == "GM101" and d.range.start.line < 25)
    acts = await actions_at(client, uri, d)
    titles = [a.title for a in acts]
    fix = next(a for a in acts if a.title.startswith("GraphMend (GM101): "))
    assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred
    assert "GraphMend: Ignore GM101 on this line" in titles
    fix = await resolved(client, fix)
    new = apply_text_edits(text, edits_of(fix.edit, uri))
    ast.parse(new)
    assert 'graphmend.print("Block input", x.shape)' in new
    created = created_files(fix.edit)
    if creates_files(client.profile):
        # vendor: one import line; the copy is created by the same workspace edit
        assert "(runtime inline" not in fix.title
        added = [ln for ln in new.splitlines() if ln not in text.splitlines()]
        assert added == ["import _graphmend_runtime as graphmend", '        graphmend.print("Block input", x.shape)']
        assert created == {(client.root / "_graphmend_runtime.py").as_uri(): runtime.vendored_text()}
    else:
        # no file creation: the runtime inline, and the title says so
        assert "(runtime inline: this editor cannot create _graphmend_runtime.py)" in fix.title
        assert created == {} and runtime.inline_block() in new
    assert not (client.root / "_graphmend_runtime.py").exists()  # the server wrote nothing
    await change(client, uri, 2, new)
    after = await settle(client, uri, 2)
    assert sorted(d.code for d in after) == ["GM101", "GM102", "GM201", "GM301", "GM401"]


@pytest.mark.asyncio
async def test_unsafe_fix_is_labelled_and_not_preferred(client: LanguageClient):
    uri, text = open_doc(client)
    diags = await diagnostics(client, uri)
    d = next(d for d in diags if d.code == "GM201")
    fix = next(a for a in await actions_at(client, uri, d) if a.title.startswith("GraphMend (GM201)"))
    assert "(unsafe" in fix.title and not fix.is_preferred
    fix = await resolved(client, fix)
    new = apply_text_edits(text, edits_of(fix.edit, uri))
    ast.parse(new)
    assert "torch.cond(" in new


@pytest.mark.asyncio
async def test_declined_site_offers_no_fix_and_hover_says_why(client: LanguageClient):
    uri, text = open_doc(client)
    diags = await diagnostics(client, uri)
    d = next(d for d in diags if d.code == "GM401")
    titles = [a.title for a in await actions_at(client, uri, d) if a.kind == types.CodeActionKind.QuickFix]
    assert titles == ["GraphMend: Ignore GM401 on this line"]
    h = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=d.range.start))
    assert "GB0124" in h.contents.value and "declines" in h.contents.value.lower() \
        or "No mend" in h.contents.value


@pytest.mark.asyncio
async def test_ignore_comment_silences_the_site(client: LanguageClient):
    uri, text = open_doc(client)
    diags = await diagnostics(client, uri)
    d = next(d for d in diags if d.code == "GM102")
    ign = next(a for a in await actions_at(client, uri, d) if a.title.startswith("GraphMend: Ignore"))
    ign = await resolved(client, ign)
    new = apply_text_edits(text, edits_of(ign.edit, uri))
    assert 'logger.warning("Block done")  # graphmend: ignore[GM102]' in new
    await change(client, uri, 2, new)
    after = await settle(client, uri, 2)
    assert "GM102" not in [d.code for d in after] and len(after) == 5


@pytest.mark.asyncio
async def test_fix_all_source_action_equals_cli_fix(client: LanguageClient):
    from graphmend.rewrite.apply import fix_source
    uri, text = open_doc(client)
    await diagnostics(client, uri)
    acts = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
        context=types.CodeActionContext(diagnostics=[], only=["source.fixAll"])))
    note = "" if creates_files(client.profile) else " (runtime inline: this editor cannot create _graphmend_runtime.py)"
    assert [a.title for a in acts] == ["GraphMend: Mend all graph breaks in this file" + note]
    assert acts[0].kind == "source.fixAll.graphmend"
    fix = await resolved(client, acts[0])
    new = apply_text_edits(text, edits_of(fix.edit, uri))
    mode = "vendor" if creates_files(client.profile) else "inline"
    assert new == fix_source(text, str(client.root / "model.py"), runtime=mode).text  # safe fixes only
    assert "torch.cond(" not in new and "graphmend.print(tag, n)" in new
    assert (created_files(fix.edit) != {}) == (mode == "vendor")


@pytest.mark.asyncio
async def test_fix_all_command_applies_through_the_client(client: LanguageClient):
    uri, text = open_doc(client)
    await diagnostics(client, uri)
    res = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="graphmend.fixAll", arguments=[{"uri": uri, "version": 1}]))
    assert res["applied"] is True
    (edit,) = client.applied_edits
    new = apply_text_edits(text, edits_of(edit, uri))
    ast.parse(new)
    if creates_files(client.profile):
        assert new.count("\nimport _graphmend_runtime as graphmend\n") == 1
    else:
        assert new.count(runtime.inline_block()) == 1
        new = new.replace(runtime.inline_block(), "")
    assert new.count("graphmend.print(") == 2
    assert (client.root / "model.py").read_text(encoding="utf-8") == text  # the server wrote nothing


@pytest.mark.asyncio
async def test_hover_explains_and_previews(client: LanguageClient):
    uri, text = open_doc(client)
    diags = await diagnostics(client, uri)
    d = next(d for d in diags if d.code == "GM101")
    h = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=d.range.start))
    v = h.contents.value
    assert "GM101" in v and "GB0059" in v and "(safe)" in v and "[Defer]" in v
    assert 'graphmend.print("Block input", x.shape)' in v  # the preview
    empty = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=0)))
    assert empty is None


@pytest.mark.asyncio
async def test_code_lens_counts_breaks_per_entry(client: LanguageClient):
    uri, text = open_doc(client)
    await diagnostics(client, uri)
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    got = sorted((ln.range.start.line, ln.command.title, ln.command.command) for ln in lenses)
    assert got == [
        (line_of(text, "def forward"), "4 graph breaks (4 mendable) · Mend all", "graphmend.fixAll"),
        (line_of(text, "def scale"), "2 graph breaks (1 mendable) · Mend all", "graphmend.fixAll"),
    ]


@pytest.mark.asyncio
async def test_settings_change_rechecks(client: LanguageClient):
    uri, text = open_doc(client)
    await settle(client, uri, 1) if client.profile != "vscode-pull" else await diagnostics(client, uri)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"graphmend": {"ignore": ["GM1"]}}))
    if client.profile == "vscode-pull":
        await wait_for(lambda: "diagnostic" in client.refreshes)
        diags = await diagnostics(client, uri)
    else:
        diags = await wait_for(lambda: [d for d in client.diagnostics.get(uri, [])]
                               if all(not d.code.startswith("GM1") for d in client.diagnostics.get(uri, []))
                               else None)
    assert sorted(d.code for d in diags) == ["GM201", "GM301", "GM401"]


@pytest.mark.asyncio
async def test_syntax_error_keeps_other_findings(client: LanguageClient):
    uri, text = open_doc(client)
    await settle(client, uri, 1) if client.profile != "vscode-pull" else await diagnostics(client, uri)
    n = line_of(text, "def scale")
    insert(client, uri, 2, n + 1, 4, "n = (")  # an unclosed paren mid-edit, in scale()
    diags = await settle(client, uri, 2)
    errors = [d for d in diags if d.code == "GM001"]
    assert len(errors) == 1 and errors[0].severity == types.DiagnosticSeverity.Error
    kept = sorted((d.code, d.range.start.line) for d in diags if d.code != "GM001")
    # everything above the edit is carried over unchanged
    assert [c for c, _ in kept if _ < n] == ["GM101", "GM301", "GM201", "GM102"] or \
        sorted(c for c, ln in kept if ln < n) == ["GM101", "GM102", "GM201", "GM301"]
    # no fix is offered while the file does not parse, and fix on save gives nothing
    acts = await actions_at(client, uri, next(d for d in diags if d.code == "GM101"))
    assert not acts


@pytest.mark.asyncio
async def test_fix_on_save(client: LanguageClient):
    from graphmend.rewrite.apply import fix_source
    if client.profile.startswith("neovim"):
        pytest.skip("Neovim 0.7 does not send willSaveWaitUntil")
    uri, text = open_doc(client)
    await diagnostics(client, uri)
    params = types.WillSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri),
                                              reason=types.TextDocumentSaveReason.Manual)
    assert not await client.text_document_will_save_wait_until_async(params)  # off by default
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"graphmend": {"fixOnSave": True}}))
    edits = None
    for _ in range(50):  # the configuration change is a notification: poll until it took effect
        edits = await client.text_document_will_save_wait_until_async(params)
        if edits:
            break
        await asyncio.sleep(0.05)
    new = apply_text_edits(text, edits)
    # the vendored copy is created first, through workspace/applyEdit (a save returns only
    # edits of its document); the saved text imports it
    assert new == fix_source(text, str(client.root / "model.py")).text
    (create,) = client.applied_edits
    assert created_files(create) == {(client.root / "_graphmend_runtime.py").as_uri(): runtime.vendored_text()}
    # a file that does not parse gets no edits on save
    insert(client, uri, 2, 0, 0, "def (")
    await settle(client, uri, 2) if client.profile != "vscode-pull" else await diagnostics(client, uri)
    assert not await client.text_document_will_save_wait_until_async(params)


@pytest.mark.asyncio
async def test_fix_on_save_falls_back_to_inline_when_the_copy_cannot_be_created(client: LanguageClient):
    from graphmend.rewrite.apply import fix_source
    if client.profile != "visual-studio-code":
        pytest.skip("one profile that sends willSaveWaitUntil is enough")
    client.accept_edits = False  # the editor refuses the CreateFile
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"graphmend": {"fixOnSave": True}}))
    uri, text = open_doc(client)
    await diagnostics(client, uri)
    params = types.WillSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri),
                                              reason=types.TextDocumentSaveReason.Manual)
    edits = None
    for _ in range(50):
        edits = await client.text_document_will_save_wait_until_async(params)
        if edits:
            break
        await asyncio.sleep(0.05)
    new = apply_text_edits(text, edits)
    assert new == fix_source(text, str(client.root / "model.py"), runtime="inline").text
    assert runtime.inline_block() in new and "\nimport _graphmend_runtime as graphmend\n" not in new
    assert len(client.applied_edits) >= 1  # it asked


@pytest.mark.asyncio
async def test_helper_in_another_file_is_in_scope(client: LanguageClient):
    """The workspace index: a helper is checked because a forward in another file calls it."""
    uri, text = open_doc(client, "helpers.py")

    for _ in range(200):
        diags = await diagnostics_now(client, uri)
        if diags:
            break
        await asyncio.sleep(0.05)
    (d,) = diags
    assert d.code == "GM101" and d.range.start.line == 1
    rel = d.related_information[0]
    assert rel.location.uri == (client.root / "pipeline.py").as_uri()
    assert rel.location.range.start.line == 6 and "Pipeline.forward" in rel.message
    if client.profile == "visual-studio-code":  # VS Code shows work-done progress for the index
        assert any(client.progress_reports.values())


@pytest.mark.asyncio
async def test_a_callers_tensors_in_another_file_reveal_a_break(client: LanguageClient):
    """analysis/callers.py through the workspace index: solver.py passes tensors to interp.py's
    unannotated helper, whose chained assert then breaks. Shown in interp.py while its text is the
    one the index analysed; after a save that removes the assert, solver.py is analysed again."""
    uri, text = open_doc(client, "interp.py")

    async def settle(pred):
        for _ in range(200):
            diags = await diagnostics_now(client, uri)
            if pred(diags):
                return diags
            await asyncio.sleep(0.05)
        return diags

    (d,) = await settle(lambda ds: len(ds) == 1)
    assert d.code == "GM301" and d.range.start.line == 1
    assert "(solver.py:10)" in d.message and "no safe fix" not in d.message.split("(not mendable")[0]
    # the rule's reason (interp.py does not import torch), then who shows the break
    assert "(not mendable: `torch` is not imported" in d.message and "; only a caller shows" in d.message
    assert "Solver.forward" in d.related_information[0].message
    assert d.data["fix"] == "none"
    # an unsaved edit: the index's finding was found in another text, so it is not shown
    edited = text.replace('"out of order"', '"out of  order"')

    def change(new: str, version: int):
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=new)]))

    change(edited, 2)
    assert await settle(lambda ds: not ds) == []
    change(text, 3)  # back to the text on disk
    assert len(await settle(lambda ds: len(ds) == 1)) == 1
    # saved without the assert: solver.py is analysed again, nothing is left
    gone = text.replace("    assert t0", "    # assert t0")
    (client.root / "interp.py").write_text(gone)
    change(gone, 4)
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    assert await settle(lambda ds: not ds) == []
    # and back, saved: found again
    (client.root / "interp.py").write_text(text)
    change(text, 5)
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    assert len(await settle(lambda ds: len(ds) == 1)) == 1


@pytest_lsp.fixture(config=SERVER)
async def odd_client(lsp_client: LanguageClient, tmp_path):
    """A client that prefers UTF-8 positions and sends invalid settings."""
    root = workspace(tmp_path)
    install_handlers(lsp_client)
    lsp_client.profile = "utf-8"
    lsp_client.root = root
    caps = capabilities("visual-studio-code")
    caps.general = types.GeneralClientCapabilities(position_encodings=["utf-8", "utf-16"])
    caps.text_document.code_action.resolve_support = None  # edits must come with the actions
    result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=caps, root_uri=root.as_uri(),
        initialization_options={"scope": "everything", "fixOnSave": "yes", "debounceMs": 20,
                                "colour": "blue"}))
    lsp_client.init_result = result
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_utf8_positions_and_invalid_settings(odd_client: LanguageClient):
    client = odd_client
    assert client.init_result.capabilities.position_encoding == "utf-8"
    uri, text = open_doc(client)
    diags = await wait_for(lambda: client.diagnostics.get(uri))
    n = line_of(text, "print(tag, n)")
    line = text.splitlines()[n]
    (d,) = [d for d in diags if d.range.start.line == n]
    assert d.range.start.character == len(line[: line.index("print")].encode("utf-8"))
    # the invalid settings are reported once, clearly, and their defaults used
    msg = await wait_for(lambda: [m.message for m in client.messages if "invalid settings" in m.message])
    assert "`scope` must be one of" in msg[0] and "`fixOnSave` must be true or false" in msg[0]
    assert "unknown setting `colour`" in msg[0]
    assert len(diags) == 6  # scope "default" applies
    # a client that cannot resolve gets every action with its edit
    acts = await actions_at(client, uri, d)
    assert acts and all(a.edit is not None for a in acts)
    fix = next(a for a in acts if a.title.startswith("GraphMend (GM101)"))
    (e,) = [e for e in edits_of(fix.edit, uri) if "graphmend.print" in e.new_text and "(inline;" not in e.new_text]
    assert e.range.start.character == d.range.start.character  # UTF-8 columns in edits too
