"""Rendering findings for people and machines: text (ruff-like), JSON, SARIF 2.1.0,
GitHub Actions annotations, statistics, unified diffs and the rule catalogue.

Positions: a Finding's columns are 0-based code points; every format here that
shows a column shows it 1-based (text, SARIF, GitHub), and SARIF/GitHub end
columns are exclusive (the column after the last character), as SARIF defines.
"""

from __future__ import annotations

import difflib
import json
import os
import urllib.parse
from collections import Counter
from pathlib import Path
from typing import Iterable, Optional, Sequence

from graphmend import __version__
from graphmend.findings import CATALOGUE, Applicability, Finding, Rule, severity

TOOL_NAME = "graphmend"
# Where rule documentation lives; SARIF helpUri = DOCS_BASE_URI + "<CODE>.md".
DOCS_BASE_URI = "docs/rules/"

SAFE_MARK = "[*]"
UNSAFE_MARK = "[unsafe]"


def rule_doc_uri(code: str) -> str:
    return f"{DOCS_BASE_URI}{code}.md"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _col(c: int) -> int:
    return c + 1


# --------------------------------------------------------------------------- text


def marker(f: Finding, unsafe_fixes: bool) -> str:
    if f.applicability is Applicability.SAFE:
        return SAFE_MARK
    if f.applicability is Applicability.UNSAFE:
        return SAFE_MARK if unsafe_fixes else UNSAFE_MARK
    return ""


def finding_lines(path: str, f: Finding, unsafe_fixes: bool = False, show_fixes: bool = False,
                  extra: Optional[str] = None, conditional: str = "information") -> list[str]:
    """`path:line:col: CODE [*] message`, then indented `  = ...` detail lines."""
    mark = marker(f, unsafe_fixes)
    cell = f"cell {f.cell}:" if f.cell is not None else ""  # a notebook: `nb.ipynb:cell 3:2:5`
    head = f"{path}:{cell}{f.span.start.line}:{_col(f.span.start.col)}: {f.code} "
    lines = [head + (f"{mark} " if mark else "") + f.message]
    if f.condition is not None:
        lines.append(f"  = {severity(f, conditional)}: a conditional break (setting `conditional-severity`)")
    if f.decline_reason:
        label = "mend declined" if f.applicability is Applicability.NONE else "unsafe fix"
        lines.append(f"  = {label}: {f.decline_reason}")
    if extra:
        lines.append(f"  = {extra}")
    if f.note:
        lines.append(f"  = note: {f.note}")
    if f.rewrite is None and f.gb_id:  # unmendable: Dynamo's own explanation and hint
        from graphmend.rules.unmendable import dynamo_says
        said = dynamo_says(f.gb_id)
        if said:
            lines.append(f"  = {said}")
    if show_fixes and f.fixable:
        title = f.fix_title or (f"{f.rewrite} rewrite" if f.rewrite else "available")
        suffix = "" if f.applicability is Applicability.SAFE else " (unsafe: needs --unsafe-fixes)"
        if f.applicability is Applicability.UNSAFE and unsafe_fixes:
            suffix = " (unsafe)"
        lines.append(f"  = fix: {title}{suffix}")
        if f.entry:
            lines.append(f"  = compiled via: {f.entry}")
    return lines


def format_text(results, unsafe_fixes: bool = False, show_fixes: bool = False,
                conditional: str = "information") -> str:
    """All findings of `results` (objects with .path and .findings), one block each."""
    out: list[str] = []
    for r in results:
        for f in r.findings:
            out.extend(finding_lines(r.path, f, unsafe_fixes, show_fixes, conditional=conditional))
    return "\n".join(out) + ("\n" if out else "")


def fix_counts(findings: Iterable[Finding]) -> tuple[int, int, int]:
    """(total, safe-fixable, unsafe-fixable)."""
    n = safe = unsafe = 0
    for f in findings:
        n += 1
        if f.applicability is Applicability.SAFE:
            safe += 1
        elif f.applicability is Applicability.UNSAFE:
            unsafe += 1
    return n, safe, unsafe


def summary(findings: Sequence[Finding], unsafe_fixes: bool = False) -> str:
    """The last line of `check`. Syntax errors (GM001) are counted apart from graph breaks."""
    syntax = sum(1 for f in findings if f.code == "GM001")
    n, safe, unsafe = fix_counts(f for f in findings if f.code != "GM001")
    tail = f" {_plural(syntax, 'file')} could not be parsed (GM001)." if syntax else ""
    if n == 0:
        if syntax:
            return f"Found no graph breaks; {_plural(syntax, 'file')} could not be parsed (GM001)."
        return "No graph breaks found."
    head = f"Found {_plural(n, 'graph break')}"
    if unsafe_fixes and (safe or unsafe):
        line = f"{head} ({safe + unsafe} fixable with `graphmend fix --unsafe-fixes`)."
    elif safe and unsafe:
        line = f"{head} ({safe} fixable with `graphmend fix`, {unsafe} more with --unsafe-fixes)."
    elif safe:
        line = f"{head} ({safe} fixable with `graphmend fix`)."
    elif unsafe:
        line = f"{head} ({unsafe} fixable with `graphmend fix --unsafe-fixes`)."
    else:
        line = f"{head}."
    return line + tail


def fix_summary(fixed: int, remaining: Sequence[Finding], unsafe_fixes: bool = False) -> str:
    n, _safe, unsafe = fix_counts(remaining)
    tail = ""
    if unsafe and not unsafe_fixes:
        tail = f", {unsafe} fixable with --unsafe-fixes"
    return f"Fixed {_plural(fixed, 'graph break')} ({n} remaining{tail})."


def format_statistics(findings: Iterable[Finding], unsafe_fixes: bool = False) -> str:
    counts: Counter = Counter()
    fixable: dict[str, bool] = {}
    for f in findings:
        counts[f.code] += 1
        if marker(f, unsafe_fixes) == SAFE_MARK:
            fixable[f.code] = True
    if not counts:
        return ""
    width = len(str(max(counts.values())))
    rows = []
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        rule = CATALOGUE.get(code)
        mark = SAFE_MARK if fixable.get(code) else " " * len(SAFE_MARK)
        rows.append(f"{n:>{width}}\t{code}\t{mark} {rule.name if rule else ''}".rstrip())
    return "\n".join(rows) + "\n"


def statistics_json(findings: Iterable[Finding], unsafe_fixes: bool = False) -> list[dict]:
    counts: Counter = Counter()
    fixable: Counter = Counter()
    for f in findings:
        counts[f.code] += 1
        if marker(f, unsafe_fixes) == SAFE_MARK:
            fixable[f.code] += 1
    return [{"code": code, "name": CATALOGUE[code].name if code in CATALOGUE else None,
             "count": n, "fixable": fixable[code]}
            for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


# --------------------------------------------------------------------------- JSON


def finding_json(path: str, f: Finding, conditional: str = "information") -> dict:
    d = {"path": path, "line": f.span.start.line, "column": _col(f.span.start.col),
         "end_line": f.span.end.line, "end_column": _col(f.span.end.col)}
    d.update(f.to_json())  # span/entry_span keep the engine's 0-based columns
    d["fixable"] = f.fixable
    d["severity"] = severity(f, conditional)
    return d


def format_json(results, conditional: str = "information") -> str:
    return json.dumps([finding_json(r.path, f, conditional) for r in results for f in r.findings],
                      indent=2) + "\n"


# --------------------------------------------------------------------------- SARIF 2.1.0


def _artifact_uri(path: str) -> str:
    if os.path.isabs(path):
        return Path(path).as_uri()
    return urllib.parse.quote(Path(path).as_posix())


def _level(code: str) -> str:
    return "error" if code == "GM001" else "warning"


def sarif_rule(rule: Rule) -> dict:
    props = {"category": rule.category.value, "fixable": rule.rewrite is not None}
    if rule.rewrite:
        props["rewrite"] = rule.rewrite
    if rule.gb_id:
        props["dynamoGraphBreakId"] = rule.gb_id
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "helpUri": rule_doc_uri(rule.code),
        "defaultConfiguration": {"level": _level(rule.code)},
        "properties": props,
    }


def _region(f: Finding) -> dict:
    return {"startLine": f.span.start.line, "startColumn": _col(f.span.start.col),
            "endLine": f.span.end.line, "endColumn": _col(f.span.end.col)}


SARIF_LEVELS = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}


def format_sarif(results, errors: Sequence = (), conditional: str = "information") -> str:
    """SARIF 2.1.0: one run; `errors` (objects with .path and .error) become notifications."""
    codes = list(CATALOGUE)
    index = {c: i for i, c in enumerate(codes)}
    sarif_results = []
    for r in results:
        uri = _artifact_uri(r.path)
        for f in r.findings:
            res = {
                "ruleId": f.code,
                "level": SARIF_LEVELS[severity(f, conditional)],
                "message": {"text": f.message + (f" ({f.decline_reason})" if f.decline_reason else "")},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": uri},
                    "region": _region(f),
                }}],
                "properties": {"applicability": f.applicability.value},
            }
            if f.code in index:
                res["ruleIndex"] = index[f.code]
            props = res["properties"]
            for key, val in (("rewrite", f.rewrite), ("declineReason", f.decline_reason),
                             ("entry", f.entry), ("dynamoGraphBreakId", f.gb_id), ("note", f.note),
                             ("fixTitle", f.fix_title),
                             ("condition", f.condition.text if f.condition else None),
                             # a notebook: the region's lines are those of this (1-based) code cell
                             ("notebookCell", f.cell)):
                if val:
                    props[key] = val
            sarif_results.append(res)
    notifications = [{
        "level": "error",
        "message": {"text": e.error},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": _artifact_uri(e.path)}}}],
    } for e in errors]
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": TOOL_NAME,
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [sarif_rule(CATALOGUE[c]) for c in codes],
            }},
            "invocations": [{
                "executionSuccessful": not errors,
                "toolExecutionNotifications": notifications,
            }],
            "results": sarif_results,
        }],
    }
    return json.dumps(doc, indent=2) + "\n"


# --------------------------------------------------------------------------- GitHub Actions


def _gh_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(s: str) -> str:
    return _gh_data(s).replace(":", "%3A").replace(",", "%2C")


def format_github(results, errors: Sequence = (), conditional: str = "information") -> str:
    out = []
    for r in results:
        file = _gh_prop(r.path)
        for f in r.findings:
            msg = f.message + (f" ({f.decline_reason})" if f.decline_reason else "")
            level = {"error": "error", "warning": "warning"}.get(severity(f, conditional), "notice")
            out.append(
                f"::{level} file={file},line={f.span.start.line},col={_col(f.span.start.col)},"
                f"endLine={f.span.end.line},endColumn={_col(f.span.end.col)},"
                f"title={_gh_prop(f.code)}::{_gh_data(msg)}")
    for e in errors:
        out.append(f"::error file={_gh_prop(e.path)},title=graphmend::{_gh_data(e.error)}")
    return "\n".join(out) + ("\n" if out else "")


# --------------------------------------------------------------------------- diffs


def format_diff(path: str, before: str, after: str) -> str:
    a = before.splitlines(keepends=True)
    b = after.splitlines(keepends=True)
    out = []
    for line in difflib.unified_diff(a, b, fromfile=path, tofile=path):
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    return "".join(out)


# --------------------------------------------------------------------------- rules


def rule_rows() -> list[dict]:
    return [{"code": r.code, "name": r.name, "category": r.category.value, "rewrite": r.rewrite,
             "fixable": r.rewrite is not None, "dynamo_id": r.gb_id, "summary": r.summary}
            for r in CATALOGUE.values()]


def format_rules_text() -> str:
    rows = [("Code", "Name", "Rewrite", "Fix", "Dynamo", "Summary")]
    for d in rule_rows():
        rows.append((d["code"], d["name"], d["rewrite"] or "-", SAFE_MARK if d["fixable"] else "",
                     d["dynamo_id"] or "-", d["summary"]))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r[:5], widths)) + "  " + r[5] for r in rows]
    return "\n".join(lines) + "\n"


def format_rules_json() -> str:
    return json.dumps(rule_rows(), indent=2) + "\n"


def rule_summary_doc(code: str) -> str:
    """The catalogue's own description of a rule, as markdown (used until rule docs exist)."""
    r = CATALOGUE[code]
    lines = [f"# {r.code} {r.name}", "", r.summary, "",
             f"- Category: {r.category.value}",
             f"- Fix: {r.rewrite + ' rewrite' if r.rewrite else 'none (reported only)'}"]
    if r.gb_id:
        lines.append(f"- Dynamo graph-break id: {r.gb_id}")
    lines.append(f"- Documentation: {rule_doc_uri(r.code)}")
    return "\n".join(lines) + "\n"
