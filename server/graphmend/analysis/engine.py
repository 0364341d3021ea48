"""Entry point of the analysis: source text in, findings out (ast only, no libcst, no torch).

`summarize` does all per-file work (it runs in worker processes for a directory scan) and
keeps the findings of every function; `reach` then decides which functions are traced,
joining the call graphs of every file it is given; `analyze_source` does both for one file.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import os
import re
from dataclasses import dataclass, field
from dataclasses import replace
from typing import Callable, Optional

from graphmend.analysis.astwalk import parse
from graphmend.analysis.callers import Seeded, inherited_facts, place, seeded_findings
from graphmend.analysis.detect import FunctionWalker
from graphmend.analysis.reexports import resolve_torch_reexports
from graphmend.analysis.scope import FileScope, file_scope, reach
from graphmend.analysis.symbols import Symbols, module_name_for, tracking
from graphmend.analysis.workspace import Workspace, default_workspace
from graphmend.config import Settings
from graphmend.textlines import split_lines
from graphmend.findings import Finding, Pos, Span

SUPPRESS_RE = re.compile(r"#\s*graphmend:\s*ignore(?:\[(?P<codes>[A-Za-z0-9_, ]*)\])?")


@dataclass
class FileAnalysis:
    path: str
    findings: list[Finding] = field(default_factory=list)
    suppressed: int = 0  # findings hidden by `# graphmend: ignore` comments
    symbols: Optional[Symbols] = field(default=None, repr=False, compare=False)  # for building fixes
    _sites: set = field(default_factory=set, repr=False, compare=False)  # (code, span) added: add_in_scope


@dataclass
class FileSummary:
    """Everything one file contributes: its scope (for `reach`) and the findings of every
    function, before scope filtering and suppression."""

    path: str
    scope: Optional[FileScope]
    by_function: dict[str, list[Finding]] = field(default_factory=dict)
    syntax_error: Optional[Finding] = None
    suppressions: dict[int, Optional[frozenset[str]]] = field(default_factory=dict)
    symbols: Optional[Symbols] = field(default=None, repr=False, compare=False)  # not sent between processes
    lines: Optional[LineIndex] = field(default=None, repr=False, compare=False)  # nor this
    # the functions walked for findings (a `select` may leave some out); None: all but the disabled
    walked: Optional[set[str]] = field(default=None, repr=False, compare=False)
    # per function walked: what its findings read of the rest of the file (function_findings)
    reads: dict[str, frozenset] = field(default_factory=dict, repr=False, compare=False)
    # per function walked: its calls that pass tensors (detect.CallFact; not sent between processes)
    facts: dict[str, list] = field(default_factory=dict, repr=False, compare=False)
    # findings that need what a caller of this file passes (analysis/callers.py), in this file or
    # in the file of the function called
    seeded: list[Seeded] = field(default_factory=list)
    # the seeded walks, for the editor's next version (callers.Memo; not sent between processes)
    seeded_memo: dict = field(default_factory=dict, repr=False, compare=False)


class LineIndex:
    """ast's UTF-8 byte columns -> code-point columns. The text is split into lines on the first
    question (most files checked have no finding to place: 1.8% of a check of transformers'
    models/ went into splitting them)."""

    def __init__(self, text: str):
        self._text: Optional[str] = text
        self._lines: Optional[list[str]] = None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = split_lines(self._text or "", keepends=True) or [""]
            self._text = None
        return self._lines

    @lines.setter
    def lines(self, value: list[str]) -> None:
        self._lines, self._text = value, None

    def col(self, line: int, byte_col: int) -> int:
        if not 1 <= line <= len(self.lines):
            return byte_col
        s = self.lines[line - 1]
        if s.isascii():
            return byte_col
        return len(s.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))

    def span(self, node: ast.AST) -> Span:
        return Span(Pos(node.lineno, self.col(node.lineno, node.col_offset)),
                    Pos(node.end_lineno or node.lineno,
                        self.col(node.end_lineno or node.lineno, node.end_col_offset or 0)))


def suppressions(text: str) -> dict[int, Optional[frozenset[str]]]:
    """line -> codes ignored there (None = all). Only real comments count."""
    out: dict[int, Optional[frozenset[str]]] = {}
    if "graphmend:" not in text:
        return out
    for i, line in enumerate(split_lines(text), 1):
        m = SUPPRESS_RE.search(line)
        if not m or _in_string(line, m.start()):
            continue
        codes = m.group("codes")
        out[i] = None if codes is None else frozenset(c.strip() for c in codes.split(",") if c.strip())
    return out


def _in_string(line: str, idx: int) -> bool:
    quote = None
    i = 0
    while i < idx:
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        i += 1
    return quote is not None


def syntax_error_finding(e: SyntaxError, lines: LineIndex) -> Finding:
    line = e.lineno or 1
    col = max((e.offset or 1) - 1, 0)
    msg = e.msg or "invalid syntax"
    return Finding("GM001", f"Syntax error: {msg}", Span(Pos(line, col), Pos(line, col + 1)))


@contextlib.contextmanager
def _no_gc():
    """The cyclic GC costs more than half of the time of building ast trees (measured: 4.7 s vs
    1.2 s to parse 160k lines); trees are freed by reference counting, so pause it meanwhile."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


Select = Callable[["FileSummary"], Optional[dict[str, str]]]


def summarize(text: str, path: str = "<string>", settings: Optional[Settings] = None,
              workspace: Optional[Workspace] = None, module: Optional[str] = None,
              select: Optional[Select] = None) -> FileSummary:
    """The file's symbols, scope and the findings of its functions (`by_function`). `select`,
    called once the scope is known, may name the only functions whose findings are wanted
    (qualname -> label; None: all): a single-file check knows what is reached before it walks
    the functions, and walking only those is most of its time on a large file."""
    with _no_gc():
        try:
            return _summarize(text, path, settings, workspace, module, select)
        except RecursionError:  # a backstop: the parse and each function are guarded below
            summary = FileSummary(path, None, suppressions=suppressions(text))
            summary.syntax_error = too_deep_finding()
            return summary


def too_deep_finding(line: int = 1) -> Finding:
    """Code nested too deeply for Python's `ast` (a RecursionError while building or walking
    the tree): reported like a syntax error, since nothing in the file could be checked."""
    return Finding("GM001", "Cannot analyse: the code nests too deeply for Python's ast "
                   "(RecursionError)", Span(Pos(line, 0), Pos(line, 0)))


def _summarize(text: str, path: str, settings: Optional[Settings], workspace: Optional[Workspace],
               module: Optional[str], select: Optional[Select] = None) -> FileSummary:
    settings = settings or Settings()
    ws = workspace or default_workspace()
    if text.startswith("\ufeff"):  # a byte-order mark is not code (editors may pass it through)
        text = text[1:]
    lines = LineIndex(text)
    summary = FileSummary(path, None, suppressions=suppressions(text))
    try:
        tree = parse(text, path)
    except (SyntaxError, ValueError) as e:
        if not isinstance(e, SyntaxError):
            e = SyntaxError(str(e))
        if e.lineno is None and "\x00" in text:  # "cannot contain null bytes" has no position
            nul = text.index("\x00")
            e.lineno, e.offset = text.count("\n", 0, nul) + 1, nul - text.rfind("\n", 0, nul)
        summary.syntax_error = syntax_error_finding(e, lines)
        return summary
    except RecursionError:
        summary.syntax_error = too_deep_finding()
        return summary
    mod = module or (module_name_for(path) if path != "<string>" else "__main__")
    sym = Symbols(tree, mod, is_package=path.endswith("__init__.py"))
    sym.workspace = ws
    if path != "<string>":
        resolve_torch_reexports(sym, ws)  # `from ..backend import torch` (deepxde)
    summary.symbols = sym
    summary.scope = file_scope(sym, ws, settings.scope)
    summary.lines = lines
    wanted = select(summary) if select is not None else None
    if wanted is not None:
        summary.walked = set(wanted) - summary.scope.disabled
    for fi in sym.all_functions:
        if fi.qualname in summary.scope.disabled or (wanted is not None and fi.qualname not in wanted):
            continue
        found = function_findings(fi, sym, lines, text, summary.reads, summary.facts)
        if found:
            summary.by_function[fi.qualname] = found
    summary.seeded = seeded_findings(sym, text, path, lines, summary.facts, summary.by_function, summary.walked,
                                     summary.seeded_memo, inherited_facts(sym))
    return summary


def function_findings(fi, sym: Symbols, lines: LineIndex, text: str,
                      reads: Optional[dict[str, frozenset]] = None,
                      facts: Optional[dict[str, list]] = None) -> list[Finding]:
    """Walk one function and judge its sites. `reads`: receives, under the function's qualname,
    what its walk and judgement read of other functions and classes (`symbols.tracking`);
    `facts`: its calls that pass tensors (detect.CallFact)."""
    from graphmend.rules import judge  # rules build messages and decide fixability

    seen: set = set()
    with tracking(seen):
        walker = FunctionWalker(sym, fi)
        try:
            sites = walker.run()
        except RecursionError:  # an expression too deep to walk: keep the sites found before it
            sites = walker.sites
        found = []
        for site in sites:
            try:
                found.append(judge(site, sym, lines, text))
            except RecursionError:
                continue
    if facts is not None:
        if walker.calls_out:
            facts[fi.qualname] = list(walker.calls_out.values())
        else:
            facts.pop(fi.qualname, None)
    if reads is not None:
        seen.discard(fi.qualname)
        reads[fi.qualname] = reads.get(fi.qualname, frozenset()) | seen  # a name defined twice: both
    return found


def findings_in_scope(summary: FileSummary, reached: dict[str, str], settings: Settings) -> FileAnalysis:
    fa = FileAnalysis(summary.path, symbols=summary.symbols)
    if summary.syntax_error is not None:
        fa.findings.append(summary.syntax_error)
        return fa
    for qual, label in reached.items():
        for f in summary.by_function.get(qual, ()):
            add_in_scope(fa, summary.suppressions, f, label, settings)
    for path, label, f in place(summary.seeded, reached):
        if path == summary.path:
            add_in_scope(fa, summary.suppressions, f, label, settings)
    fa.findings.sort(key=lambda f: (f.span.start.line, f.span.start.col, f.code))
    return fa


def add_in_scope(fa: FileAnalysis, sups: dict[int, Optional[frozenset[str]]], f: Finding, label: str,
                 settings: Settings) -> None:
    """Add a finding in scope (`label`: its entry) unless it is disabled, suppressed, or at a site
    already reported (a second caller seeding the same site, callers.py)."""
    if not settings.enabled(f.code):
        return
    sup = sups.get(f.span.start.line, False)
    if sup is None or (sup and f.code in sup):
        fa.suppressed += 1
        return
    if (f.code, f.span) in fa._sites:
        return  # a second caller seeding the same site (callers.py)
    fa._sites.add((f.code, f.span))
    f.entry = label
    fa.findings.append(f)


def analyze_source(text: str, path: str = "<string>", settings: Optional[Settings] = None,
                   workspace: Optional[Workspace] = None,
                   external: Optional[dict[str, str]] = None) -> FileAnalysis:
    """Find the graph-break sites in one file's text. Never raises on bad input:
    a syntax error becomes a GM001 finding. `external`: functions of this file that entries
    elsewhere reach (qualname -> that entry), as `reach` over the workspace found them."""
    settings = settings or Settings()
    reached: dict[str, str] = {}
    select = reached_in_file(external or {}, reached)
    summary = summarize(text, path, settings, workspace, select=select)
    return findings_in_scope(summary, reached, settings)


def unwalked(scope: FileScope, walked: set[str], reached: dict[str, dict[str, str]]) -> set[str]:
    """The functions of a file that entries reach (`reached`: `reach` over the files) but its
    summary did not walk (it walked those its own entries reach): they need a walk of their own."""
    return set(reached.get(scope.module, ())) - scope.disabled - walked


def reached_in_file(external: dict[str, str], out: dict[str, str]) -> Select:
    """A `select` for `summarize` of one file on its own: the functions reached from its entries
    and from `external` (functions of this file that entries elsewhere reach: qualname -> that
    entry), stored into `out` (qualname -> label) too. The summary's own scope is left as the
    file declares it."""
    def select(summary: FileSummary) -> dict[str, str]:
        own = summary.scope
        entries = {q: f"via {label}" for q, label in external.items()}
        entries.update(own.entries)  # the file's own entries keep their labels
        out.update(reach([replace(own, entries=entries)]).get(own.module, {}))
        return out
    return select


def foreign_seeded(summaries: list[FileSummary], reached: dict[str, dict[str, str]]) -> list[tuple[str, str, Finding]]:
    """(path, entry label, finding): what a reached caller in one of the files shows of a function
    in another of them (callers.py); the finding lies in `path`."""
    paths = {os.path.abspath(s.path): s for s in summaries}
    out = []
    for s in summaries:
        r = reached.get(s.scope.module, {}) if s.scope else {}
        for path, label, f in place(s.seeded, r):
            target = paths.get(os.path.abspath(path))
            if path != s.path and target is not None and target.syntax_error is None:
                out.append((target.path, label, f))
    return out


def analyze_many(summaries: list[FileSummary], settings: Settings,
                 reached: Optional[dict[str, dict[str, str]]] = None) -> list[FileAnalysis]:
    """Scope across files: a function in one file reached from an entry in another is in scope.
    `reached`: `reach` over the summaries' scopes, when the caller has it."""
    if reached is None:
        reached = reach([s.scope for s in summaries if s.scope is not None])
    out = []
    by_path: dict[str, tuple[FileAnalysis, FileSummary]] = {}
    for s in summaries:
        r = reached.get(s.scope.module, {}) if s.scope else {}
        fa = findings_in_scope(s, r, settings)
        out.append(fa)
        by_path[os.path.abspath(s.path)] = (fa, s)
    # what a caller in one file shows of a function in another (callers.py)
    for target, label, f in foreign_seeded(summaries, reached):
        fa, s = by_path[os.path.abspath(target)]
        add_in_scope(fa, s.suppressions, f, label, settings)
    for fa in out:
        fa.findings.sort(key=lambda f: (f.span.start.line, f.span.start.col, f.code))
    return out

