"""Properties every fix must have, on real transformers modeling files (through the Python API):

* the mended file compiles; fixing it again changes nothing;
* no GM101/GM102/GM103/GM201/GM301 is reported again at a site that was fixed, and fixing adds
  no finding that was not there;
* only the fix ranges changed (difflib hunks of each fix pass lie within its edits, each edit in
  its finding's statement, no other statement differs), no comment is lost, and the helper block
  is there once, verbatim, at module level;
* three mended modules import (in a subprocess, under their real module names);
* mutated files (a line deleted or duplicated, the text truncated, a tab, a form feed or a
  non-ASCII character inserted) never make `analyze_source` or `fix_source` raise, and what they produce parses.

The whole-package version, through the CLI, is `benchmarks/fix_robustness.py`; the checks are
shared with it.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

import fix_robustness as fr  # noqa: E402
from graphmend import scan  # noqa: E402
from graphmend.analysis import analyze_source  # noqa: E402
from graphmend.rewrite import fix_source, runtime  # noqa: E402

_spec = importlib.util.find_spec("transformers")
TF = Path(_spec.origin).parent if _spec and _spec.origin else None
pytestmark = pytest.mark.skipif(TF is None, reason="transformers is not installed")

FAMILIES = ["t5", "bart", "whisper", "phi3", "longformer", "grounding_dino", "llama", "mistral", "gpt2",
            "bert", "mbart", "pegasus", "marian", "blenderbot", "m2m_100"]
IMPORTED = ["llama", "bert", "t5"]
MUTATED = ["llama", "grounding_dino", "encoder_decoder"]  # GM102 / GM201+GM301 / GM103 sites
MUTATIONS_PER_FILE = 50


def _path(fam: str) -> Path:
    return TF / "models" / fam / f"modeling_{fam}.py"


PRESENT = [f for f in FAMILIES if TF is not None and _path(f).is_file()]


@pytest.fixture(scope="module")
def mended() -> dict:
    """family -> (path, original text, Replay of fix_source --unsafe-fixes)."""
    out = {}
    for fam in PRESENT:
        path = str(_path(fam))
        text = Path(path).read_text(encoding="utf-8")
        out[fam] = (path, text, fr.replay(text, path, unsafe=True))
    return out


def test_the_files_exercise_the_fixes(mended):
    assert len(PRESENT) >= 12, f"expected most of {FAMILIES} in transformers, found {PRESENT}"
    codes = {f.code for _, _, rep in mended.values() for f in rep.applied}
    changed = [fam for fam, (_, text, rep) in mended.items() if rep.text != text]
    assert len(changed) >= 10, changed
    assert "GM102" in codes and codes & {"GM201", "GM301"}, codes  # [Defer] and [Where]/[Trap]


@pytest.mark.parametrize("fam", PRESENT)
def test_mended_file_compiles(mended, fam):
    path, text, rep = mended[fam]
    assert fr.compile_problem(rep.text, path) is None


@pytest.mark.parametrize("fam", PRESENT)
def test_fixing_again_changes_nothing(mended, fam):
    path, text, rep = mended[fam]
    again = fix_source(rep.text, path, unsafe=True)
    assert again.applied == [] and again.text == rep.text


@pytest.mark.parametrize("fam", PRESENT)
def test_fixed_sites_are_not_reported_again(mended, fam):
    path, text, rep = mended[fam]
    before = [fr.finding_key(f, text) for f in analyze_source(text, path).findings]
    after = [fr.finding_key(f, rep.text) for f in rep.result.remaining]
    assert fr.site_problems(rep.applied_keys(), before, after) == []


@pytest.mark.parametrize("fam", PRESENT)
def test_only_fix_ranges_change(mended, fam):
    path, text, rep = mended[fam]
    problems = [m for p in rep.passes for m in fr.pass_problems(p)]
    problems += fr.helper_problems(text, rep.text) + fr.comment_problems(text, rep.text)
    assert problems == []


def test_checks_catch_edits_outside_fix_ranges():
    """The range check itself: a stray change and a fix that eats a neighbouring statement."""
    src = ("import torch\n\n\n@torch.compile\ndef f(x):\n    y = x + 1\n    z = y * 2\n\n"
           "    print(x)\n    return y\n")
    rep = fr.replay(src, "<string>")
    assert len(rep.passes) == 1 and fr.pass_problems(rep.passes[0]) == []
    p = rep.passes[0]
    p.after = p.after.replace("y = x + 1", "y = x + 2")
    assert any("outside the fix ranges" in m for m in fr.pass_problems(p))
    p.after = rep.text
    e = p.applied[0][1][0]
    wide = type(e)(type(e.span)(type(e.span.start)(e.span.start.line - 2, 4), e.span.end), e.text)
    p.applied[0] = (p.applied[0][0], [wide])
    assert any("outside the finding's statement" in m for m in fr.pass_problems(p))
    assert fr.site_problems([("GM101", "print(x)")], [("GM101", "print(x)")],
                            [("GM101", "print(x)")]) != []


IMPORT_CHILD = r"""
import importlib, importlib.util, json, sys, warnings
warnings.simplefilter("ignore")
res = {}
for name, path in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name.rsplit(".", 1)[0])  # the package, as the real import would
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        if name.endswith("._graphmend_runtime"):
            continue  # the vendored copy the mended modules import
        rt = getattr(mod, "graphmend", None)
        ok = rt is not None and callable(getattr(rt, "log", None))
        res[name] = "ok" if ok and rt._op is not None else "runtime missing or op not registered"
    except BaseException as e:
        res[name] = f"{type(e).__name__}: {e}"
print(json.dumps(res))
"""


def test_mended_modules_import(mended, tmp_path):
    copy = tmp_path / "_graphmend_runtime.py"  # what `graphmend fix` vendors into transformers/
    copy.write_text(runtime.vendored_text(), encoding="utf-8")
    pairs = [("transformers._graphmend_runtime", str(copy))]
    for fam in IMPORTED:
        if fam not in mended:
            continue
        path, text, rep = mended[fam]
        assert rep.text != text
        p = tmp_path / f"modeling_{fam}.py"
        p.write_text(rep.text, encoding="utf-8")
        pairs.append((f"transformers.models.{fam}.modeling_{fam}", str(p)))
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    r = subprocess.run([sys.executable, "-c", IMPORT_CHILD, json.dumps(pairs)], capture_output=True,
                       text=True, env=env, timeout=300, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr[-2000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res == {name: "ok" for name, _ in pairs[1:]}
    assert all("from ... import _graphmend_runtime as graphmend" in mended[f][2].text for f in IMPORTED
               if f in mended)


# -------------------------------------------------------------------------- mutations


def _mutations(text: str, seed: int, n: int):
    rng = random.Random(seed)
    lines = text.splitlines(keepends=True)
    kinds = ["delete", "duplicate", "truncate", "tab", "non-ascii"]
    chars = ["é", "\u00a0", "中", "😀", "\u200b", "ß", "\u2028", "\x0c", "\x85"]
    for i in range(n):
        kind = kinds[i % len(kinds)]
        if kind == "delete":
            k = rng.randrange(len(lines))
            yield f"delete line {k + 1}", "".join(lines[:k] + lines[k + 1:])
        elif kind == "duplicate":
            k = rng.randrange(len(lines))
            yield f"duplicate line {k + 1}", "".join(lines[:k + 1] + lines[k:])
        elif kind == "truncate":
            k = rng.randrange(len(text))
            yield f"truncate at {k}", text[:k]
        else:
            k = rng.randrange(len(text))
            c = "\t" if kind == "tab" else rng.choice(chars)
            yield f"insert {c!r} at {k}", text[:k] + c + text[k:]


def _focus(text: str, path: str) -> str:
    """Real code, small enough to fix 50 times a file: the module's top-level statements other
    than definitions, the top-level definitions holding a fixable finding, and the definitions
    these name (base classes, submodules, helpers), transitively."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    sites = {f.span.start.line for f in analyze_source(text, path).findings if f.fixable}
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    keep = {id(n) for n in tree.body if not isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    todo = [n for n in defs.values() if any(n.lineno <= s <= n.end_lineno for s in sites)]
    while todo:
        n = todo.pop()
        if id(n) in keep:
            continue
        keep.add(id(n))
        todo += [defs[m.id] for m in ast.walk(n) if isinstance(m, ast.Name) and m.id in defs]
    out = []
    for node in tree.body:
        if id(node) in keep:
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            out.append("".join(lines[first - 1:node.end_lineno]))
    return "\n".join(out)


@pytest.mark.parametrize("fam", [f for f in MUTATED if TF is not None and _path(f).is_file()])
def test_mutations_never_crash_and_output_parses(fam):
    path = str(_path(fam))
    text = _focus(Path(path).read_text(encoding="utf-8"), path)
    assert any(f.fixable for f in analyze_source(text, path).findings)
    failures = []
    parsed = fixed = 0
    for what, src in _mutations(text, seed=MUTATED.index(fam), n=MUTATIONS_PER_FILE):
        try:
            a = analyze_source(src, path)
        except Exception as e:
            failures.append(f"{what}: analyze_source raised {type(e).__name__}: {e}")
            continue
        parsed += not any(f.code == "GM001" for f in a.findings)
        try:
            rep = fr.replay(src, path, unsafe=True)  # the real fix_source, its passes recorded
        except Exception as e:
            failures.append(f"{what}: fix_source raised {type(e).__name__}: {e}")
            continue
        if rep.text != src:
            fixed += 1
            # compiles if the input did (a duplicated parameter line parses but does not compile)
            why = (fr.compile_problem(rep.text, path) if fr.compile_problem(src, path) is None
                   else scan.parse_error(rep.text, path))
            if why:
                failures.append(f"{what}: the mended text: {why}")
            failures += [f"{what}: {m}" for p in rep.passes for m in fr.pass_problems(p)]
    assert failures == []
    assert parsed >= 5 and fixed >= 5, (parsed, fixed)  # the mutations reach the fixers too


# -------------------------------------------------------------------------- regressions
# Minimal reproducers of bugs these properties found, kept as regression tests.


def _fix_problems(src: str) -> list[str]:
    rep = fr.replay(src, "<string>", unsafe=True)
    out = [m for p in rep.passes for m in fr.pass_problems(p)] + fr.helper_problems(src, rep.text)
    out += fr.comment_problems(src, rep.text)
    why = fr.compile_problem(rep.text, "<string>")
    out += [why] if why else []
    out += [f"not fixed: {w}" for _, w in rep.result.skipped]
    return out


_COMPILED = "import torch\n\n\n@torch.compile\ndef f(x, check: bool = True):\n"


@pytest.mark.parametrize("line", [
    "if check: assert not torch.isnan(x).any(), 'nan'",
    "y = x * 2; assert not torch.isnan(x).any(), 'nan'",
    "assert not torch.isnan(x).any(), 'nan'; y = x * 2",
])
def test_trap_declines_a_guard_that_shares_its_line(line):
    """Replacing the line would drop `if check:` or `y = x * 2`: the fix declines and says why."""
    src = _COMPILED + f"    y = x\n    {line}\n    return y\n"
    rep = fr.replay(src, "<string>", unsafe=True)
    assert rep.text == src
    assert [w for _, w in rep.result.skipped] == [
        "the guard shares its line with other code; put it on its own line"]


def test_defer_keeps_comments_inside_the_call():
    src = _COMPILED + "    print(\n        'scale',  # TODO: remove\n        x.shape,\n    )\n    return x\n"
    assert _fix_problems(src) == []


@pytest.mark.parametrize("sep", ["\x0c", "\u2028", "\x0b", "\x85"])
def test_fix_after_a_form_feed_or_line_separator(sep):
    """str.splitlines breaks lines at these, Python does not: an edit placed by splitlines lines
    replaced `prunt('first', x)` with `graphmend.print('other', x)`."""
    src = _COMPILED + f"    # section{sep}1\n    prunt('first', x)\n    print('other', x)\n    return x\n"
    rep = fr.replay(src, "<string>", unsafe=True)
    assert _fix_problems(src) == []
    assert "prunt('first', x)" in rep.text and "graphmend.print('other', x)" in rep.text
