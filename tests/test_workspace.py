"""Cross-file resolution: base classes in other files, star imports, jedi as the fallback."""

from __future__ import annotations

from graphmend.analysis import analyze_source
from graphmend.analysis.workspace import Workspace


def _pkg(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "base.py").write_text("from torch import nn\n\nclass Base(nn.Module):\n    pass\n")
    (tmp_path / "pkg" / "__init__.py").write_text("from .base import *\n")
    (tmp_path / "plain.py").write_text("class NotAModule:\n    pass\n")
    return tmp_path


MAIN = "from pkg import *\nfrom plain import NotAModule\n\nclass M(Base):\n    def forward(self, x):\n" \
       "        print(x)\n        return x\n\nclass N(NotAModule):\n    def forward(self, x):\n" \
       "        print(x)\n        return x\n"


def test_base_class_through_star_imports(tmp_path):
    root = _pkg(tmp_path)
    found = analyze_source(MAIN, str(root / "main.py"), workspace=Workspace([str(root)])).findings
    # M.forward (a Module through pkg's star import) is compiled code; N.forward is not
    assert [(f.code, f.span.start.line) for f in found] == [("GM101", 6)]


def test_jedi_follows_star_imports(tmp_path):
    root = _pkg(tmp_path)
    ws = Workspace([str(root)])
    assert ws.jedi_goto("pkg", "Base") == "pkg.base.Base"
    assert ws.jedi_goto("pkg", "Missing") is None
    ws.use_jedi = False
    ws._jedi_cache.clear()
    assert ws.jedi_goto("pkg", "Base") is None


def test_unresolvable_base_is_not_a_module(tmp_path):
    src = "from nowhere import Thing\n\nclass M(Thing):\n    def forward(self, x):\n        print(x)\n"
    assert analyze_source(src, str(tmp_path / "m.py"), workspace=Workspace([str(tmp_path)])).findings == []


def test_a_module_read_for_its_definitions_is_not_parsed_again_for_its_source(tmp_path, monkeypatch):
    """A first session reads an import's definitions, then walks one of its functions for what a
    caller passes (callers.py): the tree of the first read serves both, unless the file changed."""
    import ast
    import os

    (tmp_path / "helpers.py").write_text("def scale(x, t):\n    return x * t\n")
    parses = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda text, *a, **k: parses.append(text) or real(text, *a, **k))
    ws = Workspace([str(tmp_path)])
    assert ws.symbols("helpers").definitions_only
    sym, text, _ = ws.module_source("helpers")
    assert len(parses) == 1 and not sym.definitions_only and "scale" in sym.functions
    assert sym.functions["scale"].node.body  # the whole tree, bodies and all

    ws = Workspace([str(tmp_path)])
    ws.symbols("helpers")
    f = tmp_path / "helpers.py"
    f.write_text("def scale(x, t):\n    return x * t\n\ndef shift(x):\n    return x + 1\n")
    os.utime(f, ns=(f.stat().st_atime_ns, f.stat().st_mtime_ns + 10**9))  # a later edit
    sym, text, _ = ws.module_source("helpers")
    assert len(parses) == 3 and "shift" in sym.functions and "shift" in text  # read again
