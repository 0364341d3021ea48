"""The server's incremental re-analysis (analysis/incremental.py) gives what a full check gives.

Recorded editing sessions (tests/lsp_fixtures/editing_sessions.json) over transformers' own
modeling files are replayed one keystroke at a time through the server's Document; after every
change the document is checked from the previous check (as the server does) and from scratch,
and everything the editor shows or builds from a check is compared: diagnostics (findings with
their messages, spans, entries, fix applicability and decline reasons; the syntax error and the
findings carried over it), the file's scope and call edges, and the edits of every fix.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from graphmend.analysis import incremental
from graphmend.analysis.workspace import Workspace
from graphmend.config import Settings
from graphmend.lsp.checker import check
from graphmend.lsp.document import Document
from graphmend.rules import fix_edits

HERE = Path(__file__).parent
SESSIONS = json.loads((HERE / "lsp_fixtures" / "editing_sessions.json").read_text())
UTF16 = PositionCodec(types.PositionEncodingKind.Utf16)
_spec = importlib.util.find_spec("transformers")
TRANSFORMERS = Path(_spec.origin).parent if _spec and _spec.origin else None


def _find(lines: list[str], at: str, after: str | None) -> int:
    start = 0
    if after is not None:
        start = next((i for i, ln in enumerate(lines) if after in ln), None)
        if start is None:
            raise LookupError(f"no line holds {after!r}")
    found = next((i for i in range(start, len(lines)) if at in lines[i]), None)
    if found is None:
        raise LookupError(f"no line holds {at!r}")
    return found


def _change(line: int, a: int, b: int, text: str):
    return types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(line=line, character=a), end=types.Position(line=line, character=b)),
        text=text)


def keystrokes(doc: Document, step: dict):
    """The changes of one step, one a keystroke, each computed on the text as it is then."""
    lines = [ln.rstrip("\r\n") for ln in doc.lines]
    i = _find(lines, step["at"], step.get("after"))
    body = lines[i]
    indent = len(body) - len(body.lstrip())
    op = step["op"]
    if op == "type":
        for k, ch in enumerate(step["text"]):
            yield _change(i, len(body) + k, len(body) + k, ch)
    elif op == "backspace":
        for k in range(step["n"]):
            end = len(body) - k
            yield _change(i, end - 1, end, "")
    elif op == "enter":  # indented as an editor does (one level more after a colon)
        indent += 4 if body.rstrip().endswith(":") else 0
        yield _change(i, len(body), len(body), "\n" + " " * indent)
        for k, ch in enumerate(step["text"]):
            yield _change(i + 1, indent + k, indent + k, ch)
    elif op == "delete_line":
        yield types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(line=i, character=0), end=types.Position(line=i + 1, character=0)),
            text="")
    elif op == "type_start":
        for k, ch in enumerate(step["text"]):
            yield _change(i, indent + k, indent + k, ch)
    elif op == "delete_start":
        for _ in range(step["n"]):
            yield _change(i, indent, indent + 1, "")
    elif op == "replace":
        a = body.index(step["old"])
        yield _change(i, a, a + len(step["old"]), step["new"])
    else:
        raise ValueError(op)


def view(c, with_fixes: bool = True) -> dict:
    """Everything of a check the editor shows or builds on."""
    out = {"shown": [f.to_json() for f in c.shown],
           "syntax_error": c.syntax_error.to_json() if c.syntax_error else None}
    if c.scope is not None:
        out["entries"] = c.scope.entries
        out["edges"] = {q: sorted(e) for q, e in c.scope.edges.items()}
        out["disabled"] = sorted(c.scope.disabled)
    if with_fixes and c.syntax_error is None:
        fixes = []
        for f in c.findings:
            edits = fix_edits(f, c.text, c.symbols, c.line_index) if f.fixable else None
            fixes.append(None if edits is None else [(e.span, e.text) for e in edits])
        out["fixes"] = fixes
    return out


def replay(rel: str, check_fixes: bool = True) -> tuple[int, int]:
    """Replay one session; returns (keystrokes, those checked incrementally)."""
    path = str(TRANSFORMERS / rel)
    text = Path(path).read_text(encoding="utf-8")
    ws, settings = Workspace(), Settings()
    doc = Document("file://" + path, path, text, 0)
    prev = full = check(text, path, 0, settings, ws, {})
    n = inc = 0
    for s, step in enumerate(SESSIONS[rel]):
        changes = list(keystrokes(doc, step))
        for k, change in enumerate(changes):
            doc.apply_change(change, UTF16)
            doc.version += 1
            n += 1
            got = check(doc.text, path, doc.version, settings, ws, {}, prev)
            full.state = None  # the full chain: carries findings over syntax errors as the other does
            want = check(doc.text, path, doc.version, settings, ws, {}, full)
            assert want.rewalked is None
            inc += got.rewalked is not None
            fixes = check_fixes and k == len(changes) - 1  # the fixes at the end of each step
            assert view(got, fixes) == view(want, fixes), \
                f"{rel}: step {s} ({step['op']} at {step['at']!r}), keystroke {n}: incremental != full"
            if prev is not full:
                prev.release(got)
            prev, full = got, want
    return n, inc


needs_transformers = pytest.mark.skipif(TRANSFORMERS is None, reason="transformers is not installed")


@needs_transformers
@pytest.mark.parametrize("rel", [k for k in SESSIONS if not k.startswith("_")])
def test_session_incremental_equals_full(rel):
    n, inc = replay(rel)
    # the sessions are mostly typing inside function bodies: most keystrokes take the incremental
    # path (else this test would compare the full check with itself)
    assert inc >= n // 3, (n, inc)


def _module(text: str, tmp_path: Path, name: str = "m.py") -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


SRC = '''import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(2, 2)

    def helper(self, x):
        return x

    def forward(self, x):
        y = self.helper(x)
        return self.proj(y)


def unreached(x):
    return x
'''


def test_edit_in_a_method_rewalks_it_and_its_callers(tmp_path):
    path = _module(SRC, tmp_path)
    ws, settings = Workspace(), Settings()
    c0 = check(SRC, path, 0, settings, ws, {})
    new = SRC.replace("        return x\n\n    def forward", "        return x.nonzero()\n\n    def forward")
    c1 = check(new, path, 1, settings, ws, {}, c0)
    assert c1.rewalked == {"Block.helper", "Block.forward"}
    assert [f.code for f in c1.findings] == [f.code for f in check(new, path, 1, settings, ws, {}).findings]
    assert [f.code for f in c1.findings] == ["GM402"]
    # the previous version is left as it was (a stale result must not change what is shown)
    assert [f.code for f in c0.findings] == []
    assert c0.symbols.classes["Block"].methods["helper"].node.body[0].value.__class__.__name__ == "Name"


SUBMODULE = '''import torch
from torch import nn


class Inner(nn.Module):
    def forward(self, x):
        return x * 2


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        return self.inner(x) + 1
'''


def test_an_edit_of_a_submodule_forward_rewalks_only_it(tmp_path):
    """Outer.forward calls self.inner(x) but its analysis reads nothing of Inner.forward's body
    (only that it is a module): it is not walked again, and the result is the full check's."""
    path = _module(SUBMODULE, tmp_path)
    ws, settings = Workspace(), Settings()
    c0 = check(SUBMODULE, path, 0, settings, ws, {})
    assert "Inner.forward" in c0.state.reads and "Inner.forward" not in c0.state.reads["Outer.forward"]
    new = SUBMODULE.replace("return x * 2", "return x.nonzero()")
    c1 = check(new, path, 1, settings, ws, {}, c0)
    assert c1.rewalked == {"Inner.forward"}
    assert view(c1) == view(check(new, path, 1, settings, ws, {}))
    assert [f.code for f in c1.findings] == ["GM402"]


def test_new_attribute_of_the_class_rewalks_every_method(tmp_path):
    src = SRC.replace("        return x\n\n    def forward", "        return x\n\n    def forward")
    path = _module(src, tmp_path)
    ws, settings = Workspace(), Settings()
    c0 = check(src, path, 0, settings, ws, {})
    new = src.replace("self.proj = nn.Linear(2, 2)", "self.proj = torch.ones(2, 2)")
    c1 = check(new, path, 1, settings, ws, {}, c0)
    assert c1.rewalked is not None and {"Block.forward", "Block.helper"} <= c1.rewalked


DISPATCH = '''import torch
from torch import nn


class Reducer(nn.Module):
    def forward(self, losses, kind):
        fn = self.get_fn(kind)
        return fn(losses)

    def get_fn(self, kind):
        return getattr(self, "{}_sum".format(kind))

    def plain_sum(self, losses):
        return losses.sum()

    def masked_mean(self, losses):
        return losses[losses > 0].mean()
'''


def test_an_edit_of_a_getter_redoes_the_edges_read_through_it(tmp_path):
    """`fn = self.get_fn(kind)` calls the methods the getter's `getattr(self, "{}_sum"...)` can
    give; an edit of the getter alone changes what forward reaches."""
    path = _module(DISPATCH, tmp_path)
    ws, settings = Workspace(), Settings()
    c0 = check(DISPATCH, path, 0, settings, ws, {})
    assert [f.code for f in c0.findings] == []
    new = DISPATCH.replace('"{}_sum".format(kind)', '"masked_" + kind')
    c1 = check(new, path, 1, settings, ws, {}, c0)
    assert c1.rewalked is not None
    assert view(c1) == view(check(new, path, 1, settings, ws, {}))
    assert [f.code for f in c1.findings] == ["GM602"]  # the masked mean


HELD = '''import torch
from torch import nn


class Interval:
    def __call__(self, ta, tb):
        ta, tb = float(ta), float(tb)
        return torch.full((3,), tb - ta)


class Solver(nn.Module):
    def __init__(self, bm: Interval):
        super().__init__()
        self.bm = bm

    def forward(self, ts: torch.Tensor, y: torch.Tensor):
        return y + self.bm(ts[0], ts[1])
'''


def test_an_edit_of_what_the_constructor_stores_walks_the_class_again(tmp_path):
    """`self.bm(ts[0], ts[1])` runs `Interval.__call__` because `__init__` stores the parameter
    annotated `bm: Interval` in `self.bm` (attr_types.py); an edit of that store alone changes
    what forward's call reaches."""
    path = _module(HELD, tmp_path)
    ws, settings = Workspace(), Settings()
    c0 = check(HELD, path, 0, settings, ws, {})
    assert [(f.code, f.span.start.line) for f in c0.findings] == [("GM401", 7), ("GM401", 7)]
    new = HELD.replace("        self.bm = bm\n", "        self.bm = None\n")
    c1 = check(new, path, 1, settings, ws, {}, c0)
    assert c1.rewalked is not None
    assert view(c1) == view(check(new, path, 1, settings, ws, {}))
    assert c1.findings == []


PROPERTY = '''import torch
from torch import nn


class EMA(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("_step", torch.tensor(3))

    @property
    def step(self):
        return self._step

    def forward(self, x):
        if self.step.item() > 2:
            x = x * 2
        return x
'''


def test_an_edit_of_a_property_walks_its_readers_again(tmp_path):
    """`self.step.item()` reads a tensor while the property returns the buffer; an edit of the
    property alone (it returns a number now) changes forward's findings."""
    path = _module(PROPERTY, tmp_path)
    ws, settings = Workspace(), Settings()
    c0 = check(PROPERTY, path, 0, settings, ws, {})
    assert [(f.code, f.span.start.line) for f in c0.findings] == [("GM201", 15)]
    new = PROPERTY.replace("        return self._step\n", "        return 3\n")
    c1 = check(new, path, 1, settings, ws, {}, c0)
    assert c1.rewalked is not None
    assert view(c1) == view(check(new, path, 1, settings, ws, {}))
    assert c1.findings == []
    c2 = check(PROPERTY, path, 2, settings, ws, {}, c1)
    assert view(c2) == view(check(PROPERTY, path, 2, settings, ws, {})) and len(c2.findings) == 1


@pytest.mark.parametrize("new", [
    SRC.replace("def helper(self, x):", "def helper(self, x, y=None):"),  # a header
    SRC.replace("        return x\n\n    def forward", "        import math\n        return x\n\n    def forward"),
    SRC.replace("def unreached(x):\n    return x", "def unreached(x):\n    import os; return x"),  # an import
    SRC.replace("class Block(nn.Module):", "class Block(nn.Module):  # c"),  # the class' line
    SRC.replace("        y = self.helper(x)", "        y = self.helper(x"),  # does not parse
])
def test_falls_back_to_a_full_check(tmp_path, new):
    path = _module(SRC, tmp_path)
    ws, settings = Workspace(), Settings()
    c0 = check(SRC, path, 0, settings, ws, {})
    assert incremental.update(c0.state, new, path, settings, ws, {}) is None
    assert view(check(new, path, 1, settings, ws, {}, c0)) == view(check(new, path, 1, settings, ws, {}))


GUARDED = '''import torch
from torch import nn


class Mesh(nn.Module):
    def __init__(self, ns: torch.Tensor):
        super().__init__()
        self.update(ns)

    def update(self, ns: torch.Tensor | None = None):
        if ns is not None:
            self.ns = ns

    def forward(self, x):
        return x[:, :int(self.ns[0])]
'''


def test_an_edit_of_a_guard_around_a_stored_parameter_walks_the_class_again(tmp_path):
    """`self.ns = ns` under `if ns is not None:` stores a tensor (attr_types.param_stores narrows
    `torch.Tensor | None`); without the guard it may store None: an edit of `update` alone changes
    what forward reports."""
    path = _module(GUARDED, tmp_path)
    ws, settings = Workspace(), Settings()
    c0 = check(GUARDED, path, 0, settings, ws, {})
    assert [(f.code, f.span.start.line) for f in c0.findings] == [("GM401", 15)]
    new = GUARDED.replace("        if ns is not None:\n", "        if True:\n")
    c1 = check(new, path, 1, settings, ws, {}, c0)
    assert c1.rewalked is not None
    assert view(c1) == view(check(new, path, 1, settings, ws, {}))
    assert c1.findings == []


HELPERS = '''import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.flag = (torch.ones(3) > 0).any()

    def helper(self):
        return torch.ones(2)

    def forward(self, x):
        if self.flag:
            x = x * 2
        if self.helper().sum() > 0:
            x = x + 1
        return x
'''


@pytest.mark.parametrize("old,new,left", [
    ("        self.flag = (torch.ones(3) > 0).any()\n", "        self.flag = True\n", [("GM201", 16)]),
    ("        return torch.ones(2)\n", "        return [1]\n", [("GM201", 14)])])
def test_an_edit_of_init_or_a_helper_method_drops_what_was_known_of_it(old, new, left, tmp_path):
    """`if self.flag:` is a branch on a tensor because `__init__` leaves one there
    (init_holds_tensor), `self.helper().sum() > 0` because the method returns one
    (method_returns_tensor); both answers are cached per file version. An edit of `__init__` or
    of the helper alone must not keep the old answer: the incremental check gives what a full
    check gives (it kept both squiggles before)."""
    path = _module(HELPERS, tmp_path)
    ws, settings = Workspace(), Settings()
    c0 = check(HELPERS, path, 0, settings, ws, {})
    assert [(f.code, f.span.start.line) for f in c0.findings] == [("GM201", 14), ("GM201", 16)]
    text = HELPERS.replace(old, new)
    c1 = check(text, path, 1, settings, ws, {}, c0)
    assert c1.rewalked is not None
    assert view(c1) == view(check(text, path, 1, settings, ws, {}))
    assert [(f.code, f.span.start.line) for f in c1.findings] == left
