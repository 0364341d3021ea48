"""Are `graphmend fix --unsafe-fixes` mends safe to apply at scale? Checked on all of transformers.

    python benchmarks/fix_robustness.py [--transformers DIR] [--families a,b,...] [--no-top-level]
                                        [--imports N|all] [--jobs N] [--keep] [--verbose]

The installed ``transformers`` package is copied to a temp dir; ``python -m graphmend fix
--unsafe-fixes`` (the CLI) rewrites the copy's ``models/`` tree and its top-level ``modeling_*.py``
files in place. Then, for every file the CLI changed:

  (a) parse      the mended file parses and compiles (``compile``, which also catches a
                 misplaced ``from __future__`` import that ``ast.parse`` accepts);
  (b) idempotent ``graphmend fix --unsafe-fixes --diff`` on the same paths changes nothing more;
  (c) sites      ``graphmend check --format json`` on the mended tree reports no GM101/GM102/GM103/
                 GM201/GM301 at a site that was fixed (sites matched by code and the finding's
                 source text, since lines shift), and no finding that was not there before;
  (d) ranges     each fix pass (``rewrite.fix_source`` run again in-process, with the cross-file
                 scope the CLI used, its passes and edits recorded) changed only its fix ranges:
                 every difflib hunk between a pass's input and output lies within the text edits
                 of the applied findings (one line of slack) or the runtime's import line; every
                 edit lies in its finding's statement (or the `return` after it, which [Where]
                 folds in) and replaces no other code on its lines; every statement that differs
                 structurally (ast, positions ignored) holds a fixed site or lies in the mended
                 statement; no comment is lost; the runtime is bound once (one import line at
                 module level, or the inline block verbatim) when the file calls `graphmend.*`;
  (e) import     ``import transformers.models.<family>.modeling_<family>`` of the mended copy (in a
                 subprocess, the copy first on PYTHONPATH) fails only where the original fails too;
  (f) consistent the API replay gives the CLI's text, and the fix counts the CLI printed.

Figures: files scanned, files changed, fixes applied by code, failures per check, wall time.
Exits 1 on any failure (each is listed), 2 when the run itself could not be done.

The recording and check helpers (``replay``, ``pass_problems``, ``site_problems``...) are used by
``tests/test_fix_properties.py`` too.
"""

from __future__ import annotations

import argparse
import ast
import collections
import concurrent.futures as cf
import difflib
import importlib.util
import json
import multiprocessing
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SERVER = REPO / "server"
if str(SERVER) not in sys.path:
    sys.path.insert(0, str(SERVER))

from graphmend.textlines import split_lines
from graphmend import analysis, scan  # noqa: E402
from graphmend.analysis.engine import LineIndex  # noqa: E402
from graphmend.config import Settings  # noqa: E402
from graphmend.findings import Finding  # noqa: E402

FIXED_CODES = ("GM101", "GM102", "GM103", "GM201", "GM301")
CHECKS = ("parse", "idempotent", "sites", "ranges", "import", "consistent")
SLACK = 1  # lines of slack around an edit for difflib's alignment choices
ALWAYS_IMPORT = ("llama", "bert", "t5", "gpt2", "whisper", "bart", "mistral", "phi3", "longformer",
                 "grounding_dino")


# --------------------------------------------------------------------------------------------------
# Sites: a finding identified by its code and source text (line numbers shift when fixing)
# --------------------------------------------------------------------------------------------------


def span_text(text: str, sl: int, sc: int, el: int, ec: int) -> str:
    lines = split_lines(text, keepends=True)  # Python's line breaks, as ast counts them
    if not 1 <= sl <= len(lines) or not 1 <= el <= len(lines):
        return ""
    if sl == el:
        return lines[sl - 1][sc:ec]
    return lines[sl - 1][sc:] + "".join(lines[sl:el - 1]) + lines[el - 1][:ec]


def site_key(code: str, text: str, sl: int, sc: int, el: int, ec: int) -> tuple[str, str]:
    return code, " ".join(span_text(text, sl, sc, el, ec).split())


def finding_key(f: Finding, text: str) -> tuple[str, str]:
    s = f.span
    return site_key(f.code, text, s.start.line, s.start.col, s.end.line, s.end.col)


def json_key(d: dict, text: str) -> tuple[str, str]:
    s = d["span"]
    return site_key(d["code"], text, s["start"]["line"], s["start"]["col"], s["end"]["line"],
                    s["end"]["col"])


def site_problems(applied_keys: list, before_keys: list, after_keys: list,
                  codes=FIXED_CODES) -> list[str]:
    """(c): a fixed site must not be reported again; no finding may appear that was not there."""
    A = collections.Counter(applied_keys)
    B = collections.Counter(before_keys)
    R = collections.Counter(after_keys)
    out = []
    for k, n in sorted(A.items()):
        if k[0] in codes and R[k] > max(0, B[k] - n):
            out.append(f"{k[0]} still reported at a fixed site: {k[1][:160]!r}")
    for k, n in sorted(R.items()):
        if k not in A and n > B[k]:
            out.append(f"new finding after fixing: {k[0]} at {k[1][:160]!r}")
    return out


# --------------------------------------------------------------------------------------------------
# Replaying the fix loop pass by pass, with each pass's edits
# --------------------------------------------------------------------------------------------------


@dataclass
class Pass:
    before: str
    after: str
    applied: list  # (Finding, [TextEdit]) on `before`
    helper: Optional[object] = None  # the helper-insertion TextEdit on `before`, if any


@dataclass
class Replay:
    text: str
    passes: list[Pass] = field(default_factory=list)
    result: object = None  # the FixResult of `rewrite.fix_source`

    @property
    def applied(self) -> list[Finding]:
        return [f for p in self.passes for f, _ in p.applied]

    def applied_keys(self) -> list[tuple[str, str]]:
        return [finding_key(f, p.before) for p in self.passes for f, _ in p.applied]


def replay(text: str, path: str, settings: Optional[Settings] = None, unsafe: bool = True,
           external: Optional[dict] = None) -> Replay:
    """Run the real `rewrite.fix_source`, recording each pass's input, output, applied findings
    and their text edits (by wrapping `one_pass`, `fix_edits` and `helper_insertion`)."""
    import graphmend.rules as rules
    from graphmend.rewrite import apply as ap

    rec = Replay(text)
    edits: dict[int, list] = {}
    helpers: list = []
    real_one_pass, real_fix_edits, real_helper = ap.one_pass, rules.fix_edits, ap.helper_insertion

    def fix_edits(f, *a, **k):
        es = real_fix_edits(f, *a, **k)
        edits[id(f)] = list(es or [])
        return es

    def helper_insertion(t, *a, **k):
        e = real_helper(t, *a, **k)
        helpers.append(e)
        return e

    def one_pass(t, *a, **k):
        edits.clear()
        helpers.clear()
        new, applied, skipped, found = real_one_pass(t, *a, **k)
        if applied:
            rec.passes.append(Pass(t, new, [(f, edits.get(id(f), [])) for f in applied],
                                   helpers[-1] if helpers else None))
        return new, applied, skipped, found

    ap.one_pass, rules.fix_edits, ap.helper_insertion = one_pass, fix_edits, helper_insertion
    try:
        rec.result = ap.fix_source(text, path, settings, unsafe=unsafe, external=external)
    finally:
        ap.one_pass, rules.fix_edits, ap.helper_insertion = real_one_pass, real_fix_edits, real_helper
    rec.text = rec.result.text
    return rec


def _edit_lines(e) -> tuple[int, int]:
    s, t = e.span.start, e.span.end
    hi = t.line - 1 if (t.line > s.line and t.col == 0) else t.line
    return s.line, max(s.line, hi)


def _stmt_nodes(tree: ast.Module, f: Finding, lines: LineIndex):
    """The innermost statement holding the finding's span, and the one after it that the fix
    may fold in (only [Where]'s `if c: return A` + `return B`), else None."""
    s = f.span
    best, nxt, best_key = None, None, None
    for node in ast.walk(tree):
        for fld in ("body", "orelse", "finalbody", "handlers"):
            seq = getattr(node, fld, None)
            if not isinstance(seq, list):
                continue
            for i, st in enumerate(seq):
                if not isinstance(st, (ast.stmt, ast.excepthandler)):
                    continue
                a = (st.lineno, lines.col(st.lineno, st.col_offset))
                b = (st.end_lineno, lines.col(st.end_lineno, st.end_col_offset))
                if a <= (s.start.line, s.start.col) and b >= (s.end.line, s.end.col):
                    key = (a, (-b[0], -b[1]))  # latest start, then earliest end: innermost
                    if best_key is None or key >= best_key:
                        best, best_key = st, key
                        nxt = seq[i + 1] if i + 1 < len(seq) else None
    if f.code == "GM601":  # [Route] rewrites its whole dispatch loop (and the hit list before it)
        loops = [n for n in ast.walk(tree) if isinstance(n, ast.For)
                 and (n.lineno, 0) <= (s.start.line, s.start.col) and n.end_lineno >= s.end.line]
        if loops:
            return max(loops, key=lambda n: n.lineno), None
        return best, (nxt if isinstance(nxt, ast.For) else None)
    if not (f.code == "GM201" and isinstance(nxt, ast.Return)):
        nxt = None
    return best, nxt


def _other_statements(f: Finding) -> list[tuple[int, int]]:
    """Line ranges of the statements outside the finding's own that its fix rewrites by design:
    [Route] GM605 also rewrites the split and the concatenation in the experts' module."""
    if f.code != "GM605" or f.site is None:
        return []
    from graphmend.rules import grouped
    symbols = getattr(f.site, "grouped_symbols", None)
    if symbols is None:
        return []
    return [(s.lineno, s.end_lineno) for s in grouped.edited_statements(f.site, symbols)[1:]]


def _stmt_region(tree: ast.Module, f: Finding, lines: LineIndex) -> tuple[int, int]:
    """Lines of the innermost statement holding the finding (and the `return` [Where] folds in)."""
    best, nxt = _stmt_nodes(tree, f, lines)
    if best is None:
        return f.span.start.line, f.span.end.line
    return best.lineno, (nxt or best).end_lineno


def _code_outside(text: str, lines: LineIndex, f: Finding, edits: list, tree: ast.Module) -> list[str]:
    """Code (not whitespace, comments or a line continuation) an edit replaces outside its
    finding's statement and the one after it: another statement on the same line (`a; assert c`),
    or the header of the compound statement the finding's body is on (`if s: assert c`)."""
    best, nxt = _stmt_nodes(tree, f, lines)
    if best is None:
        return []
    from graphmend.rewrite.apply import _offset
    tl = split_lines(text, keepends=True) or [""]
    last = nxt or best
    lo = _offset(tl, best.lineno, lines.col(best.lineno, best.col_offset))
    hi = _offset(tl, last.end_lineno, lines.col(last.end_lineno, last.end_col_offset))
    out = []
    for e in edits:
        a = _offset(tl, e.span.start.line, e.span.start.col)
        b = _offset(tl, e.span.end.line, e.span.end.col)
        for piece in (text[a:min(b, lo)], text[max(a, hi):b]):
            code = "\n".join(ln.split("#", 1)[0] for ln in piece.split("\n"))
            if code.replace("\\", "").strip():
                out.append(f"{f.code} at line {f.span.start.line}: the edit also replaces code outside "
                           f"the finding's statement: {piece.strip()[:80]!r}")
    return out


def _stmts(tree: ast.AST):
    return [n for n in ast.walk(tree) if isinstance(n, (ast.stmt, ast.excepthandler))]


def _hashes(tree: ast.AST) -> dict[int, int]:
    """id(node) -> a structural hash (type and fields, positions ignored), in one bottom-up pass."""
    memo: dict[int, int] = {}

    def h(node) -> int:
        parts: list = [type(node).__name__]
        for _, v in ast.iter_fields(node):
            if isinstance(v, ast.AST):
                parts.append(h(v))
            elif isinstance(v, list):
                parts.append(tuple(h(x) if isinstance(x, ast.AST) else repr(x) for x in v))
            else:
                parts.append(repr(v))
        memo[id(node)] = r = hash(tuple(parts))
        return r

    h(tree)
    return memo


def ast_problems(p: Pass) -> list[str]:
    """(d), independent of how text is split into lines: every statement of the input that is not
    in the output (compared structurally, positions ignored) holds a fixed site, lies inside the
    statement being mended, or is the `return` [Where] folds in."""
    try:
        t0, t1 = ast.parse(p.before), ast.parse(p.after)
    except SyntaxError:
        return []
    lines = LineIndex(p.before)
    h0, h1 = _hashes(t0), _hashes(t1)
    s0 = _stmts(t0)
    allowed = collections.Counter()
    sites = []
    for f, _ in p.applied:
        sites.append(((f.span.start.line, f.span.start.col), (f.span.end.line, f.span.end.col)))
        best, nxt = _stmt_nodes(t0, f, lines)
        for m in (_stmts(nxt) if nxt is not None else []) + (_stmts(best)[1:] if best is not None else []):
            allowed[h0[id(m)]] += 1  # the folded return or [Route]'s loop; the statements inside the mended one
        for x, y in _other_statements(f):  # GM605: the experts' split and concatenation
            for m in s0:
                if x <= m.lineno and m.end_lineno <= y:
                    allowed[h0[id(m)]] += 1
            sites.append(((x, 0), (y, 0)))  # the def and class around them change with them
    for n in s0:
        a = (n.lineno, lines.col(n.lineno, n.col_offset))
        b = (n.end_lineno, lines.col(n.end_lineno, n.end_col_offset))
        if any(a <= s and e <= b for s, e in sites):
            allowed[h0[id(n)]] += 1
    removed = (collections.Counter(h0[id(n)] for n in s0)
               - collections.Counter(h1[id(n)] for n in _stmts(t1)))
    out = []
    for k, n in removed.items():
        if n > allowed[k]:
            src = next((ast.unparse(m) for m in s0 if h0[id(m)] == k), "?")
            out.append(f"a statement with no fixed site in it was changed or removed: {src.splitlines()[0][:100]!r}")
    return out


def hunks(a: str, b: str) -> list[tuple[int, int, int, int]]:
    """difflib's changed blocks between two texts: (i1, i2, j1, j2), 0-based half-open line ranges."""
    sm = difflib.SequenceMatcher(None, split_lines(a, keepends=True), split_lines(b, keepends=True),
                                 autojunk=False)
    return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in sm.get_opcodes() if tag != "equal"]


def _rebuilt(p: Pass) -> Optional[str]:
    """The pass' edits (and its helper insertion) applied to its old text; None if they cannot be."""
    from graphmend.rewrite.apply import apply_edits

    edits = [e for _, es in p.applied for e in es] + ([p.helper] if p.helper is not None else [])
    try:
        return apply_edits(p.before, edits)
    except Exception:
        return None


def pass_problems(p: Pass) -> list[str]:
    """(d) for one pass: hunks within the edits; edits within their findings' statements."""
    out = []
    regions = [_edit_lines(e) for _, es in p.applied for e in es]
    if p.helper is not None:
        regions.append(_edit_lines(p.helper))
    for f, es in p.applied:
        if not es:
            out.append(f"{f.code} at line {f.span.start.line}: applied, but its edits could not be rebuilt")
    try:
        tree = ast.parse(p.before)
    except SyntaxError:
        tree = None
    lines = LineIndex(p.before)
    if tree is not None:
        for f, es in p.applied:
            lo, hi = _stmt_region(tree, f, lines)
            others = _other_statements(f)
            own = []
            for e in es:
                a, b = _edit_lines(e)
                if any(x <= a and b <= y for x, y in others):
                    continue  # GM605: the experts' split / concatenation, rewritten by design
                own.append(e)
                if b < lo or a > hi:
                    out.append(f"{f.code} at line {f.span.start.line}: an edit at lines {a}-{b} lies "
                               f"outside the finding's statement (lines {lo}-{hi})")
            out.extend(_code_outside(p.before, lines, f, own, tree))

    def allowed(line: int) -> bool:
        return any(a - SLACK <= line <= b + SLACK for a, b in regions)

    out.extend(ast_problems(p))
    if _rebuilt(p) == p.after:
        # the edits alone make the new text: nothing changed outside them (a line diff can pair
        # repeated identical blocks differently and show a change where there is none)
        return out
    before_lines = split_lines(p.before)
    for i1, i2, j1, j2 in hunks(p.before, p.after):
        if i2 > i1:
            bad = [n for n in range(i1 + 1, i2 + 1) if not allowed(n)]
        else:  # a pure insertion between old lines i1 and i1 + 1
            bad = [] if (allowed(i1) or allowed(i1 + 1)) else [i1 + 1]
        if bad:
            n = bad[0]
            shown = before_lines[n - 1].strip() if 1 <= n <= len(before_lines) else ""
            out.append(f"changed outside the fix ranges: old lines {i1 + 1}-{i2} -> new {j1 + 1}-{j2} "
                       f"(e.g. line {n}: {shown[:100]!r})")
    return out


HELPER_CALL = re.compile(r"(?<![\w.])graphmend\.([a-z_]+)\s*\(")


def _binds(tree: ast.Module) -> int:
    """How many module-level statements bind `graphmend` to the runtime (import or inline block)."""
    n = 0
    for s in tree.body:
        if isinstance(s, (ast.Import, ast.ImportFrom)):
            n += sum(a.asname == "graphmend" and a.name in ("_graphmend_runtime", "runtime") for a in s.names)
        elif isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "graphmend" for t in s.targets):
            n += 1  # the inline block's first line
    return n


def helper_problems(original: str, mended: str) -> list[str]:
    """(d): the runtime is bound once, at module level, when the mended file calls it; the
    helpers called are the runtime's; no helper block is pasted unless inline was asked for."""
    from graphmend.rewrite import runtime
    out = []
    called = set(HELPER_CALL.findall(mended)) - set(HELPER_CALL.findall(original))
    try:
        t0, t1 = ast.parse(original), ast.parse(mended)
    except SyntaxError:
        return out
    added = _binds(t1) - _binds(t0)
    if not called:
        if added:
            out.append("the runtime was bound, but nothing calls it")
        return out
    if runtime.binds_runtime(original):
        return out
    if added != 1:
        out.append(f"the runtime was bound {added} times (want 1)")
    if "(inline;" in mended and runtime.inline_block() not in mended:
        out.append("the inline runtime block is not in the file verbatim")
    unknown = sorted(c for c in called if c not in runtime.NAMES)
    if unknown:
        out.append(f"calls runtime helpers that do not exist: {', '.join(unknown)}")
    return out


def _comments(text: str) -> collections.Counter:
    import io
    import tokenize
    try:
        return collections.Counter(t.string.strip() for t in tokenize.generate_tokens(io.StringIO(text).readline)
                                   if t.type == tokenize.COMMENT)
    except (tokenize.TokenError, SyntaxError):
        return collections.Counter()


def comment_problems(original: str, mended: str) -> list[str]:
    """(d): no comment of the original is lost (a fix may move a comment, not drop it)."""
    lost = _comments(original) - _comments(mended)
    return [f"comment lost: {c[:100]!r}" for c in sorted(lost)]


def compile_problem(text: str, path: str) -> Optional[str]:
    try:
        compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as e:
        return f"does not compile: {e.msg} (line {e.lineno}): {(e.text or '').strip()[:100]!r}"
    except (ValueError, RecursionError, MemoryError) as e:
        return f"does not compile: {type(e).__name__}: {e}"
    return None


# --------------------------------------------------------------------------------------------------
# The per-file worker (API replay + checks a, c, d, f)
# --------------------------------------------------------------------------------------------------


def check_file(job: dict) -> dict:
    path, original, mended = job["path"], job["original"], job["mended"]
    problems: dict[str, list[str]] = collections.defaultdict(list)
    why = compile_problem(mended, path)
    if why:
        problems["parse"].append(why)
    rep = None
    try:
        rep = replay(original, path, Settings(), True, job["external"])
    except Exception as e:  # the fix loop itself crashed
        problems["consistent"].append(f"API replay raised {type(e).__name__}: {e}")
    counts = collections.Counter()
    if rep is not None:
        counts = collections.Counter(f.code for f in rep.applied)
        if rep.text != mended:
            d = hunks(rep.text, mended)
            problems["consistent"].append(
                f"API replay text differs from the CLI's ({len(d)} hunks, first at line {d[0][0] + 1})"
                if d else "API replay text differs from the CLI's (line endings?)")
        if dict(counts) != job["cli_counts"]:
            problems["consistent"].append(f"CLI printed {job['cli_counts']}, the API applied {dict(counts)}")
        for p in rep.passes:
            problems["ranges"].extend(pass_problems(p))
        before = [json_key(d, original) for d in job["before"]]
        after = [json_key(d, mended) for d in job["after"]]
        problems["sites"].extend(site_problems(rep.applied_keys(), before, after))
    problems["ranges"].extend(helper_problems(original, mended))
    problems["ranges"].extend(comment_problems(original, mended))
    return {"path": path, "problems": {k: v for k, v in problems.items() if v},
            "counts": dict(counts), "passes": len(rep.passes) if rep else 0}


# --------------------------------------------------------------------------------------------------
# Imports (e)
# --------------------------------------------------------------------------------------------------

IMPORT_CHILD = r"""
import importlib, json, os, sys, warnings
warnings.simplefilter("ignore")
want_root = sys.argv[1]
mods = json.loads(sys.stdin.read())
import transformers
res = {"__transformers__": transformers.__file__}
for m in mods:
    try:
        mod = importlib.import_module(m)
        f = os.path.realpath(getattr(mod, "__file__", "") or "")
        if want_root and not f.startswith(os.path.realpath(want_root)):
            res[m] = "WRONG-COPY: imported " + f
        else:
            res[m] = "ok"
    except BaseException as e:
        res[m] = type(e).__name__ + ": " + str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
print("\n@@RESULT@@" + json.dumps(res))
"""


def run_imports(mods: list[str], pythonpath: Optional[str], timeout: float) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.update(PYTHONDONTWRITEBYTECODE="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               TRANSFORMERS_VERBOSITY="error", TOKENIZERS_PARALLELISM="false")
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    try:
        r = subprocess.run([sys.executable, "-c", IMPORT_CHILD, pythonpath or ""], input=json.dumps(mods),
                           capture_output=True, text=True, env=env, timeout=timeout, cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        return {m: "TIMEOUT" for m in mods}
    if "@@RESULT@@" not in r.stdout:
        tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["no output"]
        return {m: f"CHILD FAILED rc={r.returncode}: {tail[0][:200]}" for m in mods}
    return json.loads(r.stdout.rsplit("@@RESULT@@", 1)[1])


# --------------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------------


def find_transformers() -> Path:
    spec = importlib.util.find_spec("transformers")
    if spec is None or not spec.origin:
        raise SystemExit("fix_robustness: transformers is not installed (use --transformers DIR)")
    return Path(spec.origin).parent


def cli(args: list[str], cwd: str, timeout: float = 3600) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SERVER) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return subprocess.run([sys.executable, "-m", "graphmend", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=timeout)


def parse_fix_table(stdout: str) -> dict[str, dict[str, int]]:
    """`fix --show-fixes`: '- PATH:' then '    N × CODE (name)' lines."""
    out: dict[str, dict[str, int]] = {}
    cur = None
    for line in stdout.splitlines():
        m = re.match(r"^- (.*):$", line)
        if m:
            cur = os.path.abspath(m.group(1))
            out[cur] = {}
            continue
        m = re.match(r"^\s+(\d+) × (GM\d+)", line)
        if m and cur is not None:
            out[cur][m.group(2)] = int(m.group(1))
            continue
        if line.strip() and not line.startswith("Fixed "):
            cur = None
    return out


def _read(path: str) -> Optional[str]:
    """The text as graphmend reads it (BOM dropped, line endings normalised); None if unreadable."""
    try:
        return scan.read_source(path).text
    except scan.SourceError:
        return None


def by_path(findings_json: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = collections.defaultdict(list)
    for d in findings_json:
        out[os.path.abspath(d["path"])].append(d)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--transformers", type=Path, help="the transformers package dir (default: installed)")
    ap.add_argument("--families", help="only these models/<family> dirs (comma-separated)")
    ap.add_argument("--no-top-level", action="store_true", help="skip the top-level modeling_*.py files")
    ap.add_argument("--imports", default="40", help="families to import-check: N (seeded sample "
                    "of the changed ones, plus a few always) or 'all'")
    ap.add_argument("--jobs", type=int, default=scan.default_jobs())
    ap.add_argument("--keep", action="store_true", help="keep the temp copy and print its path")
    ap.add_argument("--verbose", "-v", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    timings: dict[str, float] = {}

    def lap(name: str, since: float) -> float:
        now = time.perf_counter()
        timings[name] = now - since
        if args.verbose:
            print(f"  [{name}: {now - since:.1f}s]", file=sys.stderr, flush=True)
        return now

    src = (args.transformers or find_transformers()).resolve()
    tmp = Path(tempfile.mkdtemp(prefix="graphmend-robust-"))
    copy = tmp / "transformers"
    failures: dict[str, list[str]] = {c: [] for c in CHECKS}
    try:
        shutil.copytree(src, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        if args.families:
            fams = [f.strip() for f in args.families.split(",") if f.strip()]
            targets = [str(copy / "models" / f) for f in fams if (copy / "models" / f).is_dir()]
        else:
            targets = [str(copy / "models")]
        if not args.no_top_level:
            targets += sorted(str(p) for p in copy.glob("modeling_*.py"))
        settings = Settings()
        files, errs = scan.discover(targets, settings)
        files = [os.path.abspath(f) for f in files]
        originals = {f: _read(f) for f in files}
        t = lap("copy", t0)

        # Before: findings (as check reports them) and the cross-file scope fix uses.
        summaries = scan.summarize_files(files, settings, args.jobs)
        ok = [(p, s) for p, s in zip(files, summaries) if not isinstance(s, str)]
        reached = analysis.reach([s.scope for _, s in ok if s.scope is not None])
        external = {p: reached.get(s.scope.module, {}) if s.scope else {} for p, s in ok}
        before: dict[str, list[dict]] = {}
        for (p, _), fa in zip(ok, analysis.analyze_many([s for _, s in ok], settings)):
            before[p] = [f.to_json() for f in fa.findings if scan.shown(f.code, settings)]
        before_codes = collections.Counter(d["code"] for fs in before.values() for d in fs)
        t = lap("check before (API)", t)

        # Fix with the CLI.
        r = cli(["fix", "--unsafe-fixes", "--show-fixes", "--jobs", str(args.jobs), *targets], str(tmp))
        if r.returncode not in (0, 1):
            failures["consistent"].append(f"`graphmend fix` exited {r.returncode}: "
                                          + " | ".join(r.stderr.strip().splitlines()[-5:]))
        cli_counts = parse_fix_table(r.stdout)
        mended = {f: _read(f) for f in files}
        changed = [f for f in files if mended[f] != originals[f]]
        for f in set(cli_counts) - set(changed):
            failures["consistent"].append(f"{f}: the CLI reports fixes but the file did not change")
        t = lap("fix (CLI)", t)

        # After: check the mended tree with the CLI.
        r2 = cli(["check", "--format", "json", "--exit-zero", "--jobs", str(args.jobs), *targets], str(tmp))
        try:
            after = by_path(json.loads(r2.stdout or "[]"))
        except json.JSONDecodeError:
            after = {}
            failures["consistent"].append(f"`graphmend check --format json` gave no JSON (rc {r2.returncode})")
        if r2.returncode != 0:
            failures["consistent"].append(f"`graphmend check` on the mended tree exited {r2.returncode}: "
                                          + " | ".join(r2.stderr.strip().splitlines()[-5:]))
        after_codes = collections.Counter(d["code"] for fs in after.values() for d in fs)
        t = lap("check after (CLI)", t)

        # (b) Idempotence: a second fix would change nothing.
        r3 = cli(["fix", "--unsafe-fixes", "--diff", "--jobs", str(args.jobs), *targets], str(tmp))
        if r3.returncode == 1:
            again = sorted({os.path.abspath(m.group(1)) for m in
                            re.finditer(r"^\+\+\+ (?:b/)?(.*?)(?:\t.*)?$", r3.stdout, re.MULTILINE)})
            for f in again or ["(unknown files)"]:
                failures["idempotent"].append(f"{os.path.relpath(f, tmp)}: a second `fix` changes it again")
            if args.verbose:
                print(r3.stdout[:4000], file=sys.stderr)
        elif r3.returncode != 0:
            failures["idempotent"].append(f"second `fix --diff` exited {r3.returncode}: "
                                          + " | ".join(r3.stderr.strip().splitlines()[-5:]))
        t = lap("fix again (CLI --diff)", t)

        # (a), (c), (d), (f) per changed file, replaying the fix through the API.
        jobs = [{"path": f, "original": originals[f], "mended": mended[f], "external": external.get(f, {}),
                 "before": before.get(f, []), "after": after.get(f, []), "cli_counts": cli_counts.get(f, {})}
                for f in changed]
        results = []
        if args.jobs > 1 and len(jobs) > 1:
            ctx = multiprocessing.get_context("fork")
            with cf.ProcessPoolExecutor(args.jobs, mp_context=ctx) as ex:
                results = list(ex.map(check_file, jobs, chunksize=4))
        else:
            results = [check_file(j) for j in jobs]
        applied = collections.Counter()
        passes = collections.Counter()
        for res in results:
            applied.update(res["counts"])
            passes[res["passes"]] += 1
            rel = os.path.relpath(res["path"], tmp)
            for check, msgs in res["problems"].items():
                failures[check].extend(f"{rel}: {m}" for m in msgs)
        t = lap("replay + checks (API)", t)

        # (e) Imports of the mended modules vs the original ones.
        fams_changed = sorted({Path(f).parent.name for f in changed
                               if Path(f).parent.parent == copy / "models"
                               and Path(f).name == f"modeling_{Path(f).parent.name}.py"})
        if args.imports == "all":
            sample = fams_changed
        else:
            n = int(args.imports)
            always = [f for f in ALWAYS_IMPORT if f in fams_changed]
            rest = [f for f in fams_changed if f not in always]
            random.Random(0).shuffle(rest)
            sample = sorted(always + rest[:max(0, n - len(always))])
        mods = [f"transformers.models.{f}.modeling_{f}" for f in sample]
        mods += [f"transformers.{Path(f).stem}" for f in changed if Path(f).parent == copy]
        imp_timeout = 120 + 10 * len(mods)
        orig_res = run_imports(mods, None, imp_timeout)
        mend_res = run_imports(mods, str(tmp), imp_timeout)
        new_fail = [m for m in mods if orig_res.get(m) == "ok" and mend_res.get(m) != "ok"]
        for m in new_fail:
            failures["import"].append(f"{m}: {mend_res.get(m)}")
        both_fail = [m for m in mods if orig_res.get(m) != "ok" and mend_res.get(m) != "ok"]
        t = lap("imports", t)

        # Figures.
        wall = time.perf_counter() - t0
        print("GraphMend fix robustness on transformers "
              f"({src}; {'families ' + args.families if args.families else 'models/ + modeling_*.py'})")
        print(f"  files scanned        {len(files)}" + (f" ({len(errs)} unreadable)" if errs else ""))
        print(f"  files changed        {len(changed)}")
        print(f"  findings before      {sum(before_codes.values())}  "
              + " ".join(f"{c}:{n}" for c, n in sorted(before_codes.items())))
        print(f"  findings after       {sum(after_codes.values())}  "
              + " ".join(f"{c}:{n}" for c, n in sorted(after_codes.items())))
        print(f"  fixes applied        {sum(applied.values())}  "
              + " ".join(f"{c}:{n}" for c, n in sorted(applied.items())))
        print(f"  fixes (CLI count)    {sum(n for d in cli_counts.values() for n in d.values())}")
        print("  fix passes per file  " + " ".join(f"{k}:{v}" for k, v in sorted(passes.items())))
        print(f"  imports checked      {len(mods)} modules ({len(both_fail)} fail in the original too)")
        print("  failures             " + " ".join(f"{c}:{len(failures[c])}" for c in CHECKS))
        print(f"  wall time            {wall:.1f}s  ("
              + ", ".join(f"{k} {v:.0f}s" for k, v in timings.items()) + f"; jobs={args.jobs})")
        n_fail = sum(len(v) for v in failures.values())
        for c in CHECKS:
            for m in failures[c]:
                print(f"FAIL [{c}] {m}")
        if both_fail and args.verbose:
            for m in both_fail:
                print(f"  (fails in both) {m}: {orig_res.get(m)}")
        if args.keep:
            print(f"  temp copy kept at {tmp}")
        return 1 if n_fail else 0
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, subprocess.SubprocessError) as e:
        print(f"fix_robustness: could not run: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(2)
