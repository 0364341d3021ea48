"""What the analysis of one file asks of the modules it imports, kept on disk between runs.

Opening a file resolves its classes' bases and its calls' targets in other modules: whether
`T5PreTrainedModel` is an nn.Module needs `transformers.modeling_utils` (6,000 lines),
`torch.nn.modules.module` and a dozen more, and whether `apply_chunking_to_forward(...)` returns a
tensor needs the body of that function. Parsing them was most of the time from `didOpen` to the
first diagnostics. This index keeps, per module file (and the module name it was read as, which
relative imports and qualified names depend on), exactly what workspace.Workspace.symbols gives:

  * imports, aliases, star imports, whether it is a package;
  * each top-level class: its qualified bases, its methods' names, its buffers and parameters,
    what its methods construct in `self` (attribute -> the called function's qualified name),
    and the parameters its methods store in `self` with their annotations (attr_types.param_stores:
    what `self.bm(...)` in a subclass elsewhere holds);
  * each module-level function's name, and the answers of dataflow.return_kinds computed so far
    (a function's answer depends on its module's text alone: a foreign module is evaluated
    without a workspace, so nothing outside it is consulted);
  * the names `n` of its `self.n(...)` calls; for which of them no method of a class passes a
    tensor (callers.inherited_facts asks this of every base class of an opened file's classes);
    and which of its functions reveal nothing when a call elsewhere passes them tensors at given
    positions (callers.seeded_findings). Each answer took parsing and walking the whole module
    (`transformers.modeling_utils` for every model) and is kept with the stat data of the files
    its walk read: valid while they match.

A record is valid while its file's stat data (size, mtime_ns, inode) match; a function's body is
parsed (the whole file, as before) only when an answer that is not recorded is asked for. The
index is one pickle: a dict from (path, module) to the stat data and the record pickled on its
own, so a start-up reads one file and decodes only the records it uses. Keyed by the engine's
fingerprint (analysis code that changes an answer is never fed an old one).
"""

from __future__ import annotations

import ast
import os
import pickle
import sys
import threading
from pathlib import Path
from typing import Optional

from graphmend.analysis.attr_types import param_stores
from graphmend.analysis.symbols import ClassInfo, FunctionInfo, Symbols
from graphmend.filestat import Stat, replace_file, stat_of

FORMAT = 6
Key = tuple[str, str]  # (absolute path, module name)


def user_cache_dir() -> str:
    """Where the editor's index lives: the user's cache directory, never the workspace
    ($XDG_CACHE_HOME or ~/.cache on Linux, ~/Library/Caches on macOS, %LOCALAPPDATA% on Windows)."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.join(os.path.expanduser("~"), "AppData", "Local")
    elif sys.platform == "darwin":
        base = os.path.join(os.path.expanduser("~"), "Library", "Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "graphmend")


def record_of(sym: Symbols) -> dict:
    """What a definitions-only Symbols holds that another file's analysis reads."""
    return {
        "module": sym.module,
        "is_package": sym.is_package,
        "imports": dict(sym.imports),
        "aliases": dict(sym.aliases),
        "star_imports": list(sym.star_imports),
        "logger_names": sorted(sym.logger_names),
        "classes": {name: (list(ci.bases), [(m, fi.qualname) for m, fi in ci.methods.items()],
                           {a: None if ann is None else ast.unparse(ann) for a, ann in param_stores(ci).items()},
                           sorted(ci._buffers), dict(ci._attr_ctors))
                    for name, ci in sym.classes.items()},
        "functions": list(sym.functions),
        "returns": dict(sym.__dict__.get("returns_cache", {})),
        "passes_nothing": {},  # key (see passes_nothing) -> ((path, stat), ...) of the files the answer read
    }


def passes_nothing(sym: Symbols, key: str) -> bool:
    """The index records, for `sym`'s module, that a walk finds nothing (`key`: "Class.name":
    no method of the class calls `self.<name>(...)` with a tensor; "seeded:...": the function's
    walk with the tensors a call passes finds no site and no further call), and no file that
    answer read has changed since."""
    entry = sym.__dict__.get("index_entry")
    deps = entry.record["passes_nothing"].get(key) if entry is not None else None
    return deps is not None and all(stat_of(f) == st for f, st in deps)


def note_passes_nothing(sym: Symbols, key: str, read: set[str]) -> None:
    """Record that answer for `sym`'s module (indexed, or parsed and added to the index), with
    the files its walk read (`read`, the workspace's `consulted` while it was computed)."""
    entry = sym.__dict__.get("index_entry")
    if entry is not None:
        entry.answered_passes_nothing(key, tuple((f, stat_of(f)) for f in sorted(read)))


class _LazyFunction(FunctionInfo):
    """A function of an indexed module: its name and qualname are known; its body is read (the
    module parsed, once) only if something asks for it."""

    def __init__(self, qualname: str, cls: Optional[ClassInfo], owner: "IndexedSymbols"):
        super().__init__(None, qualname, cls)  # type: ignore[arg-type]
        self._owner = owner

    def _real(self) -> Optional[FunctionInfo]:
        full = self._owner.parsed()
        if full is None:
            return None
        if self.cls is None:
            return full.functions.get(self.qualname)
        ci = full.classes.get(self.cls.name)
        return ci.methods.get(self.qualname.rsplit(".", 1)[-1]) if ci is not None else None

    @property
    def node(self):
        if self._node is None:
            real = self._real()
            # a file changed or unreadable since it was indexed: a function nothing is known of
            self._node = real._node if real is not None else ast.parse(
                f"@unknown\ndef {self.qualname.rsplit('.', 1)[-1]}(*args, **kwargs): pass").body[0]
        return super().node


class IndexedSymbols(Symbols):
    """A module's Symbols rebuilt from its index record, without parsing the file."""

    def __init__(self, record: dict, path: str, entry: "ModuleEntry"):
        super().__init__(None, record["module"], record["is_package"], collect=False,  # type: ignore[arg-type]
                         definitions_only=True)
        self.path = path
        self._full: Optional[Symbols] = None
        self._parse_lock = threading.Lock()
        self.imports = dict(record["imports"])
        self.aliases = dict(record["aliases"])
        self.star_imports = list(record["star_imports"])
        self.logger_names = set(record["logger_names"])
        for name, (bases, methods, stores, buffers, ctors) in record["classes"].items():
            ci = ClassInfo(None, name, list(bases), _attr_ctors=dict(ctors), _buffers=set(buffers))  # type: ignore[arg-type]
            # the methods have no bodies until parsed: what they store is recorded
            ci._param_stores = {a: None if ann is None else ast.parse(ann, mode="eval").body
                                for a, ann in stores.items()}
            for m, q in methods:
                fi = _LazyFunction(q, ci, self)
                ci.methods[m] = fi
                self.all_functions.append(fi)
            self.classes[name] = ci
        for name in record["functions"]:
            fi = _LazyFunction(name, None, self)
            self.functions[name] = fi
            self.all_functions.append(fi)
        self.returns_cache = _RecordedAnswers(record["returns"], entry)
        self.index_entry = entry

    def parsed(self) -> Optional[Symbols]:
        with self._parse_lock:
            if self._full is None:
                try:
                    text = Path(self.path).read_text(encoding="utf-8")
                    self._full = Symbols(ast.parse(text), self.module, is_package=self.is_package,
                                         definitions_only=True)
                except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
                    return None
            return self._full


class _RecordedAnswers(dict):
    """A module's return_kinds answers: those recorded, and each new one noted in the index."""

    def __init__(self, answers: dict, entry: "ModuleEntry"):
        super().__init__(answers)
        self._entry = entry

    def __setitem__(self, name, value) -> None:
        super().__setitem__(name, value)
        self._entry.answered(name, value)


class ModuleEntry:
    """One module's record in the index, and how to tell it that an answer was computed."""

    def __init__(self, index: "DefinitionsIndex", key: Key, stat: Stat, record: dict):
        self.index, self.key, self.stat, self.record = index, key, stat, record

    def answered_passes_nothing(self, key: str, deps: tuple) -> None:
        with self.index._lock:
            if self.record["passes_nothing"].get(key) != deps:
                self.record["passes_nothing"][key] = deps
                self.index._dirty[self.key] = self

    def answered(self, name: str, value: tuple) -> None:
        with self.index._lock:  # records are pickled under the same lock (save)
            if self.record["returns"].get(name) != value:
                self.record["returns"][name] = value
                self.index._dirty[self.key] = self


class DefinitionsIndex:
    """The on-disk index (see the module docstring). Thread-safe: the server analyses in several
    threads with one Workspace, and saves from another."""

    def __init__(self, path: str, fingerprint: Optional[str] = None):
        if fingerprint is None:
            from graphmend.fingerprint import engine_fingerprint
            fingerprint = engine_fingerprint("definitions")
        self.path = path
        self.fingerprint = fingerprint
        self._lock = threading.Lock()
        self._stored: dict[Key, tuple[Stat, bytes]] = {}  # as read (records still pickled)
        self._dirty: dict[Key, ModuleEntry] = {}
        self.hits = self.misses = 0
        self._load()

    def _load(self) -> None:
        try:
            with open(self.path, "rb") as f:
                data = pickle.load(f)
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, ValueError,
                IndexError, TypeError):
            return
        if isinstance(data, dict) and data.get("format") == FORMAT and data.get("fingerprint") == self.fingerprint \
                and isinstance(data.get("modules"), dict):
            self._stored = data["modules"]

    def __len__(self) -> int:
        return len(self._stored.keys() | self._dirty.keys())

    def symbols(self, path: str, module: str) -> Optional[Symbols]:
        """The module's Symbols from its record, if the file is unchanged since; else None."""
        key = (path, module)
        with self._lock:
            stored = self._stored.get(key)
            entry = self._dirty.get(key)
        now = stat_of(path)
        if entry is not None and entry.stat == now:
            record = entry.record
        elif stored is not None and stored[0] == now:
            try:
                record = pickle.loads(stored[1])
            except Exception:  # a damaged record: read the file instead
                self.misses += 1
                return None
            entry = ModuleEntry(self, key, now, record)
        else:
            self.misses += 1
            return None
        self.hits += 1
        return IndexedSymbols(record, path, entry)

    def add(self, path: str, module: str, stat: Optional[Stat], sym: Symbols,
            self_call_names: Optional[frozenset] = None) -> None:
        """Record a module just parsed (`stat`: its file's, taken before it was read), with the
        names `n` of its `self.n(...)` calls (Workspace.self_call_names). Its return_kinds
        answers are recorded as they are computed."""
        if stat is None:
            return
        entry = ModuleEntry(self, (path, module), stat, {**record_of(sym), "self_call_names": self_call_names})
        sym.returns_cache = _RecordedAnswers(entry.record["returns"], entry)
        sym.index_entry = entry
        self.changed(entry)

    def changed(self, entry: ModuleEntry) -> None:
        with self._lock:
            self._dirty[entry.key] = entry

    @property
    def dirty(self) -> bool:
        return bool(self._dirty)

    def save(self) -> Optional[str]:
        """Write the index (atomically), merged with what another process wrote meanwhile.
        Returns an error message, or None."""
        with self._lock:
            if not self._dirty:
                return None
            fresh = {k: (e.stat, pickle.dumps(e.record, protocol=pickle.HIGHEST_PROTOCOL))
                     for k, e in self._dirty.items()}
            self._dirty = {}
        other = DefinitionsIndex.__new__(DefinitionsIndex)
        other.path, other.fingerprint, other._stored = self.path, self.fingerprint, {}
        other._load()  # another server (a second editor window) may have written since
        with self._lock:
            merged = {**other._stored, **self._stored, **fresh}
            self._stored = merged
        # entries whose file is gone are dropped, so the index does not grow without bound
        merged = {k: v for k, v in merged.items() if os.path.exists(k[0])}
        blob = pickle.dumps({"format": FORMAT, "fingerprint": self.fingerprint, "modules": merged},
                            protocol=pickle.HIGHEST_PROTOCOL)
        try:
            replace_file(self.path, blob, ".definitions-")
        except OSError as e:
            return f"cannot write the definitions index {self.path}: {e.strerror or e}"
        return None


def index_path(directory: str, fingerprint: Optional[str] = None) -> str:
    if fingerprint is None:
        from graphmend.fingerprint import engine_fingerprint
        fingerprint = engine_fingerprint("definitions")
    return os.path.join(directory, f"definitions-{fingerprint[:16]}.pickle")
