"""An open document: its text, version, and the conversion between the engine's positions
(1-based lines, code-point columns) and LSP positions (0-based lines, columns in the
negotiated encoding: UTF-16 by default, UTF-8 or UTF-32 when the client prefers).

Lines are split at \\n, \\r\\n and \\r only, as both Python and the LSP specification count
them; pygls' own TextDocument uses str.splitlines, which also splits at \\x0c, \\u2028 and
friends and would shift every range below such a character.
"""

from __future__ import annotations

from itertools import islice
from typing import Optional

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from graphmend.findings import Pos, Span
from graphmend.textlines import split_lines


class Document:
    """The text of an open document, kept as its lines while it is being edited: a change
    re-splits only the lines it touches, and the text is joined again when it is read (splitting
    and copying a 50,000-line text at every keystroke took 30 ms, more than the 10 ms between
    the keystrokes of a burst)."""

    def __init__(self, uri: str, path: str, text: str, version: Optional[int] = None) -> None:
        self.uri = uri
        self.path = path  # a filesystem path for file: URIs, else the URI itself
        self.version = version
        self._text: Optional[str] = text
        self._lines: Optional[list[str]] = None

    def __repr__(self) -> str:
        return f"Document({self.uri!r}, version={self.version!r})"

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = "".join(self._lines or ())
        return self._text

    @text.setter
    def text(self, value: str) -> None:
        self._text, self._lines = value, None

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

    # ------------------------------------------------------------------ client -> engine
    def offset(self, pos: types.Position, codec: PositionCodec) -> int:
        """Character offset in `text` of an LSP position (clamped to the document)."""
        lines = self.lines
        if pos.line >= len(lines):
            return len(self.text)
        body = lines[pos.line].rstrip("\r\n")
        return sum(map(len, islice(lines, pos.line))) + _codepoints(body, pos.character, codec)

    def apply_change(self, change, codec: PositionCodec) -> None:
        """Apply a change as VS Code does: a position past the end of a line or of the document
        means that end, one inside a character the position before it."""
        if not isinstance(change, types.TextDocumentContentChangePartial):
            self.text = change.text
            return
        lines = self.lines

        def clamp(pos: types.Position) -> tuple[int, int]:  # (line index, code-point column)
            if pos.line >= len(lines):
                return len(lines) - 1, len(lines[-1])  # the end (the last line has no line break)
            return pos.line, _codepoints(lines[pos.line].rstrip("\r\n"), pos.character, codec)

        (i, ca), (j, cb) = clamp(change.range.start), clamp(change.range.end)
        if (j, cb) < (i, ca):
            (i, ca), (j, cb) = (j, cb), (i, ca)
        # The lines i..j are replaced; the line before joins them when it ends with \r (a \n
        # typed after it makes one line break of the two).
        k = i - 1 if i > 0 and lines[i - 1].endswith("\r") else i
        old = "".join(lines[k:j + 1])
        a = sum(map(len, lines[k:i])) + ca
        b = sum(map(len, lines[k:j])) + cb
        region = split_lines(old[:a] + change.text + old[b:], keepends=True)
        if j == len(lines) - 1 and (not region or region[-1].endswith(("\n", "\r"))):
            region.append("")  # the last line: empty after a final line break
        lines[k:j + 1] = region
        self._text = None

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
    """Code-point column of a column counted in the client's units (clamped to the line). A
    column inside a character (between the halves of a UTF-16 surrogate pair, inside a UTF-8
    sequence) means the position before it, as VS Code validates positions; rounding up made
    an edit there land one character later in the server's text than in the editor's."""
    if line.isascii():
        return min(units, len(line))
    seen = 0
    for i, ch in enumerate(line):
        seen += codec.impl.code_units_for_char(ch)
        if seen > units:
            return i
    return len(line)
