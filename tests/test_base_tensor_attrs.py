"""An attribute a base class in another file constructs as a tensor (realcode round 27, torchdr
0.5: `self.n_iter_ = torch.tensor(-1, dtype=torch.long)` in AffinityMatcher.__init__, read by
NeighborEmbedding's `if self.early_exaggeration_coeff_ > 1 and self.n_iter_ == ...:`, GB0170).

Before, only a base in the same file told what its `__init__` stores; a base read from another
module (definitions only, or its record in the definitions index) kept its buffers and
parameters alone. What stays unreported: an attribute the subclass stores as something else
(`self.scale = 2.0` over the base's tensor), and one the base builds with a non-tensor call.
The findings are the same from the definitions index as from parsing the base, and each line is
run under Dynamo (its graph-break log).
"""

from __future__ import annotations

import sys

import pytest
import torch

from graphmend.analysis import analyze_source
from graphmend.analysis.definitions import DefinitionsIndex, IndexedSymbols
from graphmend.analysis.workspace import Workspace
from graphmend.config import Settings
from test_callers import logged_break_lines

BASE = '''\
import torch


class Matcher:
    def __init__(self, k):
        self.k = k
        self.n_iter_ = torch.tensor(-1, dtype=torch.long)
        self.scale = torch.tensor(1.0)
        self.names = dict(a=1)

    def fit(self, x):
        for step in range(3):
            self.n_iter_.fill_(step)
        return x
'''

MAIN = '''\
import torch
from pkg.base import Matcher


class Embedding(Matcher):
    def __init__(self, k):
        super().__init__(k)
        self.coeff_ = 4.0
        self.scale = 2.0

    def step_end(self, x):
        if self.coeff_ > 1 and self.n_iter_ == self.k:  # reported
            x = x * 3
        if self.scale > 1:
            x = x * 2
        if self.names:
            x = x - 1
        return x + 1
'''


def _project(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "base.py").write_text(BASE)
    (tmp_path / "pkg" / "main.py").write_text(MAIN)
    return tmp_path


def _lines(root, index=None):
    ws = Workspace([str(root)])
    ws.definitions = index
    fa = analyze_source(MAIN, str(root / "pkg" / "main.py"), Settings(scope="module"), workspace=ws)
    return sorted(f.span.start.line for f in fa.findings), ws


def test_a_base_class_tensor_in_another_file(tmp_path, monkeypatch):
    root = _project(tmp_path)
    reported = [i for i, s in enumerate(MAIN.splitlines(), 1) if s.endswith("# reported")]
    parsed, _ = _lines(root)
    assert parsed == reported

    store = str(tmp_path / "cache" / "definitions.pickle")
    built, _ = _lines(root, index := DefinitionsIndex(store, "fp"))
    assert built == parsed and index.save() is None
    again = DefinitionsIndex(store, "fp")
    got, ws = _lines(root, again)
    assert got == parsed and again.hits >= 1
    sym = ws.symbols("pkg.base")
    assert isinstance(sym, IndexedSymbols) and sym._full is None  # from the record, the base not parsed

    monkeypatch.syspath_prepend(str(root))
    sys.modules.pop("pkg", None)
    from pkg.main import Embedding
    emb = Embedding(2)
    emb.n_iter_.fill_(2)
    broke = logged_break_lines(emb.step_end, torch.ones(3), path=str(root / "pkg" / "main.py"))
    assert sorted(broke) == reported
    for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
        del sys.modules[name]


@pytest.mark.parametrize("store", ["self.n_iter_ = int(k)", "self.n_iter_, self.k = 0, k"])
def test_a_subclass_store_of_its_own_wins(tmp_path, store):
    """The subclass (or a nearer base) storing the attribute otherwise: not the base's tensor."""
    root = _project(tmp_path)
    main = MAIN.replace("        self.scale = 2.0\n", f"        self.scale = 2.0\n        {store}\n")
    ws = Workspace([str(root)])
    fa = analyze_source(main, str(root / "pkg" / "main.py"), Settings(scope="module"), workspace=ws)
    assert fa.findings == []
