"""Fix safety on any input: `check` and `fix` fuzzed (hypothesis).

Inputs:

* modules hypothesmith generates from Python's grammar (`from_grammar`) and from libcst's node
  types (`from_node`), alone and spliced between code with break sites (so the fixers run
  next to arbitrary code);
* mutations of real transformers modeling files (20 families, cut to the definitions holding a
  fixable site and what they name, as tests/test_fix_properties.py does): lines deleted,
  duplicated, swapped or re-indented (spaces, tabs), the text truncated, non-ASCII characters,
  tabs, form feeds, NULs and line separators inserted, very long lines (a 100k-character
  string, a 4000-term sum, a long comment), CRLF line ends, a byte-order mark -- mostly near
  the fix sites.

For every input: `analyze_source` and `fix_source` (unsafe fixes included) never raise; a file
that does not parse is never changed; the output parses (compiles, when the input compiled);
fixing the output again changes nothing; within one fix pass no two edits overlap (nor two
insertions at the same point); nothing outside a pass's fix ranges changes, no comment is lost,
and the helper block is there once (the checks of benchmarks/fix_robustness.py).

Budget: GRAPHMEND_FUZZ_PROFILE=ci (default) or long; GRAPHMEND_FUZZ_EXAMPLES overrides the
example counts. `benchmarks/fuzz.py --part fix` runs the long version with a time budget and
prints how many inputs were tried. Inputs these found are kept in tests/regressions/fix/ and
replayed by tests/regressions/test_regressions_fix.py.
"""

from __future__ import annotations

import ast
import collections
import functools
import importlib.util
import os
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parent.parent
if str(REPO / "benchmarks") not in sys.path:
    sys.path.insert(0, str(REPO / "benchmarks"))

import fix_robustness as fr  # noqa: E402
from graphmend.analysis import analyze_source  # noqa: E402
from graphmend.config import Settings  # noqa: E402
from graphmend.rewrite import fix_source  # noqa: E402
from graphmend.rewrite.apply import _offset  # noqa: E402
from graphmend.textlines import split_lines  # noqa: E402

PROFILE = os.environ.get("GRAPHMEND_FUZZ_PROFILE", "ci")
EXAMPLES = {"grammar": (8, 300), "node": (4, 150), "spliced": (10, 400), "pieces": (30, 2000),
            "mutated": (15, 2000)}
STATS: collections.Counter = collections.Counter()  # read by benchmarks/fuzz.py
FAILURES: list[dict] = []
COLLECT = False  # benchmarks/fuzz.py: record failures and go on

_spec = importlib.util.find_spec("transformers")
TF = Path(_spec.origin).parent if _spec and _spec.origin else None
FAMILIES = ["t5", "bart", "whisper", "phi3", "longformer", "grounding_dino", "llama", "gpt2", "bert",
            "mbart", "pegasus", "encoder_decoder", "mixtral", "qwen2", "led", "wav2vec2", "bloom",
            "falcon", "detr", "xlnet"]
PRESENT = [f for f in FAMILIES if TF is not None and (TF / "models" / f / f"modeling_{f}.py").is_file()]


def budget(name: str) -> settings:
    n = EXAMPLES[name][PROFILE == "long"]
    n = int(os.environ.get("GRAPHMEND_FUZZ_EXAMPLES", n))
    return settings(max_examples=n, deadline=None, database=None, derandomize=PROFILE != "long",
                    suppress_health_check=list(HealthCheck), print_blob=True)


# ================================================================================ the properties


def _parses(text: str) -> bool:
    if text.startswith("\ufeff"):  # a byte-order mark: parsed from the file's bytes, Python drops it
        text = text[1:]
    try:
        ast.parse(text)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def overlap_problems(p: "fr.Pass") -> list[str]:
    """No two edits of one pass overlap, nor insert at the same point (their order would be
    arbitrary); an insertion never falls strictly inside another edit."""
    lines = split_lines(p.before, keepends=True) or [""]
    spans = []
    for i, (f, es) in enumerate(p.applied):
        for e in es:
            spans.append((i, f"{f.code}@{f.span.start.line}", _offset(lines, e.span.start.line, e.span.start.col),
                          _offset(lines, e.span.end.line, e.span.end.col)))
    if p.helper is not None:
        e = p.helper
        spans.append((-1, "helper block", _offset(lines, e.span.start.line, e.span.start.col),
                       _offset(lines, e.span.end.line, e.span.end.col)))
    out = []
    for k, (i, wa, a1, b1) in enumerate(spans):
        if b1 < a1:
            out.append(f"{wa}: an edit ends before it starts ({a1}..{b1})")
        for j, wb, a2, b2 in spans[k + 1:]:
            overlap = max(a1, a2) < min(b1, b2)
            same_point = a1 == b1 == a2 == b2 and i != j
            inside = (a1 == b1 and a2 < a1 < b2) or (a2 == b2 and a1 < a2 < b1)
            if overlap or same_point or inside:
                out.append(f"edits overlap: {wa} [{a1}, {b1}) and {wb} [{a2}, {b2})")
    return out


def fix_problems(src: str, path: str = "<string>", settings_: Settings | None = None) -> list[str]:
    """Everything wrong with checking and fixing `src` (empty: all properties hold)."""
    settings_ = settings_ or Settings(scope="module")
    STATS["inputs"] += 1
    try:
        analyze_source(src, path, settings_)
    except Exception as e:  # noqa: BLE001 - the property is that it never raises
        return [f"check raised {type(e).__name__}: {e}"]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rep = fr.replay(src, path, settings_, unsafe=True)
    except Exception as e:  # noqa: BLE001
        return [f"fix raised {type(e).__name__}: {e}"]
    parsed = _parses(src)
    STATS["inputs that parse"] += parsed
    if rep.text == src:
        return []
    out = []
    if not parsed:
        out.append("a file that does not parse was changed")
    STATS["inputs fixed"] += 1
    STATS["fixes applied"] += len(rep.applied)
    nobom = lambda t: t[1:] if t.startswith("\ufeff") else t  # noqa: E731 - a file's BOM, not code
    why = fr.compile_problem(nobom(rep.text), path) if fr.compile_problem(nobom(src), path) is None else (
        None if _parses(rep.text) else "the mended text does not parse")
    if why:
        out.append(f"mended text: {why}")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))  # the checks walk the ast recursively (a 4000-term sum)
    try:
        for p in rep.passes:
            out += overlap_problems(p)
            out += fr.pass_problems(p)
        out += fr.helper_problems(src, rep.text) + fr.comment_problems(src, rep.text)
    except RecursionError:
        STATS["inputs too deep for the range checks"] += 1
    finally:
        sys.setrecursionlimit(limit)
    try:
        again = fix_source(rep.text, path, settings_, unsafe=True)
        if again.text != rep.text or again.applied:
            out.append(f"not idempotent: a second fix applied {[f.code for f in again.applied]}")
    except Exception as e:  # noqa: BLE001
        out.append(f"fixing the mended text raised {type(e).__name__}: {e}")
    return out


def _check(src: str, path: str = "<string>", settings_: Settings | None = None, origin: str = "") -> None:
    problems = fix_problems(src, path, settings_)
    if problems:
        STATS["failing inputs"] += 1
        FAILURES.append({"origin": origin, "path": path, "src": src, "problems": problems})
    if not COLLECT:
        assert problems == [], "\n".join(problems)


# ================================================================================ generated modules

SITES_HEAD = '''import logging
import warnings
import torch
from torch import nn

logger = logging.getLogger(__name__)


@torch.compile
def f(x: torch.Tensor, flag: bool = True):
    print("scale", x.shape)
    if torch.isnan(x).any():
        raise ValueError("nan")
    if x.sum() > 0:
        x = x * 2
    else:
        x = x - 1
    return x

'''
SITES_TAIL = '''

class Block(nn.Module):
    def forward(self, x):
        logger.warning_once(f"rows={x.shape[0]}")
        warnings.warn("slow", UserWarning)
        assert not torch.isinf(x).any(), "inf"
        return x.abs().max() if x.dtype == torch.float16 and x.mean() > 0 else x
'''


def _grammar():
    import hypothesmith
    return hypothesmith.from_grammar()


def _node():
    import hypothesmith
    return hypothesmith.from_node()


needs_hypothesmith = pytest.mark.skipif(importlib.util.find_spec("hypothesmith") is None,
                                        reason="hypothesmith is not installed")


def _grammar_body(src):
    _check(src, origin="from_grammar")


def _node_body(src):
    _check(src, origin="from_node")


def _spliced_body(src, where):
    """Arbitrary code around (or inside the body of) functions with break sites."""
    if where == "inside":  # the generated statements become part of a compiled function's body
        body = "".join("    " + ln for ln in split_lines(src, keepends=True))
        text = SITES_HEAD.replace("    return x\n", body + ("\n" if body and not body.endswith("\n") else "")
                                  + "    return x\n", 1) + SITES_TAIL
    else:
        text = (SITES_HEAD if where in ("head", "both") else "") + src + \
            ("\n" if src and not src.endswith("\n") else "") + (SITES_TAIL if where in ("tail", "both") else "")
    _check(text, origin=f"from_grammar spliced ({where})")


# Pieces of modules that stress the fixers' text handling: where the helper block goes, odd
# layouts of break sites, names that shadow what the rules look for. Drawn and joined in any order.
PIECES_TOP = ['"""Module docstring."""\n', "from __future__ import annotations\n", "import torch\n",
              "import torch as th\n", "import logging, warnings\n", "from torch import nn\n",
              "try:\n    import numpy\nexcept ImportError:\n    numpy = None\n",
              "if False:\n    import typing\n", "logger = logging.getLogger(__name__)\n",
              "# -*- coding: utf-8 -*-\n", "print = print\n", "torch = __import__('torch')\n"]
PIECES_BODY = [
    "print('a', x)\n", "print(\n    'a',  # note\n    x,\n)\n", "print ('spaced', x)\n",
    "y = x; print(x)\n", "print(x); y = x\n", "if x.sum() > 0: x = x * 2\n",
    "if x.sum() > 0:\n    x = x * 2\nelse:\n    x = x - 1\n", "x = x * 2 if x.mean() > 0 else x\n",
    "if torch.isnan(x).any():\n    raise ValueError('nan')\n", "assert (x > 0).all(), 'neg'\n",
    "assert (x > 0).all(), \\\n    'continued'\n", "logger.warning(f'{x.sum():.2f}')\n",
    "warnings.warn('w', UserWarning)\n", "logger.info('%s', x.shape)  # graphmend: ignore\n",
    "if x.sum() > 0:  # why\n    x = x + 1  # inc\n", "x = (x\n     if x.sum() > 0 else\n     -x)\n",
    "def inner(v):\n    print(v)\n    return v\n", "x = inner(x) if 'inner' in dir() else x\n",
    "for _ in range(2):\n    if x.sum() > 0:\n        x = x - 1\n", "with torch.no_grad():\n    print(x)\n",
    "if (n := x.sum()) > 0:\n    x = x / n\n", "print(f\"{x!r:>{10}}\", f'{x.shape}')\n",
    "match x.dim():\n    case 0:\n        print(x)\n    case _:\n        pass\n",
    "\tprint('tab')\n", "if x.sum() > 0:\n\tx = x + 1\n", "lambda: print(x)\n",
    "x = torch.where(x > 0, x, -x)\n", "_graphmend_print = print\n", "torch.cond = None\n",
    "if x.dtype == torch.float16 and torch.isinf(x).any():\n    x = torch.clamp(x, -1.0, 1.0)\n",
]
PIECES_WRAP = ["@torch.compile\ndef f(x: torch.Tensor):\n", "def f(x: torch.Tensor):\n",
               "class M(nn.Module):\n    def forward(self, x: torch.Tensor):\n",
               "async def f(x: torch.Tensor):\n", "@torch.compile(fullgraph=True)\ndef f(x: torch.Tensor):\n"]


@st.composite
def pieced(draw) -> str:
    top = "".join(draw(st.lists(st.sampled_from(PIECES_TOP), max_size=5)))
    wrap = draw(st.sampled_from(PIECES_WRAP))
    ind = " " * (len(wrap.splitlines()[-1]) - len(wrap.splitlines()[-1].lstrip()) + 4)
    body = "".join(draw(st.lists(st.sampled_from(PIECES_BODY), min_size=1, max_size=6)))
    body = "".join(ind + ln for ln in split_lines(body, keepends=True))
    tail = "".join(draw(st.lists(st.sampled_from(PIECES_TOP), max_size=2)))
    return top + wrap + body + ind + "return x\n" + tail


# ================================================================================ mutated real files


@functools.lru_cache(maxsize=None)
def focused(fam: str) -> tuple[str, str, tuple[int, ...]]:
    """(path, the file cut to the definitions with fixable sites and what they name, lines of
    the fixable sites in that text)."""
    import test_fix_properties as tfp
    path = str(TF / "models" / fam / f"modeling_{fam}.py")
    text = tfp._focus(Path(path).read_text(encoding="utf-8"), path)
    sites = tuple(sorted({f.span.start.line for f in analyze_source(text, path).findings if f.fixable}))
    return path, text, sites


CHARS = ["é", "\u00a0", "中", "😀", "\u200b", "ß", "\u2028", "\u2029", "\x0c", "\x85", "\t", "\x00", "\r",
         "\\", "'", '"', "#", "(", ")", ":", "\ufeff", "\x0b", "\U0001f600\u0301"]
LONG_LINES = ["s = '" + "x" * 100_000 + "'\n", "t = " + " + ".join(["a"] * 4000) + "\n",
              "# " + "long comment " * 8000 + "\n", "print(" + ", ".join(["x"] * 3000) + ")\n",
              "u = " + "(" * 150 + "1" + ")" * 150 + "\n"]
MUTATIONS = ["delete", "duplicate", "swap", "indent", "dedent", "tab-indent", "truncate", "insert-char",
             "long-line", "crlf", "bom", "delete-char"]


@st.composite
def mutated(draw) -> tuple[str, str, list[str]]:
    fam = draw(st.sampled_from(PRESENT))
    path, text, sites = focused(fam)
    what = []
    for _ in range(draw(st.integers(1, 3))):
        lines = split_lines(text, keepends=True) or [""]
        n = len(lines)
        near = [s - 1 + d for s in sites for d in range(-3, 4) if 0 <= s - 1 + d < n]
        if near and draw(st.booleans()):
            k = draw(st.sampled_from(near))
        else:
            k = draw(st.integers(0, n - 1))
        kind = draw(st.sampled_from(MUTATIONS))
        what.append(f"{kind} at line {k + 1}")
        if kind == "delete":
            m = draw(st.integers(1, 3))
            lines = lines[:k] + lines[k + m:]
        elif kind == "duplicate":
            lines = lines[:k + 1] + lines[k:]
        elif kind == "swap" and k + 1 < n:
            lines[k], lines[k + 1] = lines[k + 1], lines[k]
        elif kind == "indent":
            lines[k] = " " * draw(st.integers(1, 4)) + lines[k]
        elif kind == "dedent":
            lines[k] = lines[k][min(draw(st.integers(1, 4)), len(lines[k]) - len(lines[k].lstrip(" "))):]
        elif kind == "tab-indent":
            lines[k] = "\t" + lines[k].lstrip(" ")
        elif kind == "truncate":
            pos = sum(len(x) for x in lines[:k]) + draw(st.integers(0, max(0, len(lines[k]) - 1)))
            text = "".join(lines)[:pos]
            continue
        elif kind == "insert-char":
            col = draw(st.integers(0, max(0, len(lines[k]) - 1)))
            lines[k] = lines[k][:col] + draw(st.sampled_from(CHARS)) + lines[k][col:]
        elif kind == "delete-char" and lines[k]:
            col = draw(st.integers(0, len(lines[k]) - 1))
            lines[k] = lines[k][:col] + lines[k][col + 1:]
        elif kind == "long-line":
            ind = lines[k][:len(lines[k]) - len(lines[k].lstrip(" \t"))]
            lines.insert(k, ind + draw(st.sampled_from(LONG_LINES)))
        elif kind == "crlf":
            text = "".join(lines).replace("\r\n", "\n").replace("\n", "\r\n")
            continue
        elif kind == "bom":
            text = "\ufeff" + "".join(lines).lstrip("\ufeff")
            continue
        text = "".join(lines)
    return path, text, what


def _pieces_body(src):
    _check(src, origin="pieces")


def _mutated_body(case):
    path, text, what = case
    note(f"{path}: {what}")
    _check(text, path, Settings(), origin=f"{Path(path).stem}: {', '.join(what)}")


# name -> (strategies, body): the tests below, and benchmarks/fuzz.py's long runs
FUZZ_TARGETS = {
    "grammar": (lambda: (st.deferred(_grammar),), _grammar_body),
    "node": (lambda: (st.deferred(_node),), _node_body),
    "spliced": (lambda: (st.deferred(_grammar), st.sampled_from(["head", "tail", "both", "inside"])),
                _spliced_body),
    "mutated": (lambda: (mutated(),), _mutated_body),
    "pieces": (lambda: (pieced(),), _pieces_body),
}


def _test(name: str):
    strategies, body = FUZZ_TARGETS[name]
    return budget(name)(given(*strategies())(body))


test_grammar_modules = needs_hypothesmith(_test("grammar"))
test_libcst_node_modules = needs_hypothesmith(_test("node"))
test_generated_code_next_to_break_sites = needs_hypothesmith(_test("spliced"))
test_odd_layouts_and_shadowed_names = _test("pieces")
test_mutated_transformers_files = pytest.mark.skipif(not PRESENT, reason="transformers is not installed")(
    _test("mutated"))
