"""Apply fixes: collect each finding's edits, drop overlaps, bind the runtime once (one import
line, or the inline block; see rewrite/runtime.py), re-parse the result, and repeat (a mend can
expose another, as with ruff's fix loop)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from graphmend.analysis.astwalk import parse
from graphmend.analysis.engine import LineIndex, analyze_source
from graphmend.analysis.symbols import Symbols, module_name_for
from graphmend.config import DEFAULT_LINE_LENGTH, Settings
from graphmend.textlines import split_lines
from graphmend.findings import Applicability, Finding, Pos, Span, TextEdit
from graphmend.rewrite import runtime
from graphmend.rewrite.wrap import wrap_edits

MAX_PASSES = 4


def _uses_helpers(edits: list[TextEdit]) -> bool:
    """Whether the edits call the runtime (so the file needs it bound)."""
    return any(runtime.uses_runtime(e.text) for e in edits)


def runtime_mode(settings: Settings, mode: Optional[str] = None) -> str:
    mode = mode or getattr(settings, "runtime", None) or "vendor"
    if mode not in runtime.MODES:
        raise ValueError(f"runtime must be one of {', '.join(runtime.MODES)}, not {mode!r}")
    return mode


@dataclass
class FixResult:
    text: str  # the mended text (the input unchanged when nothing applied)
    applied: list[Finding] = field(default_factory=list)
    skipped: list[tuple[Finding, str]] = field(default_factory=list)  # (finding, why not applied)
    remaining: list[Finding] = field(default_factory=list)  # findings of the final text


def _offset(lines: list[str], line: int, col: int) -> int:
    return sum(len(s) for s in lines[: line - 1]) + col


def apply_edits(text: str, edits: list[TextEdit]) -> str:
    lines = split_lines(text, keepends=True) or [""]
    spans = sorted(((_offset(lines, e.span.start.line, e.span.start.col),
                     _offset(lines, e.span.end.line, e.span.end.col), e.text) for e in edits), reverse=True)
    out = text
    for a, b, new in spans:
        out = out[:a] + new + out[b:]
    return out


def _overlaps(a: Span, b: Span) -> bool:
    return not ((a.end.line, a.end.col) <= (b.start.line, b.start.col)
                or (b.end.line, b.end.col) <= (a.start.line, a.start.col))


def helper_insertion(text: str, tree: Optional[ast.Module] = None, mode: str = "vendor",
                     path: str = "<string>") -> TextEdit:
    """The edit that binds the runtime: its import line right after the module's leading imports
    (and docstring, __future__), or, inline, the block there between blank lines.
    `tree`: the text's ast, when the caller has it."""
    tree = tree if tree is not None else parse(text)
    last = None
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            last = stmt
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and last is None:
            continue
        elif isinstance(stmt, (ast.If, ast.Try)) and all(
                isinstance(s, (ast.Import, ast.ImportFrom, ast.Pass, ast.Expr)) for s in ast.walk(stmt)
                if isinstance(s, ast.stmt) and s is not stmt):
            last = stmt  # `if TYPE_CHECKING: import ...`, `try: import x except: ...`
        else:
            break
    line = (last.end_lineno + 1) if last is not None else 1
    after_docstring = False
    if last is None:
        for stmt in tree.body:  # after a module docstring
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                line, after_docstring = stmt.end_lineno + 1, True
            break
    src_lines = split_lines(text, keepends=True)
    nl = _newline(text)
    block = runtime.import_line(mode, path, tree)
    if mode == "inline":
        block = nl + block.replace("\n", nl) + nl
    else:
        block = block + nl
        if last is None and (after_docstring or line <= len(src_lines)):
            # the first import of the file: set apart from the docstring / code as imports are
            block = (nl if after_docstring else "") + block + (nl if line <= len(src_lines)
                                                               and src_lines[line - 1].strip() else "")
    if line > len(src_lines):  # the file ends with its imports: append
        end = Pos(len(src_lines), len(src_lines[-1])) if src_lines else Pos(1, 0)
        lead = "" if not text or text.endswith(("\n", "\r")) else nl
        return TextEdit(Span(end, end), lead + block)
    return TextEdit(Span(Pos(line, 0), Pos(line, 0)), block)


def _newline(text: str) -> str:
    i = text.find("\n")
    return "\r\n" if i > 0 and text[i - 1] == "\r" else "\n"


def _allowed(f: Finding, settings: Settings, unsafe: bool) -> Optional[str]:
    if not settings.enabled(f.code):
        return "not selected"
    if f.applicability is Applicability.NONE:
        return f.decline_reason or "no fix"
    if f.applicability is Applicability.UNSAFE and not unsafe:
        return "unsafe fix (use --unsafe-fixes): " + (f.decline_reason or "")
    return None


def one_pass(text: str, path: str, settings: Settings, unsafe: bool, workspace=None,
             only: Optional[set] = None, external: Optional[dict] = None, mode: str = "vendor"):
    """(new text, applied, skipped, findings of the input)."""
    from graphmend.rules import fix_edits
    analysis = analyze_source(text, path, settings, workspace, external)
    if any(f.code == "GM001" for f in analysis.findings):
        return text, [], [(f, "the file does not parse") for f in analysis.findings], analysis.findings
    sym = analysis.symbols  # the analysis' own view of the file: no second parse
    lines = LineIndex(text)
    accepted: list[tuple[Finding, list[TextEdit]]] = []
    skipped: list[tuple[Finding, str]] = []
    for f in analysis.findings:
        if only is not None and (f.code, f.span) not in only:
            continue
        why = _allowed(f, settings, unsafe)
        if why:
            skipped.append((f, why))
            continue
        try:
            edits = fix_edits(f, text, sym, lines)
            if edits:
                edits = wrap_edits(text, edits, settings.line_length)
        except Exception as e:  # a bug in a rule must not lose the user's file
            skipped.append((f, f"internal error while building the fix: {type(e).__name__}: {e}"))
            continue
        if not edits:
            skipped.append((f, "the rule could not build this fix"))
            continue
        if any(_overlaps(e.span, o.span) for _, oe in accepted for o in oe for e in edits):
            skipped.append((f, "overlaps another fix; applied on the next pass"))
            continue
        accepted.append((f, edits))
    if not accepted:
        return text, [], skipped, analysis.findings
    edits = [e for _, es in accepted for e in es]
    if _uses_helpers(edits) and not runtime.binds_runtime(text):
        edits.append(helper_insertion(text, mode=mode, path=path))
    new = apply_edits(text, edits)
    try:
        parse(new)
    except SyntaxError as e:  # never hand back code that does not parse
        return text, [], skipped + [(f, f"the mended code would not parse ({e.msg}); left unchanged")
                                    for f, _ in accepted], analysis.findings
    return new, [f for f, _ in accepted], skipped, analysis.findings


def fix_source(text: str, path: str = "<string>", settings: Settings | None = None,
               unsafe: bool = False, workspace=None, external: Optional[dict] = None,
               runtime: Optional[str] = None) -> FixResult:
    """Apply the fixes to `text` (the file at `path`). `runtime`: how the mended text reaches
    the runtime, "vendor" | "import" | "inline" (default: the settings'; see rewrite/runtime.py).
    Writes nothing: for "vendor", the caller writes `_graphmend_runtime.py` (`vendor_runtime`)."""
    settings = settings or Settings()
    mode = runtime_mode(settings, runtime)
    unsafe = unsafe or settings.unsafe_fixes
    if text.startswith("\ufeff"):  # keep a byte-order mark out of the positions, and in the output
        inner = fix_source(text[1:], path, settings, unsafe, workspace, external, mode)
        inner.text = "\ufeff" + inner.text
        return inner
    result = FixResult(text)
    skipped: dict[tuple, tuple[Finding, str]] = {}
    final: Optional[list[Finding]] = None
    for _ in range(MAX_PASSES):
        new, applied, sk, found = one_pass(result.text, path, settings, unsafe, workspace, external=external,
                                       mode=mode)
        for f, why in sk:
            skipped[(f.code, f.span.start.line, f.message)] = (f, why)
        if not applied:
            final = found  # this pass analysed the final text: no need to analyse it again
            break
        result.text = new
        result.applied += applied
    if final is None:
        final = analyze_source(result.text, path, settings, workspace, external).findings
    result.remaining = final
    live = {(f.code, f.span.start.line, f.message) for f in final}
    result.skipped = [v for k, v in skipped.items() if k in live]
    return result


def fixes_for(text: str, findings: list[Finding], path: str = "<string>", workspace=None,
              settings: Settings | None = None, unsafe: bool = True, runtime: Optional[str] = None) -> dict:
    """The edits of each given finding (the runtime's import included), by id(finding)."""
    mode = runtime_mode(settings or Settings(), runtime)
    tree = parse(text)
    sym = Symbols(tree, module_name_for(path) if path != "<string>" else "__main__",
                  is_package=path.endswith("__init__.py"))
    lines = LineIndex(text)
    out = {}
    for f in findings:
        if f.applicability is Applicability.UNSAFE and not unsafe:
            continue
        edits = edits_for(f, text, sym, lines, mode, path, (settings or Settings()).line_length)
        if edits:
            out[id(f)] = edits
    return out


def edits_for(f: Finding, text: str, symbols: Symbols, lines: LineIndex, mode: str = "vendor",
              path: str = "<string>", line_length: int = DEFAULT_LINE_LENGTH) -> Optional[list[TextEdit]]:
    """The edits that mend one finding of `text` (analysed into `symbols`), the runtime's import
    (mode: see rewrite/runtime.py) included when the file lacks it; None when the finding has no fix or the mended code would
    not parse. Costs a parse of the top-level statement it edits, not of the file (the editor's
    quick fix asks for one finding at a time)."""
    from graphmend.rules import fix_edits
    if not f.fixable or f.site is None:
        return None
    edits = fix_edits(f, text, symbols, lines)
    if edits:
        edits = wrap_edits(text, edits, line_length)
    if not edits or not _region_parses(text, symbols.tree, edits):
        return None
    if _uses_helpers(edits) and not runtime.binds_runtime(text):
        edits = [*edits, helper_insertion(text, symbols.tree, mode, path)]
    return edits


def _region_parses(text: str, tree: ast.Module, edits: list[TextEdit]) -> bool:
    """Whether the top-level statements the edits touch still parse after them (the rest of
    the file is unchanged, and top-level statements parse on their own)."""
    first = min(e.span.start.line for e in edits)
    last = max(e.span.end.line for e in edits)
    lo, hi = first, last
    for stmt in tree.body:
        start = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])
        end = stmt.end_lineno or stmt.lineno
        if start <= last and end >= first:
            lo, hi = min(lo, start), max(hi, end)
    src = split_lines(text, keepends=True)
    region = "".join(src[lo - 1:hi])
    shifted = [TextEdit(Span(Pos(e.span.start.line - lo + 1, e.span.start.col),
                             Pos(e.span.end.line - lo + 1, e.span.end.col)), e.text) for e in edits]
    return _parses(apply_edits(region, shifted))


def _parses(text: str) -> bool:
    try:
        parse(text)
        return True
    except SyntaxError:
        return False


def vendor_runtime(path: str) -> tuple[Optional[Path], str]:
    """Write (or update) the vendored runtime for the mended file `path`. Returns (the copy's
    path, what happened: "created", "updated", "current", or why it was left alone)."""
    target = runtime.vendor_path(path)
    try:
        old = target.read_text(encoding="utf-8") if target.exists() else None
    except (OSError, UnicodeDecodeError) as e:
        return target, f"cannot read it ({e}); left alone"
    if old is not None:
        status = runtime.vendored_status(old)
        if status == "current":
            return target, "current"
        if status == "edited":
            return target, "edited by hand (its text does not match its digest); left alone"
        if status == "newer":
            return target, "written by a newer graphmend; left alone"
    import os
    import tempfile
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=str(target.parent))
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(runtime.vendored_text())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except OSError as e:
        return target, f"cannot write it ({e})"
    return target, "created" if old is None else "updated"
