"""The GraphMend language server (pygls 2): `graphmend serve` (stdio) or `--tcp HOST:PORT`.

The path of a keystroke: `didChange` here -> `diagnostics.Diagnostics.schedule` (debounce,
version) -> `checker.check` in the analysis thread -> `publishDiagnostics` (or the pull
report). Fixes are computed only when asked: `actions`, `hover`, `lens`.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from graphmend import __version__
from graphmend.analysis import definitions
from graphmend.analysis.workspace import Workspace
from graphmend.config import Settings
from graphmend.lsp import actions, hover, lens, probe
from graphmend.lsp import notebook as nb
from graphmend.lsp.checker import LARGE_TEXT
from graphmend.lsp.diagnostics import Diagnostics
from graphmend.lsp.document import Document
from graphmend.lsp.index import Cancelled, WorkspaceIndex, calls_into
from graphmend.lsp.opened import OpenedCache
from graphmend.lsp.protocol import GraphMendProtocol, report_server_error
from graphmend.lsp.settings import ServerSettings, SettingsResolver, server_settings

log = logging.getLogger("graphmend.lsp")
LOG_LEVELS = {"error": logging.ERROR, "warning": logging.WARNING, "info": logging.INFO, "debug": logging.DEBUG}
SHOW_LOG_COMMAND = "graphmend.showLog"
DEFINITIONS_SAVE_DELAY_S = 2.0  # after the check that added to the definitions index


class ClientLogHandler(logging.Handler):
    """Server log -> `window/logMessage` (the editor's output channel), from any thread;
    the last lines are also kept for `graphmend.showLog`."""

    def __init__(self, server: "GraphMendServer") -> None:
        super().__init__()
        self.server = server
        self.recent: collections.deque[str] = collections.deque(maxlen=1000)
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
            self.recent.append(text)
            kind = (types.MessageType.Error if record.levelno >= logging.ERROR else
                    types.MessageType.Warning if record.levelno >= logging.WARNING else
                    types.MessageType.Info if record.levelno >= logging.INFO else types.MessageType.Log)
            loop = self.server.loop_ref
            if loop is None or not self.server.initialized:
                return
            params = types.LogMessageParams(type=kind, message=text)
            loop.call_soon_threadsafe(self.server.window_log_message, params)
        except Exception:  # logging must never raise
            pass


class GraphMendServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("graphmend", __version__, protocol_cls=GraphMendProtocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         notebook_document_sync=nb.SYNC_OPTIONS)
        self.docs: dict[str, Document] = {}  # notebooks too (lsp.notebook.NotebookDoc: the code cells)
        self.cell_owner: dict[str, str] = {}  # notebook cell URI -> notebook URI
        self.settings = ServerSettings()
        self.resolver = SettingsResolver()
        self.diagnostics = Diagnostics(self)
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphmend-check")
        # Checks of documents over LARGE_TEXT characters (a 50,000-line paste) and fix-all edits
        # (`fix` of 3,000 sites) take seconds: they run in their own threads, so that the other
        # documents' diagnostics never wait behind them.
        self.large_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphmend-check-large")
        self.fix_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphmend-fix")
        self.scan_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphmend-index")
        self.probe_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphmend-probe")
        self.probe = probe.ProbeState()
        self._probe_published: set[str] = set()
        self.model = Workspace()  # the analysis' view of the workspace (module lookup)
        self.index: Optional[WorkspaceIndex] = None
        self.roots: list[str] = []
        self.loop_ref: Optional[asyncio.AbstractEventLoop] = None
        self.initialized = False
        self._reported: set[str] = set()
        self._scan_cancelled = False
        self.log_handler = ClientLogHandler(self)
        self._pending_messages: list[str] = []
        self._lens_signature: dict[str, tuple] = {}
        self._closed_notebooks: set[str] = set()
        self._definitions_save_pending = False
        self.opened: Optional[OpenedCache] = None  # diagnostics of opened files, between sessions

    # ------------------------------------------------------------------ capabilities
    @property
    def codec(self):
        return self.workspace.position_codec

    def _client(self, path: str, default=None):
        node: Any = self.client_capabilities
        for part in path.split("."):
            node = getattr(node, part, None) if node is not None else None
        return default if node is None else node

    @property
    def can_resolve_actions(self) -> bool:
        support = self._client("text_document.code_action.resolve_support")
        return bool(support and "edit" in (support.properties or []))

    @property
    def workspace_trusted(self) -> bool:
        return self.settings.workspace_trusted

    @property
    def supports_document_changes(self) -> bool:
        return bool(self._client("workspace.workspace_edit.document_changes", False))

    def check_pool(self, text: str) -> ThreadPoolExecutor:
        return self.large_pool if len(text) > LARGE_TEXT else self.pool

    # ------------------------------------------------------------------ settings
    def apply_settings(self, options: Any, base: Optional[ServerSettings] = None) -> None:
        s, errors = server_settings(options, base)
        self.settings = s
        self.log_handler.setLevel(LOG_LEVELS[s.log_level])
        if not s.user_cache:
            self.model.definitions = None
            self.opened = None
        elif self.opened is None:
            self.opened = OpenedCache(definitions.user_cache_dir())
        if errors:
            self.warn_user("GraphMend: invalid settings (defaults used for these): " + "; ".join(errors))

    def engine_settings(self, path: str) -> tuple[Settings, list[str]]:
        s, errors = self.resolver.resolve(path, self.settings)
        if errors:
            key = "; ".join(errors)
            if key not in self._reported:
                self._reported.add(key)
                self.warn_user("GraphMend: " + key + " (defaults used)")
        return s, errors

    def report_server_error(self, error: Exception, source) -> None:
        report_server_error(error, source)  # logged, not a pop-up per bad message

    def warn_user(self, message: str) -> None:
        log.warning(message)
        if self.initialized:
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))
        else:
            self._pending_messages.append(message)

    # ------------------------------------------------------------------ documents
    def open(self, item: types.TextDocumentItem) -> Document:
        path = to_fs_path(item.uri) if item.uri.startswith("file:") else item.uri
        doc = Document(item.uri, path or item.uri, item.text, item.version)
        self.docs[item.uri] = doc
        return doc

    def text_document_publish_diagnostics(self, params: types.PublishDiagnosticsParams) -> None:
        if isinstance(self.docs.get(params.uri), nb.NotebookDoc) or params.uri in self._closed_notebooks:
            return  # a notebook's diagnostics go to its cells (after_check)
        super().text_document_publish_diagnostics(params)

    def publish_cells(self, cell_uri: str, diagnostics: list) -> None:
        super().text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell_uri, diagnostics=diagnostics))

    def after_check(self, uri: str) -> None:
        """Publish a notebook's diagnostics per cell (pushed, also to a client that pulls: its
        pull asks for cells, which the server does not check one by one); ask the client to
        fetch code lenses again when their counts changed."""
        self.schedule_definitions_save()
        doc = self.docs.get(uri)
        if isinstance(doc, nb.NotebookDoc):
            for cell, diags in nb.split_diagnostics(doc, self.diagnostics.published.get(uri, ([], ""))[0]).items():
                self.publish_cells(cell, diags)
            return
        if not self._client("workspace.code_lens.refresh_support", False):
            return
        checked = self.diagnostics.checked.get(uri)
        sig = tuple((fi.qualname, n, m) for fi, n, m in lens.entry_counts(checked)) if checked else ()
        if self._lens_signature.get(uri) != sig:
            self._lens_signature[uri] = sig
            self.workspace_code_lens_refresh(None)

    # ------------------------------------------------------------------ definitions index
    def attach_definitions(self) -> None:
        """Open the index of other modules' definitions (analysis/definitions.py) for the
        analysis' workspace. Submitted to the check thread at initialize, so the first check
        finds it; a failure only means that imported modules are parsed."""
        if not self.settings.user_cache:
            return
        try:
            path = definitions.index_path(definitions.user_cache_dir())
            index = definitions.DefinitionsIndex(path)
        except Exception:
            log.exception("cannot open the definitions index")
            return
        self.model.definitions = index
        log.info("definitions index %s: %d modules", path, len(index))

    def schedule_definitions_save(self) -> None:
        """After a check that added to the index: write it a little later, off the check thread
        (the event loop calls this)."""
        index = self.model.definitions
        if index is None or not index.dirty or self._definitions_save_pending or self.loop_ref is None:
            return
        self._definitions_save_pending = True

        def start() -> None:
            self._definitions_save_pending = False
            self.loop_ref.run_in_executor(None, self.save_definitions)

        self.loop_ref.call_later(DEFINITIONS_SAVE_DELAY_S, start)

    def save_definitions(self) -> None:
        index = self.model.definitions
        if index is None:
            return
        try:
            error = index.save()
        except Exception:
            log.exception("writing the definitions index failed")
            return
        if error:
            log.warning("%s", error)

    # ------------------------------------------------------------------ workspace index
    async def build_index(self) -> None:
        if not self.roots:
            return
        index = WorkspaceIndex()
        settings, _ = self.resolver.resolve(os.path.join(self.roots[0], "x.py"), self.settings)
        token = f"graphmend-index-{id(index)}"
        progress = bool(self._client("window.work_done_progress", False))
        loop = asyncio.get_running_loop()
        if progress:
            try:
                await self.work_done_progress.create_async(token)
                self.work_done_progress.begin(token, types.WorkDoneProgressBegin(
                    title="GraphMend: indexing the workspace", cancellable=True, percentage=0))
            except Exception:
                progress = False
        self._scan_cancelled = False
        fut = self.work_done_progress.tokens.get(token) if progress else None

        def report(done: int, total: int) -> None:
            if progress:
                loop.call_soon_threadsafe(self.work_done_progress.report, token, types.WorkDoneProgressReport(
                    message=f"{done}/{total} files", percentage=int(100 * done / max(total, 1))))

        def cancelled() -> bool:
            return self._scan_cancelled or (fut is not None and fut.cancelled())

        message = "done"
        try:
            n = await loop.run_in_executor(self.scan_pool, index.build, self.roots, settings, self.model,
                                           report, cancelled)
            self.index = index
            message = f"{n} files"
            log.info("indexed %d files under %s", n, ", ".join(self.roots))
            self.refresh()
        except Cancelled:
            message = "cancelled"
            log.info("workspace indexing cancelled; cross-file scope is limited to open files")
        except Exception:
            message = "failed"
            log.exception("workspace indexing failed")
        finally:
            if progress:
                self.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))

    def refresh(self) -> None:
        """Settings or the index changed: check every open document again (and ask a pulling
        client to pull)."""
        if not self.settings.enable:
            for uri in list(self.docs):
                self.diagnostics.forget(uri)
            return
        self.diagnostics.recheck_all()
        if self.probe.result is not None or self._probe_published:
            probe.publish_closed_files(self)
        if self.diagnostics.pull and self._client("workspace.diagnostics.refresh_support", False):
            self.workspace_diagnostic_refresh(None)

    def shutdown_pools(self) -> None:
        self.save_definitions()
        self._scan_cancelled = True
        if self.probe.cancel is not None:
            self.probe.cancel.set()  # kills the probe's process group
        self.probe_pool.shutdown(wait=False, cancel_futures=True)
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.large_pool.shutdown(wait=False, cancel_futures=True)
        self.fix_pool.shutdown(wait=False, cancel_futures=True)
        self.scan_pool.shutdown(wait=False, cancel_futures=True)


server = GraphMendServer()


# ---------------------------------------------------------------------- lifecycle


@server.feature(types.INITIALIZE)
def initialize(ls: GraphMendServer, params: types.InitializeParams) -> None:
    ls.loop_ref = asyncio.get_running_loop()
    ls.apply_settings(params.initialization_options)
    roots = [to_fs_path(f.uri) for f in (params.workspace_folders or []) if f.uri.startswith("file:")]
    if not roots and params.root_uri and params.root_uri.startswith("file:"):
        roots = [to_fs_path(params.root_uri)]
    ls.roots = [r for r in roots if r and os.path.isdir(r)]
    ls.model = Workspace(ls.roots)
    ls.pool.submit(ls.attach_definitions)  # before the first check, in its thread


@server.feature(types.INITIALIZED)
async def initialized(ls: GraphMendServer, params: types.InitializedParams) -> None:
    ls.initialized = True
    for m in ls._pending_messages:
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=m))
    ls._pending_messages = []
    log.info("GraphMend %s ready (position encoding %s, %s diagnostics)", __version__,
             ls.workspace.position_encoding, "pull" if ls.diagnostics.pull else "push")
    await pull_configuration(ls)
    if ls.settings.enable:
        asyncio.ensure_future(ls.build_index())


async def pull_configuration(ls: GraphMendServer) -> None:
    if not ls._client("workspace.configuration", False):
        return
    try:
        got = await ls.workspace_configuration_async(types.ConfigurationParams(
            items=[types.ConfigurationItem(section="graphmend")]))
    except Exception as e:
        log.warning("workspace/configuration failed: %s", e)
        return
    if got and isinstance(got[0], dict) and got[0]:
        ls.apply_settings(got[0], ls.settings)


@server.feature(types.SHUTDOWN)
def shutdown(ls: GraphMendServer, *args) -> None:
    ls.shutdown_pools()


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: GraphMendServer, params: types.DidChangeConfigurationParams) -> None:
    settings = params.settings
    if isinstance(settings, dict) and isinstance(settings.get("graphmend"), dict):
        ls.apply_settings(settings["graphmend"], ls.settings)
    else:
        await pull_configuration(ls)
    ls.refresh()


# ---------------------------------------------------------------------- documents


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: GraphMendServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.open(params.text_document)
    if ls.settings.enable:
        ls.diagnostics.schedule(params.text_document.uri, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: GraphMendServer, params: types.DidChangeTextDocumentParams) -> None:
    doc = ls.docs.get(params.text_document.uri)
    if doc is None:
        log.warning("rejected a change to %s: the document is not open", params.text_document.uri)
        return
    for change in params.content_changes:
        doc.apply_change(change, ls.codec)
    version = params.text_document.version
    if doc.version is not None and version <= doc.version:  # applied all the same: the editor has it
        log.warning("%s: version %d after %d (versions must increase)", doc.uri, version, doc.version)
    doc.version = version
    if ls.settings.enable:
        ls.diagnostics.schedule(doc.uri, ls.settings.debounce_ms / 1000)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.TextDocumentSaveRegistrationOptions(include_text=False))
async def did_save(ls: GraphMendServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    if uri not in ls.docs or not ls.settings.enable:
        return
    ls.diagnostics.schedule(uri, 0)
    checked = await ls.diagnostics.current(uri)
    index = ls.index
    if checked is not None and index is not None and checked.scope is not None:
        path = ls.docs[uri].path
        changed = index.update(path, checked.scope, checked.symbols, checked.seeded,
                               calls_into(path, checked.facts, ls.model),
                               checked.state.walked if checked.state is not None else None)
        callers = index.callers_of(path)
        # what their calls reveal in this file was found in its old text; and the files whose
        # functions this file's entries now reach were not walked for what their calls reveal
        callers += [p for p in index.unwalked() if p not in callers and p != path]
        if callers:
            settings, _ = ls.engine_settings(path)
            await asyncio.get_running_loop().run_in_executor(
                ls.scan_pool, index.reanalyse, callers, settings, ls.model)
            changed = True
        if changed:
            ls.refresh()  # what other files reach, or reveal in the open ones, may have changed


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: GraphMendServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.docs.pop(params.text_document.uri, None)
    ls.diagnostics.forget(params.text_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
def did_open_notebook(ls: GraphMendServer, params: types.DidOpenNotebookDocumentParams) -> None:
    ls._closed_notebooks.discard(params.notebook_document.uri)
    nb.did_open(ls, params)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
def did_change_notebook(ls: GraphMendServer, params: types.DidChangeNotebookDocumentParams) -> None:
    nb.did_change(ls, params)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
def did_save_notebook(ls: GraphMendServer, params: types.DidSaveNotebookDocumentParams) -> None:
    nb.did_save(ls, params)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def did_close_notebook(ls: GraphMendServer, params: types.DidCloseNotebookDocumentParams) -> None:
    ls._closed_notebooks.add(params.notebook_document.uri)
    nb.did_close(ls, params)


@server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC,
                types.DiagnosticOptions(identifier="graphmend", inter_file_dependencies=True,
                                        workspace_diagnostics=False))
async def document_diagnostic(ls: GraphMendServer, params: types.DocumentDiagnosticParams):
    if not ls.settings.enable or params.text_document.uri in ls.cell_owner:
        return types.RelatedFullDocumentDiagnosticReport(items=[])  # cells: pushed (after_check)
    return await ls.diagnostics.report(params)


@server.feature(types.TEXT_DOCUMENT_WILL_SAVE_WAIT_UNTIL)
async def will_save_wait_until(ls: GraphMendServer, params: types.WillSaveTextDocumentParams):
    try:
        return await actions.will_save_edits(ls, params.text_document.uri)
    except Exception:
        log.exception("fix on save failed")
        return []


# ---------------------------------------------------------------------- actions, hover, lens


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
    code_action_kinds=[types.CodeActionKind.QuickFix, actions.FIX_ALL_KIND], resolve_provider=True))
async def code_action(ls: GraphMendServer, params: types.CodeActionParams):
    if not ls.settings.enable:
        return []
    if nb.notebook_of(ls, params.text_document.uri) is not None:
        return await nb.code_actions(ls, params)
    return await actions.code_actions(ls, params)


@server.feature(types.CODE_ACTION_RESOLVE)
async def code_action_resolve(ls: GraphMendServer, params: types.CodeAction) -> types.CodeAction:
    return nb.resolved(ls, await actions.resolve(ls, params))


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def on_hover(ls: GraphMendServer, params: types.HoverParams):
    if not ls.settings.enable:
        return None
    if nb.notebook_of(ls, params.text_document.uri) is not None:
        return await nb.hover(ls, params)
    return await hover.hover(ls, params)


@server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
async def code_lens(ls: GraphMendServer, params: types.CodeLensParams):
    if not ls.settings.enable or params.text_document.uri in ls.cell_owner:
        return []
    return await lens.code_lenses(ls, params)


# ---------------------------------------------------------------------- commands


def _target(args: tuple) -> tuple[Optional[str], Optional[int]]:
    if not args:
        return None, None
    a = args[0]
    if isinstance(a, str):
        return a, None
    if isinstance(a, dict):  # as the client sends them back: anything
        uri, version = a.get("uri"), a.get("version")
        return (uri if isinstance(uri, str) else None,
                version if isinstance(version, int) and not isinstance(version, bool) else None)
    return None, None


@server.command(lens.FIX_ALL_COMMAND)
async def fix_all_command(ls: GraphMendServer, *args) -> dict:
    """Mend all graph breaks of a document: {"uri", "version"} or a URI. Applies the edit
    through `workspace/applyEdit` (the server itself never writes files)."""
    uri, version = _target(args)
    if uri is not None and uri in ls.cell_owner:  # a notebook cell: mend the whole notebook
        uri, version = ls.cell_owner[uri], None
    if uri is None or uri not in ls.docs:
        return {"applied": False, "reason": "no open document given"}
    if version is not None and ls.docs[uri].version != version:
        return {"applied": False, "reason": "the document changed; run the command again"}
    if actions.too_large(ls.docs[uri].text):
        return {"applied": False, "reason": actions.TOO_LARGE}
    doc = ls.docs[uri]
    edit = await (nb.fix_all(ls, doc) if isinstance(doc, nb.NotebookDoc) else actions.fix_all_edit(ls, uri))
    if edit is None:
        return {"applied": False, "reason": "nothing to mend"}
    res = await ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(
        edit=edit, label="GraphMend: mend all graph breaks"))
    return {"applied": bool(res and res.applied),
            **({"reason": res.failure_reason} if res and not res.applied and res.failure_reason else {})}


@server.command(probe.RUN_COMMAND)
async def run_probe_command(ls: GraphMendServer, *args) -> dict:
    """Run the probe entry under Dynamo (opt-in, trusted workspaces only)."""
    return await probe.run(ls)


@server.command(probe.VERIFY_COMMAND)
async def verify_command(ls: GraphMendServer, *args) -> dict:
    """Run the entry original and mended (in memory) and compare graphs, outputs, messages, time."""
    return await probe.verify(ls)


@server.command(probe.IMPORT_LOG_COMMAND)
async def import_log_command(ls: GraphMendServer, *args) -> dict:
    """Show Dynamo's breaks from a TORCH_LOGS=graph_breaks log or a TORCH_TRACE directory."""
    a = probe.as_args(args)
    path = a.get("path") if isinstance(a, dict) else a
    return await probe.import_log(ls, path if isinstance(path, str) else None)


@server.command(SHOW_LOG_COMMAND)
def show_log_command(ls: GraphMendServer, *args) -> str:
    """The server's recent log (also streamed to the client through window/logMessage)."""
    return "\n".join(ls.log_handler.recent)


# ---------------------------------------------------------------------- entry point


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="graphmend serve", description="The GraphMend language server.")
    parser.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    parser.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP socket (for debugging)")
    parser.add_argument("--log-level", choices=list(LOG_LEVELS), default=None,
                        help="also log to stderr at this level")
    args = parser.parse_args(argv)
    root = logging.getLogger("graphmend")
    root.setLevel(logging.DEBUG)
    root.addHandler(server.log_handler)
    server.log_handler.setLevel(logging.INFO)
    if args.log_level:
        h = logging.StreamHandler()  # stderr: stdout carries the protocol
        h.setLevel(LOG_LEVELS[args.log_level])
        root.addHandler(h)
    server.protocol.warm_up()
    # The modules and protocol tables loaded so far live as long as the server: move them out
    # of the collector's way so that collections walk only what checks allocate.
    gc.collect()
    gc.freeze()
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not port.isdigit():
            parser.error("--tcp expects HOST:PORT")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
    return 0
