"""Analyse one open document (run in a worker thread, never on the event loop) and keep what
the code actions, hover and lenses need: the findings with their analysis sites, the file's
Symbols and scope, for exactly the text and version they were computed from."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Optional, Sequence

from graphmend.analysis import incremental
from graphmend.analysis.engine import (FileAnalysis, LineIndex, add_in_scope, findings_in_scope, reached_in_file,
                                       summarize)
from graphmend.analysis.scope import FileScope
from graphmend.analysis.symbols import Symbols
from graphmend.analysis.workspace import Workspace
from graphmend.config import Settings
from graphmend.findings import Finding, Pos, Span, carry_over  # noqa: F401 (carry_over: tests import it here)
from graphmend.scan import shown


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
    # what the check of the next version reuses: this version's analysis, or the last version's
    # that parsed when this one does not
    state: Optional[incremental.State] = field(default=None, repr=False, compare=False)
    # the functions walked again by an incremental check; None: a full check
    rewalked: Optional[set[str]] = field(default=None, repr=False, compare=False)
    # what this file's calls reveal in its own and other files' functions (callers.Seeded), for
    # the workspace index when the file is saved
    seeded: list = field(default_factory=list, repr=False, compare=False)
    facts: dict = field(default_factory=dict, repr=False, compare=False)  # its walks' CallFacts

    @property
    def line_index(self) -> LineIndex:
        if self._lines is None:
            self._lines = LineIndex(self.text)
        return self._lines

    def release(self, successor: Optional["Checked"] = None) -> None:
        """Break the FunctionInfo.cls <-> ClassInfo.methods cycles of a replaced version, so
        reference counting frees its trees at once. Left to the cyclic GC, old versions piled
        up and were collected in 180-300 ms pauses about every twelfth check (measured on
        modeling_t5.py: edit->diagnostics p95 254 ms after the debounce, 142 ms with this).
        Only for a version nothing uses any more (handlers run on the event loop and take the
        current version, so a replaced one is never read again). What an incremental
        `successor` shares with this version is kept."""
        kept = None if successor is None else \
            successor.state.symbols if successor.state is not None else successor.symbols
        keep = {id(fi) for fi in kept.all_functions} if kept is not None else ()
        own = (self.symbols, self.state.symbols if self.state is not None else None)
        for sym in {id(s): s for s in own if s is not None and s is not kept}.values():
            for fi in sym.all_functions:
                if id(fi) not in keep:
                    fi.cls = None
        self.symbols = None
        self.state = None

    @property
    def shown(self) -> list[Finding]:
        """What becomes diagnostics: the syntax error and what is carried, or the findings."""
        if self.syntax_error is not None:
            return [self.syntax_error, *self.carried]
        return self.findings


def check(text: str, path: str, version: Optional[int], settings: Settings, workspace: Workspace,
          external: dict[str, str], previous: Optional[Checked] = None,
          foreign: Sequence[tuple[str, Finding]] = ()) -> Checked:
    """Findings of `text`; `external` are the functions of this file that entries in other
    workspace files reach, `foreign` (entry label, finding) what calls in other workspace files
    reveal in it (lsp/index.py). On a syntax error, `previous` findings are carried over. An
    edit of one function's body is re-analysed from `previous` (analysis/incremental.py)."""
    workspace.add_import_root(path)  # as `graphmend check` searches the checked files' roots
    generation = workspace.generation  # another thread may add a root while this one checks
    upd = None
    if previous is not None and previous.state is not None:
        upd = incremental.update(previous.state, text, path, settings, workspace, external)
    if upd is not None:
        summary, reached = upd.summary, upd.reached
    else:
        reached = {}
        summary = summarize(text, path, settings, workspace, select=reached_in_file(external, reached))
    bom = text.startswith("\ufeff")  # the engine's lines are those of the text without it
    out = Checked(version, text, settings, symbols=summary.symbols, scope=summary.scope,
                  _lines=None if bom else summary.lines, rewalked=upd.rewalked if upd is not None else None)
    if summary.syntax_error is not None:
        # the last version that parsed stays the base: the keystroke that completes `f(x` is
        # re-analysed from the version before the `(`
        out.state = previous.state if previous is not None else None
    elif not bom:
        out.state = upd.state if upd is not None else incremental.state_of(summary, text, settings, workspace)
        if out.state is not None:
            out.state.generation = min(out.state.generation, generation)
    if summary.syntax_error is not None:
        out.syntax_error = summary.syntax_error
        if previous is not None:
            base = previous.findings if previous.syntax_error is None else previous.carried
            prev_text = previous.text
            out.carried = carry_over(base, prev_text, text)
        return out
    fa: FileAnalysis = findings_in_scope(summary, reached, settings)
    out.seeded, out.facts = summary.seeded, summary.facts
    if foreign:
        for label, f in foreign:
            add_in_scope(fa, summary.suppressions, replace(f), label, settings)
        fa.findings.sort(key=lambda f: (f.span.start.line, f.span.start.col, f.code))
    out.findings = [f for f in fa.findings if shown(f.code, settings)]
    return out


