"""What `graphmend fix` does to the shape of real files: growth, imports, line length, helper blocks.

Copies a package (default: the installed transformers), runs `graphmend fix --unsafe-fixes` on the
copy in the default runtime mode (vendor), and compares every changed file with its original:

* lines added and removed (difflib), net growth per file, and the import lines the fix added;
* added lines longer than the line length (the configured one: `--line-length` writes it as
  `[tool.ruff] line-length` into the copy, as a project would have it; else graphmend's default 88),
  not counting a line that is one string literal by itself (no wrap can shorten it) or a line of
  the user's that was already that long and that the mend only moved (a comment re-indented);
* pasted helper blocks (the inline runtime's marker) and private `_gm_` names in added lines;
* vendored runtime copies written, every mended file parses, and a second `fix` changes nothing.

    python benchmarks/mend_shape.py                       # transformers, line length 88
    python benchmarks/mend_shape.py --line-length 119     # transformers' own ruff setting
    python benchmarks/mend_shape.py --tree DIR --json out.json
    python benchmarks/mend_shape.py --quick               # t5 and bart only

Prints a table (`--markdown`) and a summary; exits 1 when a target fails (a pasted block, a
`_gm_` name, a line over the length, a file that does not parse, a second fix that changes).
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INLINE_MARK = "(inline; added by graphmend"
IMPORT_RE = re.compile(r"^\s*(from \.+ import _graphmend_runtime as graphmend|import _graphmend_runtime as graphmend"
                       r"|from graphmend import runtime as graphmend)\s*$")


def default_tree() -> Path:
    out = subprocess.run([sys.executable, "-c", "import transformers, os; print(os.path.dirname(transformers.__file__))"],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def one_atom(line: str) -> bool:
    """A line that is one string literal (with a trailing comma or bracket): no wrap shortens it."""
    s = line.strip().rstrip(",)]}").strip()
    try:
        node = ast.parse(s, mode="eval").body
    except SyntaxError:
        return False
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def run_fix(copy: Path, jobs: int, env: dict) -> tuple[int, float, str]:
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "graphmend", "fix", "--unsafe-fixes", "-q", "-j", str(jobs), str(copy)],
                       capture_output=True, text=True, env=env)
    return p.returncode, time.perf_counter() - t, p.stderr[-2000:]


def measure(tree: Path, line_length: int | None, jobs: int, keep: bool) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="gm-shape-"))
    copy = tmp / tree.name
    shutil.copytree(tree, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so"))
    limit = line_length or 88
    if line_length:
        (tmp / "pyproject.toml").write_text(f"[tool.ruff]\nline-length = {line_length}\n")
    originals = {p.relative_to(copy): p.read_text(encoding="utf-8", errors="surrogateescape")
                 for p in copy.rglob("*.py")}
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    rc, wall, err = run_fix(copy, jobs, env)
    rows, over, gm_names, blocks, unparsed, trailing = [], [], [], [], [], []
    vendored = sorted(str(p.relative_to(copy)) for p in copy.rglob("_graphmend_runtime.py"))
    for rel, before in sorted(originals.items()):
        after = (copy / rel).read_text(encoding="utf-8", errors="surrogateescape")
        if after == before:
            continue
        a, b = before.splitlines(), after.splitlines()
        added, removed = [], 0
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
            if tag in ("replace", "insert"):
                added += b[j1:j2]
            if tag in ("replace", "delete"):
                removed += i2 - i1
        imports = [ln for ln in added if IMPORT_RE.match(ln)]
        # the user's own lines a mend moved (a comment, re-indented) that were already too long
        long_before = {ln.strip() for ln in a if len(ln) > limit}
        for ln in added:
            if len(ln) > limit and not one_atom(ln) and ln.strip() not in long_before:
                over.append(f"{rel}: {len(ln)} chars: {ln.strip()[:90]}")
            if ln != ln.rstrip():
                trailing.append(f"{rel}: {ln!r}"[:120])
            if "_gm_" in ln:
                gm_names.append(f"{rel}: {ln.strip()[:90]}")
        if INLINE_MARK in after and INLINE_MARK not in before:
            blocks.append(str(rel))
        try:
            ast.parse(after)
        except SyntaxError as e:
            unparsed.append(f"{rel}: {e}")
        rows.append({"file": str(rel), "lines before": len(a), "lines after": len(b), "added": len(added),
                     "removed": removed, "growth": len(b) - len(a), "imports added": len(imports),
                     "growth beyond the import": len(b) - len(a) - len(imports)})
    snapshot = {p: p.read_bytes() for p in copy.rglob("*.py")}
    rc2, wall2, _ = run_fix(copy, jobs, env)
    changed_again = sorted(str(p.relative_to(copy)) for p, data in snapshot.items() if p.read_bytes() != data)
    if not keep:
        shutil.rmtree(tmp, ignore_errors=True)
    growth = sorted(r["growth beyond the import"] for r in rows)
    return {
        "tree": str(tree), "line length": limit, "line length from": "[tool.ruff]" if line_length else "default",
        "files": len(originals), "files mended": len(rows), "fix rc": rc, "fix s": round(wall, 1),
        "fix stderr tail": err if rc not in (0, 1) else "",
        "lines added": sum(r["added"] for r in rows), "lines removed": sum(r["removed"] for r in rows),
        "net growth": sum(r["growth"] for r in rows),
        "imports added": sum(r["imports added"] for r in rows),
        "files with more than one import added": [r["file"] for r in rows if r["imports added"] > 1],
        "files mended without an import": [r["file"] for r in rows if r["imports added"] == 0],
        "growth beyond the import, per file: median / max": (growth[len(growth) // 2] if growth else 0,
                                                             growth[-1] if growth else 0),
        "added lines over the line length": over, "private _gm_ names in added lines": gm_names,
        "added lines with trailing whitespace": trailing,
        "pasted helper blocks": blocks, "vendored copies": vendored, "mended files that do not parse": unparsed,
        "second fix: files changed": changed_again, "second fix s": round(wall2, 1), "rows": rows,
    }


def render(r: dict, markdown: bool) -> str:
    keys = ["tree", "line length", "line length from", "files", "files mended", "fix s", "lines added",
            "lines removed", "net growth", "imports added", "growth beyond the import, per file: median / max"]
    counts = ["files with more than one import added", "files mended without an import",
              "added lines over the line length", "added lines with trailing whitespace",
              "private _gm_ names in added lines", "pasted helper blocks",
              "vendored copies", "mended files that do not parse", "second fix: files changed"]
    out = ["| | |", "|---|---|"] if markdown else []
    for k in keys:
        v = r[k]
        v = " / ".join(map(str, v)) if isinstance(v, tuple) else v
        out.append(f"| {k} | {v} |" if markdown else f"{k}: {v}")
    for k in counts:
        v = r[k]
        out.append(f"| {k} | {len(v)} |" if markdown else f"{k}: {len(v)}")
    top = sorted(r["rows"], key=lambda x: -x["growth beyond the import"])[:5]
    out.append("")
    out.append("Largest growth beyond the import (lines): " +
               ", ".join(f"{t['file']} +{t['growth beyond the import']}" for t in top))
    for k in [c for c in counts if c != "vendored copies"]:
        for item in r[k][:10]:
            out.append(f"- {k}: {item}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, help="package directory to copy and mend (default: transformers)")
    ap.add_argument("--line-length", type=int, help="write [tool.ruff] line-length = N into the copy's root")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", help="write the result here")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the mended copy")
    ap.add_argument("--quick", action="store_true", help="only transformers' t5 and bart, as one package")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    tree = a.tree or default_tree()
    if a.quick:
        small = Path(tempfile.mkdtemp(prefix="gm-shape-quick-")) / "pkg"
        (small / "models").mkdir(parents=True)
        for f in (small / "__init__.py", small / "models" / "__init__.py"):
            f.write_text("")
        for m in ("t5", "bart"):
            shutil.copytree(tree / "models" / m, small / "models" / m,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        tree = small
    r = measure(tree, a.line_length, a.jobs, a.keep)
    if a.quick:
        shutil.rmtree(tree.parent, ignore_errors=True)
    r["wall s"] = round(time.perf_counter() - t0, 1)
    print(render(r, a.markdown))
    if a.json:
        Path(a.json).write_text(json.dumps(r, indent=1))
    bad = (r["fix rc"] not in (0, 1) or r["added lines over the line length"] or r["private _gm_ names in added lines"]
           or r["added lines with trailing whitespace"]
           or r["pasted helper blocks"] or r["mended files that do not parse"] or r["second fix: files changed"]
           or r["files with more than one import added"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
