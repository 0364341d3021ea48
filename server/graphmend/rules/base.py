"""What every rule module shares: the judgement it returns, examples, source helpers."""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Optional

from graphmend.analysis.astwalk import walk as fast_walk  # ast.walk's nodes and order, without contexts/operators
from graphmend.analysis.detect import Site
from graphmend.analysis.symbols import Symbols
from graphmend.findings import Applicability
from graphmend.textlines import split_lines


@dataclass
class Verdict:
    """A rule's judgement of one site: can it be mended, how safely, and if not, why."""

    applicability: Applicability
    title: Optional[str] = None
    reason: Optional[str] = None  # why declined, or why only unsafe

    @staticmethod
    def decline(reason: str) -> "Verdict":
        return Verdict(Applicability.NONE, None, reason)


@dataclass
class Example:
    """A documented, tested example: `source` is flagged (codes) and mended to `fixed`
    (None: the mend declines); `unsafe` says the fix needs --unsafe-fixes."""

    name: str
    source: str
    codes: list[str] = field(default_factory=list)
    fixed: Optional[str] = None
    unsafe: bool = False


@dataclass
class Context:
    text: str
    symbols: Symbols
    # the file's engine.LineIndex, whose lines (split once per file) are these lines: a Context
    # is made per site judged
    index: Optional[object] = None

    @functools.cached_property
    def lines(self) -> list[str]:
        """The text's lines with their endings, split once (ast.get_source_segment re-splits
        the whole file on every call: O(file) per quoted argument)."""
        if self.index is not None and self.text:
            return self.index.lines
        return split_lines(self.text, keepends=True)

    def segment(self, node: ast.AST) -> Optional[str]:
        """ast.get_source_segment over the cached lines."""
        try:
            if node.end_lineno is None or node.end_col_offset is None:
                return None
            first, last = node.lineno - 1, node.end_lineno - 1
            col, end_col = node.col_offset, node.end_col_offset
        except AttributeError:
            return None
        lines = self.lines
        if not 0 <= first <= last < len(lines):
            return None
        if first == last:
            return lines[first].encode()[col:end_col].decode()
        return (lines[first].encode()[col:].decode() + "".join(lines[first + 1:last])
                + lines[last].encode()[:end_col].decode())

    def src(self, node: ast.AST) -> str:
        return self.segment(node) or ast.unparse(node)

    def quoted(self, s: str) -> str:
        """`s` (plain text without quotes or backslashes) as a literal in the file's quote style."""
        return f"{file_quote(self.text)}{s}{file_quote(self.text)}"

    def torch_name(self) -> Optional[str]:
        for local, target in self.symbols.imports.items():
            if target == "torch":
                return local
        return None

    def indent_of(self, node: ast.AST) -> str:
        line = self.lines[node.lineno - 1].rstrip("\r\n")
        return line[: len(line) - len(line.lstrip())]

    def owns_lines(self, node: ast.stmt) -> bool:
        """Whether the statement is alone on its lines (no `a; b`, no `if c: stmt` header),
        so that a rewrite may replace those lines whole."""
        lines = self.lines
        first, last = lines[node.lineno - 1].rstrip("\r\n"), lines[node.end_lineno - 1].rstrip("\r\n")
        before = first.encode("utf-8")[: node.col_offset].decode("utf-8", "replace")
        after = last.encode("utf-8")[node.end_col_offset:].decode("utf-8", "replace").strip()
        plain_indent = before.strip(" \t") == ""  # a form feed in the indentation: leave it be
        return plain_indent and (not after or after.startswith("#"))

    def src_lines(self, node: ast.stmt) -> list[str]:
        """The full source lines of a statement (indentation included)."""
        return [ln.rstrip("\r\n") for ln in self.lines[node.lineno - 1: node.end_lineno]]

    def comments_in(self, node: ast.AST) -> list[str]:
        """Comments written inside the lines of `node` (kept above a rewritten statement)."""
        lines = self.lines[node.lineno - 1: node.end_lineno]
        out = []
        try:
            for tok in tokenize.generate_tokens(io.StringIO("".join(lines)).readline):
                if tok.type == tokenize.COMMENT:
                    out.append(tok.string)
        except (tokenize.TokenError, IndentationError, SyntaxError):
            pass
        return out


_QUOTE_RE = re.compile(r"""(?:^|[(\[{,=:])[ \t]*[rRbBuUfF]{0,2}(['"])(?!\1\1)""", re.MULTILINE)


@functools.lru_cache(maxsize=8)
def file_quote(text: str) -> str:
    """The quote most of the file's string literals use (double when tied, as black writes)."""
    single = double = 0
    for m in _QUOTE_RE.finditer(text):
        if m.group(1) == "'":
            single += 1
        else:
            double += 1
    return "'" if single > double else '"'


def uses_after(site: Site, names: set[str]) -> set[str]:
    """Which of `names` are read in the function after the site's statement."""
    end = site.node.end_lineno or site.node.lineno
    out = set()
    for n in fast_walk(site.func.node):
        if isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load) \
                and n.lineno > end:
            out.add(n.id)
    return out



# What a detection that reads a whole function may raise on code it does not understand.
UNREADABLE = (AttributeError, IndexError, KeyError, TypeError, ValueError, RecursionError)


def claim_safely(claim, sites: list, fi, symbols) -> list:
    """`claim(sites, fi, symbols)`, or the sites as they were when it cannot read the code: a
    rule that takes over other rules' sites never loses a function's other findings."""
    try:
        return claim(sites, fi, symbols)
    except UNREADABLE:
        return sites
