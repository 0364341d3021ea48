""""Mended but still breaking": graph breaks Dynamo reports, in the MENDED run, on lines the fix
wrote. A fix that counts as applied must remove its break, so this must be 0 on every row.

The mended copy's files are compared line by line with the original files (difflib): a line of a
mended file that is not an unchanged original line was written by the fix (the rewritten
statement, a helper it calls, a runtime module it added). Every break of the mended run -- the
counting backend's first-call break reasons and Dynamo's graph_breaks log, which also names
functions it skipped whole -- whose innermost transformers frame is on such a line is listed
(file, line, the source there, Dynamo's reason). A break at a line the fix did not touch is a break the fix
did not claim (declined or unreported) and is not counted here.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any


def written_lines(original: Path, mended: Path) -> set[int]:
    """1-based lines of `mended` that are not an unchanged line of `original` (all of them when
    the original does not exist)."""
    try:
        new = mended.read_text(encoding="utf-8").splitlines()
    except OSError:
        return set()
    try:
        old = original.read_text(encoding="utf-8").splitlines()
    except OSError:
        return set(range(1, len(new) + 1))
    out: set[int] = set()
    for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            out.update(range(j1 + 1, j2 + 1))
    return out


def _reasons(res: dict[str, Any]) -> list[dict[str, Any]]:
    out = list(res.get("break_reasons") or [])
    out += [{"summary": b.get("summary", ""), "gb": b.get("gb"), "user_stack": b.get("user_stack") or [],
             "skipped": b.get("skipped")} for b in res.get("log_breaks") or []]
    return out


def still_breaking(original_root: Path, mended_root: Path, mended: dict[str, Any]) -> list[dict[str, Any]]:
    """The breaks of the mended run (`mended`: a _model_child result) on lines the fix wrote.
    Roots are the two `transformers` package directories; frames carry `transformers/...` paths."""
    cache: dict[str, set[int]] = {}
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for r in _reasons(mended):
        frames = [fr for fr in r.get("user_stack") or []
                  if str(fr.get("short", "")).startswith("transformers/") and fr.get("line")]
        for fr in frames[-1:]:  # the innermost: a break deeper in code the fix did not touch is not its
            short = str(fr["short"])
            rel = short[len("transformers/"):]
            if rel not in cache:
                cache[rel] = written_lines(original_root / rel, mended_root / rel)
            if fr["line"] in cache[rel]:
                key = (short, fr["line"])
                found.setdefault(key, {"file": short, "line": fr["line"], "source": fr.get("source", ""),
                                       "gb": r.get("gb"), "reason": (r.get("summary") or "")[:160]})
    return sorted(found.values(), key=lambda d: (d["file"], d["line"]))
