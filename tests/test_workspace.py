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
