"""The protocol floor of benchmarks/editor.py: a pygls server that does nothing on `didOpen` but
`ast.parse` the text and publish an empty diagnostics list. What `graphmend serve` cannot go below
for a text it has never analysed: the message received and decoded, the parse, a publish sent.

    python benchmarks/parse_server.py   (over stdio; editor.py starts it)
"""

from __future__ import annotations

import ast

from lsprotocol import types as T
from pygls.lsp.server import LanguageServer

server = LanguageServer("parse-floor", "1")


@server.feature(T.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: LanguageServer, params: T.DidOpenTextDocumentParams) -> None:
    doc = params.text_document
    try:
        ast.parse(doc.text)
    except SyntaxError:
        pass
    ls.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=doc.uri, diagnostics=[], version=doc.version))


if __name__ == "__main__":
    server.start_io()
