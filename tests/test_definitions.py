"""The index of other modules' definitions (analysis/definitions.py): the same findings as
parsing the modules, nothing parsed when it is valid, a changed module read again, a bad index
ignored; and the language server keeps it in the user's cache directory, never in the workspace."""

from __future__ import annotations

import os
import pickle
import time
from pathlib import Path

import pytest

from graphmend.analysis import analyze_source
from graphmend.analysis import definitions
from graphmend.analysis.dataflow import Kind
from graphmend.analysis.definitions import DefinitionsIndex, IndexedSymbols
from graphmend.analysis.workspace import Workspace
from graphmend.filestat import stat_of

BASE = """import torch
from torch import nn


class Base(nn.Module):
    def helper(self, x):
        return x


class Plain:
    pass


def scale(x):
    return torch.relu(x) * 2


def label(x):
    return "x"
"""

# M is an nn.Module only through pkg.base.Base; `scale(...)` returns a tensor only per its body
MAIN = """from pkg.base import Base, Plain, scale, label


class M(Base):
    def forward(self, x):
        y = scale(x)
        if y.sum() > 0:
            y = y + 1
        z = label(x)
        if z:
            y = y * 2
        return y


class N(Plain):
    def forward(self, x):
        print(x)
        return x
"""


def _project(tmp_path, base: str = BASE):
    (tmp_path / "pkg").mkdir(parents=True, exist_ok=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "base.py").write_text(base)
    return tmp_path


def _findings(root, index: DefinitionsIndex | None):
    ws = Workspace([str(root)])
    ws.definitions = index
    fa = analyze_source(MAIN, str(root / "main.py"), workspace=ws)
    return [(f.code, f.span.start.line, f.message) for f in fa.findings], ws


def test_same_findings_from_the_index_without_parsing(tmp_path, monkeypatch):
    root = _project(tmp_path)
    store = str(tmp_path / "cache" / "definitions.pickle")
    plain, _ = _findings(root, None)
    assert [(c, ln) for c, ln, _ in plain] == [("GM201", 7)]  # the tensor branch; `if z:` is a str
    built, _ = _findings(root, index := DefinitionsIndex(store, "fp"))
    assert built == plain
    assert index.save() is None and os.path.exists(store)

    parsed = []
    real_parse = definitions.ast.parse
    monkeypatch.setattr(definitions.ast, "parse", lambda *a, **k: parsed.append(a) or real_parse(*a, **k))
    import graphmend.analysis.workspace as wsmod
    monkeypatch.setattr(wsmod.ast, "parse", lambda *a, **k: parsed.append(a) or real_parse(*a, **k))
    again = DefinitionsIndex(store, "fp")
    got, ws = _findings(root, again)
    assert got == plain
    assert again.hits >= 1 and again.misses == 0
    sym = ws.symbols("pkg.base")
    assert isinstance(sym, IndexedSymbols)
    assert sym._full is None  # scale()'s answer came from the record: its body was not read
    assert [a for a in parsed if a and isinstance(a[0], str) and "class Base" in a[0]] == []


# the base stores an annotated constructor parameter (attr_types.param_stores); a subclass in
# another file calls it with a tensor, and a subclass of the annotated class there reads float()
HELD_BASE = """import torch
from torch import nn


class Noise:
    def __call__(self, x):
        return x


class Solver(nn.Module):
    def __init__(self, bm: Noise):
        super().__init__()
        self.bm = bm
"""

HELD_MAIN = """import torch
from pkg.base import Noise, Solver


class Loud(Noise):
    def __call__(self, x):
        return torch.full((3,), float(x))


class Euler(Solver):
    def forward(self, x: torch.Tensor):
        return self.bm(x[0]) * 2
"""


def test_what_an_indexed_base_stores_is_recorded(tmp_path, monkeypatch):
    """What a base class in an indexed module stores in `self` comes from its record: the check
    of the subclass's file gives the same findings, without parsing the base's module (it
    crashed: the indexed methods have no bodies)."""
    root = _project(tmp_path, HELD_BASE)
    main = root / "pkg" / "main.py"  # Workspace.subclasses reads the package's files
    main.write_text(HELD_MAIN)

    def findings(index):
        ws = Workspace([str(root)])
        ws.definitions = index
        fa = analyze_source(HELD_MAIN, str(main), workspace=ws)
        return [(f.code, f.span.start.line) for f in fa.findings], ws

    store = str(tmp_path / "cache" / "definitions.pickle")
    plain, _ = findings(None)
    assert plain == [("GM401", 7)]  # `self.bm(x[0])` may run Loud.__call__: float() of a tensor
    index = DefinitionsIndex(store, "fp")
    assert findings(index)[0] == plain
    assert index.save() is None
    again = DefinitionsIndex(store, "fp")
    got, ws = findings(again)
    assert got == plain
    sym = ws.symbols("pkg.base")
    assert isinstance(sym, IndexedSymbols) and sym._full is None


def _parsed_modules(monkeypatch) -> list[str]:
    """The modules whose whole source the analysis parses (Workspace.module_source), as a list
    that fills as it runs."""
    import graphmend.analysis.workspace as wsmod
    sources: list[str] = []
    real_source = wsmod.Workspace.module_source
    monkeypatch.setattr(wsmod.Workspace, "module_source", lambda self, m: sources.append(m) or real_source(self, m))
    return sources


def _session(root, index, sources: list[str]) -> Workspace:
    """A new session's workspace over `root` with the definitions `index` (None: none), the
    list of parsed modules emptied."""
    sources.clear()
    ws = Workspace([str(root)])
    ws.definitions = index
    return ws


# the base calls the subclass's `forward` with what a helper in a third module returns
CALLS_BASE = """import torch
from pkg.helpers import make


class Base(torch.nn.Module):
    def run(self, x):
        return self.forward(make(x))
"""

HELPER_STR = """def make(x):
    return "x"
"""

HELPER_TENSOR = """import torch


def make(x):
    return torch.zeros(3)
"""

CALLS_MAIN = """from pkg.base import Base


class M(Base):
    def forward(self, y):
        if y.sum() > 0:
            return y
        return -y
"""


def test_a_base_that_passes_no_tensor_is_not_parsed_again(tmp_path, monkeypatch):
    """That no method of an indexed base calls `self.forward(...)` with a tensor is recorded,
    with the files its walk read: the next session does not parse the base's module; when a file
    the answer read changes (the helper now returns a tensor), it is computed again, and the
    override's branch on the argument is found, as without the index."""
    root = _project(tmp_path, CALLS_BASE)
    helpers = root / "pkg" / "helpers.py"
    helpers.write_text(HELPER_STR)
    main = root / "pkg" / "main.py"
    main.write_text(CALLS_MAIN)
    sources = _parsed_modules(monkeypatch)

    def findings(index):
        fa = analyze_source(CALLS_MAIN, str(main), workspace=_session(root, index, sources))
        return [(f.code, f.span.start.line) for f in fa.findings]

    store = str(tmp_path / "cache" / "definitions.pickle")
    assert findings(None) == []  # `make` returns a str: `y` is not known to be a tensor
    assert "pkg.base" in sources  # the base's methods were walked
    index = DefinitionsIndex(store, "fp")
    assert findings(index) == []
    assert index.save() is None
    assert findings(DefinitionsIndex(store, "fp")) == []
    assert "pkg.base" not in sources  # the recorded answer

    helpers.write_text(HELPER_TENSOR)
    assert findings(None) == [("GM201", 6)]
    again = DefinitionsIndex(store, "fp")
    assert findings(again) == [("GM201", 6)]
    assert "pkg.base" in sources  # helpers.py changed: the answer was computed again


# a module-level helper of another module, called with a tensor; its parameter is unannotated
HELPER_QUIET = """def scale(t, k):
    return t * k
"""

HELPER_BRANCHES = """def scale(t, k):
    if t.sum() > 0:
        return t * k
    return t
"""

CALLS_HELPER = """import torch
from pkg.base import scale


class M(torch.nn.Module):
    def forward(self, x: torch.Tensor):
        return scale(x, 2)
"""


def test_a_helper_that_reveals_nothing_is_not_parsed_again(tmp_path, monkeypatch):
    """That the walk of another module's function, with the tensors a call passes it, finds
    nothing is recorded with the files it read: the next session does not parse that module;
    when it changes (the helper now branches on the tensor), the walk is made again and the
    branch is found, as without the index."""
    root = _project(tmp_path, HELPER_QUIET)
    main = root / "pkg" / "main.py"
    main.write_text(CALLS_HELPER)
    sources = _parsed_modules(monkeypatch)

    def findings(index):
        """What the call reveals in the helper's module (callers.Seeded), as the editor gets it."""
        from graphmend.analysis.engine import summarize
        summary = summarize(CALLS_HELPER, str(main), workspace=_session(root, index, sources))
        return [(os.path.basename(s.path), s.finding.code, s.finding.span.start.line) for s in summary.seeded]

    store = str(tmp_path / "cache" / "definitions.pickle")
    assert findings(None) == []
    assert "pkg.base" in sources  # the helper was walked with `t` a tensor
    index = DefinitionsIndex(store, "fp")
    assert findings(index) == []
    assert index.save() is None
    assert findings(DefinitionsIndex(store, "fp")) == []
    assert "pkg.base" not in sources  # the recorded answer

    time.sleep(0.01)
    (root / "pkg" / "base.py").write_text(HELPER_BRANCHES)
    assert findings(None) == [("base.py", "GM201", 2)]
    assert findings(DefinitionsIndex(store, "fp")) == [("base.py", "GM201", 2)]
    assert "pkg.base" in sources  # base.py changed: walked again


def test_a_changed_module_is_read_again(tmp_path):
    root = _project(tmp_path)
    store = str(tmp_path / "cache" / "definitions.pickle")
    index = DefinitionsIndex(store, "fp")
    assert [c for c, *_ in _findings(root, index)[0]] == ["GM201"]
    index.save()
    # Base is no nn.Module any more: M.forward is not compiled code, nothing is reported
    time.sleep(0.01)
    (root / "pkg" / "base.py").write_text(BASE.replace("class Base(nn.Module):", "class Base:"))
    assert _findings(root, DefinitionsIndex(store, "fp"))[0] == []
    assert _findings(root, None)[0] == []
    # scale() returns no tensor any more: `if y.sum() > 0` is not known to read a tensor
    (root / "pkg" / "base.py").write_text(BASE.replace("return torch.relu(x) * 2", "return 2"))
    fresh = DefinitionsIndex(store, "fp")
    assert _findings(root, fresh)[0] == _findings(root, None)[0]
    assert fresh.misses >= 1


def _saved(tmp_path):
    """A project, the index its analysis wrote, and that index as stored (unpickled)."""
    root = _project(tmp_path)
    store = str(tmp_path / "cache" / "definitions.pickle")
    index = DefinitionsIndex(store, "fp")
    _findings(root, index)
    index.save()
    with open(store, "rb") as f:
        return root, store, pickle.load(f)


def test_answers_computed_later_are_recorded(tmp_path):
    root, store, data = _saved(tmp_path)
    (key, (stat, blob)), = [(k, v) for k, v in data["modules"].items() if k[1] == "pkg.base"]
    record = pickle.loads(blob)
    # the kinds of each function's returns (dataflow.return_kinds): a tensor, a string
    assert record["returns"] == {"scale": (Kind.TENSOR,), "label": (Kind.STATIC,)}
    assert record["classes"]["Base"][0] == ["torch.nn.Module"]
    assert stat == stat_of(key[0])


@pytest.mark.parametrize("content", [b"", b"not a pickle", pickle.dumps({"format": 999}),
                                     pickle.dumps({"format": definitions.FORMAT, "fingerprint": "other",
                                                   "modules": {}})])
def test_a_bad_or_foreign_index_is_ignored_and_rewritten(tmp_path, content):
    root = _project(tmp_path)
    store = tmp_path / "cache" / "definitions.pickle"
    store.parent.mkdir()
    store.write_bytes(content)
    index = DefinitionsIndex(str(store), "fp")
    assert len(index) == 0
    assert _findings(root, index)[0] == _findings(root, None)[0]
    assert index.save() is None
    assert len(DefinitionsIndex(str(store), "fp")) >= 1


def test_a_damaged_record_reads_the_file(tmp_path):
    root, store, data = _saved(tmp_path)
    data["modules"] = {k: (st, b"\x80garbage") for k, (st, _) in data["modules"].items()}
    with open(store, "wb") as f:
        pickle.dump(data, f)
    again = DefinitionsIndex(store, "fp")
    assert _findings(root, again)[0] == _findings(root, None)[0]
    assert again.hits == 0


def test_two_writers_merge(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        d.mkdir()
        _project(d)
    store = str(tmp_path / "cache" / "definitions.pickle")
    first, second = DefinitionsIndex(store, "fp"), DefinitionsIndex(store, "fp")  # two servers
    _findings(a, first)
    _findings(b, second)
    assert first.save() is None and second.save() is None
    paths = {k[0] for k in pickle.load(open(store, "rb"))["modules"]}
    assert str(a / "pkg" / "base.py") in paths and str(b / "pkg" / "base.py") in paths


def test_an_unwritable_directory_is_reported(tmp_path):
    root = _project(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("")
    index = DefinitionsIndex(str(blocker / "sub" / "definitions.pickle"), "fp")
    _findings(root, index)
    error = index.save()
    assert error is not None and "cannot write the definitions index" in error


# ------------------------------------------------------------------------- the language server


def _server(options: dict):
    from graphmend.lsp.server import GraphMendServer
    ls = GraphMendServer()
    ls.apply_settings({"debounceMs": 10, **options})
    return ls


def _tree(root) -> set[str]:
    return {os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs}


def test_server_keeps_the_index_in_the_user_cache_only(tmp_path, monkeypatch):
    home = tmp_path / "home-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    root = _project(tmp_path / "ws")
    (root / "main.py").write_text(MAIN)
    before = _tree(root)
    ls = _server({})
    ls.model = Workspace([str(root)])
    ls.attach_definitions()
    assert ls.model.definitions is not None
    fa = analyze_source(MAIN, str(root / "main.py"), workspace=ls.model)
    assert [(f.code, f.span.start.line) for f in fa.findings] == [("GM201", 7)]
    ls.shutdown_pools()  # the index is written when the server shuts down
    (store,) = Path(home, "graphmend").glob("definitions-*.pickle")
    assert _tree(root) == before  # nothing in the workspace
    data = pickle.loads(store.read_bytes())
    assert (str(root / "pkg" / "base.py"), "pkg.base") in data["modules"]


def test_server_writes_no_index_when_turned_off(tmp_path, monkeypatch):
    home = tmp_path / "home-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    root = _project(tmp_path / "ws")
    ls = _server({"userCache": False})
    ls.model = Workspace([str(root)])
    ls.attach_definitions()
    assert ls.model.definitions is None
    analyze_source(MAIN, str(root / "main.py"), workspace=ls.model)
    ls.shutdown_pools()
    assert not home.exists()
    # turned off later (workspace/configuration): the index is detached
    on = _server({})
    on.attach_definitions()
    assert on.model.definitions is not None
    on.apply_settings({"userCache": False}, on.settings)
    assert on.model.definitions is None
    on.shutdown_pools()
