"""Analyse one open document (run in a worker thread, never on the event loop) and keep what
the code actions, hover and lenses need: the findings with their analysis sites, the file's
Symbols and scope, for exactly the text and version they were computed from."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace
from typing import Any, Optional

from graphmend.analysis.engine import FileAnalysis, LineIndex, findings_in_scope, reached_in_file, summarize
from graphmend.analysis.scope import FileScope
from graphmend.analysis.symbols import Symbols
from graphmend.analysis.workspace import Workspace
from graphmend.config import Settings
from graphmend.findings import Finding, Pos, Span
from graphmend.scan import shown
from graphmend.textlines import split_lines


# Documents over this many characters (about 12,000 lines of modeling code) are checked in their
# own thread, and "fix all" is not run on them in the editor (see actions.too_large).
LARGE_TEXT = 500_000


@dataclass
class Checked:
    """The analysis of one version of a document."""

    version: Optional[int]
    text: str
    settings: Settings
    findings: list[Finding] = field(default_factory=list)
    symbols: Optional[Symbols] = None
    scope: Optional[FileScope] = None
    syntax_error: Optional[Finding] = None
    # findings of the last version that parsed, moved to where their lines are now
    carried: list[Finding] = field(default_factory=list)
    _lines: Optional[LineIndex] = field(default=None, repr=False)
    # the fix-all edits of this version (a future), computed once for every request that wants them
    fix_all: Any = field(default=None, repr=False, compare=False)

    @property
    def line_index(self) -> LineIndex:
        if self._lines is None:
            self._lines = LineIndex(self.text)
        return self._lines

    def release(self) -> None:
        """Break the FunctionInfo.cls <-> ClassInfo.methods cycles of a replaced version, so
        reference counting frees its trees at once. Left to the cyclic GC, old versions piled
        up and were collected in 180-300 ms pauses about every twelfth check (measured on
        modeling_t5.py: edit->diagnostics p95 254 ms after the debounce, 142 ms with this).
        Only for a version nothing uses any more (handlers run on the event loop and take the
        current version, so a replaced one is never read again)."""
        if self.symbols is not None:
            for fi in self.symbols.all_functions:
                fi.cls = None
        self.symbols = None

    @property
    def shown(self) -> list[Finding]:
        """What becomes diagnostics: the syntax error and what is carried, or the findings."""
        if self.syntax_error is not None:
            return [self.syntax_error, *self.carried]
        return self.findings


def check(text: str, path: str, version: Optional[int], settings: Settings, workspace: Workspace,
          external: dict[str, str], previous: Optional[Checked] = None) -> Checked:
    """Findings of `text`; `external` are the functions of this file that entries in other
    workspace files reach. On a syntax error, `previous` findings are carried over."""
    reached: dict[str, str] = {}
    summary = summarize(text, path, settings, workspace, select=reached_in_file(external, reached))
    out = Checked(version, text, settings, symbols=summary.symbols, scope=summary.scope)
    if summary.syntax_error is not None:
        out.syntax_error = summary.syntax_error
        if previous is not None:
            base = previous.findings if previous.syntax_error is None else previous.carried
            prev_text = previous.text
            out.carried = carry_over(base, prev_text, text)
        return out
    fa: FileAnalysis = findings_in_scope(summary, reached, settings)
    out.findings = [f for f in fa.findings if shown(f.code, settings)]
    return out


def carry_over(findings: list[Finding], old: str, new: str) -> list[Finding]:
    """Move findings of `old` to the same lines in `new`; drop those whose lines changed.

    The fix data is dropped (`site` None, no applicability): the file does not parse, so nothing
    may be rewritten until it does."""
    if not findings:
        return []
    a, b = split_lines(old), split_lines(new)
    # Lines before and after the edited region map to themselves; only the region between is
    # diffed (the whole file took 9 s in a 50,000-line file, at every keystroke that left it
    # unparsable).
    lo, n = 0, min(len(a), len(b))
    while lo < n and a[lo] == b[lo]:
        lo += 1
    hi = 0
    while hi < n - lo and a[-1 - hi] == b[-1 - hi]:
        hi += 1
    mapping: dict[int, int] = {i: i for i in range(1, lo + 1)}
    mapping.update((len(a) - k, len(b) - k) for k in range(hi))
    for blk in difflib.SequenceMatcher(None, a[lo:len(a) - hi], b[lo:len(b) - hi],
                                       autojunk=False).get_matching_blocks():
        for k in range(blk.size):
            mapping[lo + blk.a + k + 1] = lo + blk.b + k + 1
    out = []
    for f in findings:
        s, e = mapping.get(f.span.start.line), mapping.get(f.span.end.line)
        if s is None or e is None or e - s != f.span.end.line - f.span.start.line:
            continue
        out.append(replace(f, span=Span(Pos(s, f.span.start.col), Pos(e, f.span.end.col)), site=None))
    return out
