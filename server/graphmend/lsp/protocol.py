"""pygls' JSON-RPC protocol, made to hold up against what a client may send
(benchmarks/stress_server.py drives these cases):

- a request whose params do not fit its method (wrong types, a negative position, params
  missing or null) is answered with an InvalidParams error; pygls logged it and sent nothing, so
  the client waited forever;
- a message that is not JSON-RPC 2.0 (an array, a number, an object without `jsonrpc`, another
  version), a second `initialize`, a request after `shutdown`: rejected (an InvalidRequest error
  when it carries an id), never a crash in pygls' reader;
- everything rejected is logged through the server's log (window/logMessage, "rejected ..."),
  not shown as "Error in server" pop-ups, one per bad message;
- pygls kept the future of every notification it handled (didChange, didSave, ...) in its table
  of requests in flight, forever (about 1.9 KB a keystroke): a finished one is dropped now;
- pygls' own copy of each open document is not kept: the server has its own
  (`graphmend.lsp.document`); pygls' doubled the memory of a huge file, re-split it at every
  change, and raised KeyError (a pop-up) for a change to a document it did not know, which then
  kept the server's own handler from running.
"""

from __future__ import annotations

import collections
import json
import logging
from typing import Any

from cattrs import transform_error
from cattrs.errors import BaseValidationError
from lsprotocol import types
from pygls.exceptions import (
    FeatureNotificationError,
    FeatureRequestError,
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcMethodNotFound,
)
from pygls.protocol.language_server import LanguageServerProtocol, lsp_method

log = logging.getLogger("graphmend.lsp")
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


class Rejected:
    """A message pygls could not structure (its params do not fit its method)."""

    def __init__(self, data: dict, error: BaseException) -> None:
        self.data, self.error = data, error


def excerpt(obj: Any, limit: int = 200) -> str:
    try:
        text = json.dumps(obj, default=repr)
    except Exception:
        text = repr(obj)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def _valid_id(msg_id: Any) -> bool:
    return isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool)


def _reason(error: BaseException) -> str:
    cause = error.__cause__ or error
    if isinstance(cause, BaseValidationError):  # say which fields, not "1 sub-exception"
        try:
            return "; ".join(transform_error(cause, path="message")[:3])[:300]
        except Exception:
            pass
    text = str(cause).splitlines()[0] if str(cause) else type(cause).__name__
    return text[:300]


class GraphMendProtocol(LanguageServerProtocol):

    def __init__(self, server, converter) -> None:
        super().__init__(server, converter)
        self._finished: collections.deque = collections.deque()

    # ------------------------------------------------------------------ reading
    def structure_message(self, data: Any):
        if not isinstance(data, dict) or "jsonrpc" not in data:
            return data
        try:
            return super().structure_message(data)
        except Exception as error:  # pygls raised out of json.loads: answer what can be answered
            return Rejected(data, error)

    def handle_message(self, message: Any) -> None:
        if isinstance(message, Rejected):
            data = message.data
            if "method" not in data and (future := self._request_futures.pop(data.get("id"), None)) is not None:
                # the client's answer to a request of the server: fail it, nothing waits forever
                log.warning("rejected the response to request %s: %s", data.get("id"), _reason(message.error))
                if not future.done():
                    future.set_exception(JsonRpcInvalidParams(f"malformed response: {_reason(message.error)}"))
                return
            self._rejected(data, f"invalid params: {_reason(message.error)}", INVALID_PARAMS)
            return
        if getattr(message, "jsonrpc", None) is None:
            log.warning("rejected a message that is not JSON-RPC: %s", excerpt(message))
            return
        method = getattr(message, "method", None)
        data = {"id": getattr(message, "id", None), "method": method}
        if message.jsonrpc != self.VERSION:
            self._rejected({**data, "jsonrpc": message.jsonrpc}, f"JSON-RPC version {message.jsonrpc!r}, not 2.0",
                           INVALID_REQUEST, has_id=hasattr(message, "id"))
            return
        if method == types.INITIALIZE and self._workspace is not None:
            self._rejected(data, "initialize may be sent only once", INVALID_REQUEST)
            return
        if self._shutdown and method is not None and method != types.EXIT and hasattr(message, "id"):
            self._rejected(data, "the server is shutting down", INVALID_REQUEST)
            return
        if method is not None and not hasattr(message, "id") and not method.startswith("$/") \
                and method not in self.fm.builtin_features and method not in self.fm.features:
            log.warning("rejected notification %s: unknown method", method)
            return
        super().handle_message(message)

    def _rejected(self, data: dict, reason: str, code: int, has_id: bool = True) -> None:
        method, msg_id = data.get("method"), data.get("id")
        is_request = has_id and method is not None and data.get("id") is not None
        what = f"request {method} (id {msg_id})" if is_request else \
            f"notification {method}" if method is not None else f"message {excerpt(data)}"
        log.warning("rejected %s: %s", what, reason)
        if method == types.TEXT_DOCUMENT_DID_CHANGE:
            log.warning("a change was lost: the document may differ from the editor's until it is reopened")
        if is_request and _valid_id(msg_id):
            self._send_response(msg_id, error=types.ResponseError(code=code, message=f"GraphMend: {reason}"))

    # ------------------------------------------------------------------ start-up
    def warm_up(self) -> None:
        """Build cattrs' converters for the messages of opening a file before the first one
        arrives: the structure hooks of didOpen/didChange/didSave/didClose and the unstructure
        hooks of a publish with every Diagnostic field set. Built on first use, they cost a
        fresh server 8-12 ms inside its first didOpen -> diagnostics (measured on
        modeling_t5.py: 26 ms with them built there, most of it this); here they cost the same
        once, at start-up, before `initialize` is answered."""
        pos = {"line": 0, "character": 0}
        rng = {"start": pos, "end": pos}
        doc = {"uri": "file:///warm-up.py", "version": 1}
        for method, params in (
                (types.TEXT_DOCUMENT_DID_OPEN, {"textDocument": {**doc, "languageId": "python", "text": ""}}),
                (types.TEXT_DOCUMENT_DID_CHANGE, {"textDocument": doc, "contentChanges": [
                    {"range": rng, "text": ""}, {"text": ""}]}),
                (types.TEXT_DOCUMENT_DID_SAVE, {"textDocument": {"uri": doc["uri"]}}),
                (types.TEXT_DOCUMENT_DID_CLOSE, {"textDocument": {"uri": doc["uri"]}})):
            self.structure_message({"jsonrpc": self.VERSION, "method": method, "params": params})
        r = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))
        diag = types.Diagnostic(
            range=r, message="", severity=types.DiagnosticSeverity.Warning, code="GM000",
            code_description=types.CodeDescription(href="https://example.invalid"), source="graphmend",
            related_information=[types.DiagnosticRelatedInformation(
                location=types.Location(uri=doc["uri"], range=r), message="")],
            data={"fix": None})
        note = (self.get_message_type(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS) or types.PublishDiagnosticsNotification)(
            method=types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, jsonrpc=self.VERSION,
            params=types.PublishDiagnosticsParams(uri=doc["uri"], diagnostics=[diag], version=1))
        json.dumps(note, default=self._serialize_message)

    # ------------------------------------------------------------------ bookkeeping
    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        # Futures that finished are dropped here, not in their done callbacks: those can run
        # while pygls iterates the table (cancelling everything at shutdown) or in a thread.
        while self._finished:
            key, done = self._finished.popleft()
            if self._request_futures.get(key) is done:
                del self._request_futures[key]
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        future = self._request_futures.get(msg_id)
        if future is not None:  # a notification's stays there otherwise (a request's is popped)
            future.add_done_callback(lambda done, key=msg_id: self._finished.append((key, done)))

    # ------------------------------------------------------------------ documents
    # The server keeps the text itself (graphmend.lsp.document); these only call its handlers.
    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None


def report_server_error(error: Exception, source: Any) -> None:
    """pygls' report of an error outside a request's own response: into the log, not a pop-up."""
    if source is JsonRpcInternalError:
        return  # sending failed: pygls logged it (to stderr); a log message would be sent the same way
    if source is FeatureRequestError:  # the response carries the error; pygls logged the trace to stderr
        if isinstance(error, (JsonRpcMethodNotFound, JsonRpcInvalidParams, JsonRpcInvalidRequest)):
            log.warning("rejected a request: %s", error)
        else:
            log.error("a request failed: %s", error)
        return
    if source is FeatureNotificationError:
        log.error("handling a notification failed: %s", error)
        return
    if source is JsonRpcException or isinstance(error, (ValueError, RecursionError)):
        log.warning("rejected a message that could not be read: %s: %s", type(error).__name__, _reason(error))
        return
    log.error("%s: %s", getattr(source, "__name__", source), error)
