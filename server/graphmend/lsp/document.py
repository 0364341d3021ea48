"""An open document: its text, version, and the conversion between the engine's positions
(1-based lines, code-point columns) and LSP positions (0-based lines, columns in the
negotiated encoding: UTF-16 by default, UTF-8 or UTF-32 when the client prefers).

Lines are split at \\n, \\r\\n and \\r only, as both Python and the LSP specification count
them; pygls' own TextDocument uses str.splitlines, which also splits at \\x0c, \\u2028 and
friends and would shift every range below such a character.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from graphmend.findings import Pos, Span
from graphmend.textlines import split_lines


@dataclass
class Document:
    uri: str
    path: str  # a filesystem path for file: URIs, else the URI itself
    text: str
    version: Optional[int] = None
    _lines: Optional[list[str]] = field(default=None, repr=False)

    @property
    def lines(self) -> list[str]:
        """The lines with their endings (a final empty line when the text ends with a newline)."""
        if self._lines is None:
            lines = split_lines(self.text, keepends=True)
            if not lines or lines[-1].endswith(("\n", "\r")):
                lines.append("")
            self._lines = lines
        return self._lines

    def set_text(self, text: str, version: Optional[int]) -> None:
        self.text = text
        self.version = version
        self._lines = None

    # ------------------------------------------------------------------ client -> engine
    def offset(self, pos: types.Position, codec: PositionCodec) -> int:
        """Character offset in `text` of an LSP position (clamped to the document)."""
        lines = self.lines
        if pos.line >= len(lines):
            return len(self.text)
        line = lines[pos.line]
        body = line.rstrip("\r\n")
        col = _codepoints(body, pos.character, codec)
        return sum(len(s) for s in lines[: pos.line]) + col

    def apply_change(self, change, codec: PositionCodec) -> None:
        if isinstance(change, types.TextDocumentContentChangePartial):
            a = self.offset(change.range.start, codec)
            b = self.offset(change.range.end, codec)
            if b < a:
                a, b = b, a
            self.text = self.text[:a] + change.text + self.text[b:]
        else:
            self.text = change.text
        self._lines = None

    def engine_pos(self, pos: types.Position, codec: PositionCodec) -> Pos:
        lines = self.lines
        if pos.line >= len(lines):
            return Pos(len(lines), len(lines[-1].rstrip("\r\n")))
        return Pos(pos.line + 1, _codepoints(lines[pos.line].rstrip("\r\n"), pos.character, codec))

    # ------------------------------------------------------------------ engine -> client
    def position(self, p: Pos, codec: PositionCodec) -> types.Position:
        lines = self.lines
        i = p.line - 1
        if i >= len(lines):
            return types.Position(line=len(lines) - 1, character=codec.client_num_units(
                lines[-1].rstrip("\r\n")))
        if i < 0:
            return types.Position(line=0, character=0)
        body = lines[i].rstrip("\r\n")
        return types.Position(line=i, character=codec.client_num_units(body[: max(p.col, 0)]))

    def range(self, span: Span, codec: PositionCodec) -> types.Range:
        return types.Range(start=self.position(span.start, codec), end=self.position(span.end, codec))


def _codepoints(line: str, units: int, codec: PositionCodec) -> int:
    """Code-point column of a column counted in the client's units (clamped to the line)."""
    if line.isascii():
        return min(units, len(line))
    seen = 0
    for i, ch in enumerate(line):
        if seen >= units:
            return i
        seen += codec.impl.code_units_for_char(ch)
    return len(line)
