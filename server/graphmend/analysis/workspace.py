"""Cross-file name resolution: find the source file of a module without importing it, read
its symbols (cached), and answer "is this class an nn.Module?" through the base classes.

Module files are located statically with importlib's PathFinder over the workspace roots and
the interpreter's path (no code runs); jedi is the fallback for names that static lookup
cannot follow (star imports, re-exports through package __init__ files).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib.machinery
import os
import re
import sys
from pathlib import Path
from typing import Optional

from graphmend.analysis.definitions import DefinitionsIndex
from graphmend.filestat import stat_of
from graphmend.analysis.reexports import resolve_torch_reexports
from graphmend.analysis.symbols import ClassInfo, Symbols, local_class

_SELF_CALL = re.compile(r"\b(?:self|cls)\.(\w+)\(")

MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
# Used when the defining file cannot be read (torch or transformers not installed where the
# server runs): names that are nn.Module subclasses in every supported version.
KNOWN_MODULE_SUFFIXES = ("PreTrainedModel", "GradientCheckpointingLayer", "ModuleUtilsMixin")


def import_root(path: str) -> str:
    """Where `path` imports from, as Python would if it were run or installed: the directory
    above its top-level package (its own directory when it is in no package)."""
    d = os.path.dirname(os.path.abspath(path))
    while os.path.isfile(os.path.join(d, "__init__.py")) and os.path.dirname(d) != d:
        d = os.path.dirname(d)
    return d


_WORD = re.compile(r"\b[A-Z_]\w*")


def _words(f: str) -> frozenset[str]:
    """The capitalised words of a file's text (class names among them): a look before parsing."""
    try:
        return frozenset(_WORD.findall(Path(f).read_text(encoding="utf-8-sig")))
    except (OSError, UnicodeDecodeError):
        return frozenset()


def _module_of(root: str, path: str) -> str:
    rel = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
    return rel[:-len(".__init__")] if rel.endswith(".__init__") else rel


class Workspace:
    def __init__(self, roots: Optional[list[str]] = None, extra_paths: Optional[list[str]] = None):
        self.roots = [str(Path(r).resolve()) for r in (roots or [])]
        self.search_path = [*self.roots, *(extra_paths or []), *[p for p in sys.path if p]]
        # bumped when the search path grows (add_import_root): analyses made before are stale
        self.generation = 0
        self._symbols: dict[str, Optional[Symbols]] = {}
        self._module_cache: dict[str, bool] = {}
        self._module_files: dict[str, frozenset[str]] = {}  # the files each kept answer was read from
        self._jedi_cache: dict[str, Optional[str]] = {}
        self.use_jedi = True
        # Module files whose symbols were asked for (a scan cache entry depends on them).
        self.consulted: set[str] = set()
        # what other modules define, kept between runs (analysis/definitions.py); None: parse them
        self.definitions: Optional[DefinitionsIndex] = None
        # module_source: module -> (stat, (Symbols, text, path) or None)
        self._sources: dict[str, tuple] = {}
        self._self_calls: dict[str, tuple] = {}  # self_call_names: module -> (stat, names)
        self._class_words: dict[str, tuple] = {}  # subclasses: module -> (stat, capitalised words)
        self._listings: dict[str, tuple] = {}  # subclasses: package dir -> (stat, .py files)
        self.torch_bindings: dict[str, tuple] = {}  # reexports: module -> (stat, what it binds)
        self.array_attrs: dict[tuple[str, str], bool] = {}  # numpy_attrs: (class, attribute) -> verdict

    def add_import_root(self, path: str) -> bool:
        """Search the import root of the file `path` too (after the workspace roots), as
        `graphmend check` does for the files it checks; True when the search path changed (the
        module lookups made so far are forgotten)."""
        if not os.path.isfile(path):
            return False
        root = import_root(path)
        if root in self.search_path:
            return False
        self.search_path.insert(len(self.roots), root)
        Workspace.module_file.cache_clear()
        self._symbols.clear()
        self._sources.clear()
        self._self_calls.clear()
        self._class_words.clear()
        self._module_cache.clear()
        self._module_files.clear()
        self._jedi_cache.clear()
        self.generation += 1
        return True

    @functools.lru_cache(maxsize=4096)
    def module_file(self, modname: str) -> Optional[str]:
        path = self.search_path
        spec = None
        parts = modname.split(".")
        for i, part in enumerate(parts):
            try:
                spec = importlib.machinery.PathFinder.find_spec(part, path)
            except (ImportError, ValueError, OSError):
                return None
            if spec is None:
                return None
            if i < len(parts) - 1:
                path = list(spec.submodule_search_locations or [])
                if not path:
                    return None
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            return None
        return spec.origin

    def symbols(self, modname: str) -> Optional[Symbols]:
        f = self.module_file(modname)
        if f:
            self.consulted.add(f)
        if modname in self._symbols:
            return self._symbols[modname]
        self._symbols[modname] = None  # guards against import cycles
        sym = None
        index = self.definitions
        if f and index is not None:
            sym = index.symbols(f, modname)
        if f and sym is None:
            stat = stat_of(f)  # before the read: a later edit is seen
            try:
                text = Path(f).read_text(encoding="utf-8")
                # only definitions: what resolving a class, its bases and methods needs
                sym = Symbols(ast.parse(text), modname, is_package=f.endswith("__init__.py"),
                              definitions_only=True)
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
                sym = None
            if sym is not None and stat is not None and not text.startswith("\ufeff"):
                sym.__dict__["parsed_from"] = (f, stat)  # its tree is whole: module_source reuses it
            if sym is not None and index is not None:
                index.add(f, modname, stat, sym, frozenset(_SELF_CALL.findall(text)))
        self._symbols[modname] = sym
        return sym

    def module_source(self, modname: str) -> Optional[tuple[Symbols, str, str]]:
        """A module's full Symbols (function bodies collected, as for the checked file), its text
        and path: for walking one of its functions with what a caller passes
        (analysis/callers.py). Parsed once per workspace; the file counts as consulted."""
        def parse(f: str):
            # the tree the definitions were read from, when this file was parsed for them and has
            # not changed since (a first session reads its imports' definitions, then walks their
            # functions for what callers pass: one parse of each, not two)
            held = self._symbols.get(modname)
            parsed = held.__dict__.get("parsed_from") if held is not None else None
            try:
                stat = stat_of(f)  # before the read
                text = Path(f).read_text(encoding="utf-8-sig")
                tree = held._tree if parsed == (f, stat) and stat is not None else ast.parse(text)
                sym = Symbols(tree, modname, is_package=f.endswith("__init__.py"))
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
                return None
            sym.workspace = self
            resolve_torch_reexports(sym, self)
            return sym, text, f
        return self._read_module(self._sources, modname, parse, None)

    def self_call_names(self, modname: str) -> frozenset[str]:
        """The names `n` of the calls `self.n(...)` and `cls.n(...)` in a module's text: a look
        before parsing it whole (callers.inherited_facts asks of every base class's module).
        The file counts as consulted."""
        sym = self._symbols.get(modname)
        entry = sym.__dict__.get("index_entry") if sym is not None else None
        if entry is not None and entry.record.get("self_call_names") is not None:
            f = self.module_file(modname)  # the index recorded them when it read the file
            if f and entry.stat == stat_of(f):
                self.consulted.add(f)
                return entry.record["self_call_names"]

        def scan(f: str) -> frozenset[str]:
            try:
                return frozenset(_SELF_CALL.findall(Path(f).read_text(encoding="utf-8-sig")))
            except (OSError, UnicodeDecodeError):
                return frozenset()
        return self._read_module(self._self_calls, modname, scan, frozenset())

    def _read_module(self, held: dict, modname: str, read, missing):
        """`read(path)` of a module's file, kept in `held` while the file's stat is the same (a
        module edited since is read again: the language server lives long); the file counts as
        consulted. `missing` when no file is found."""
        f = self.module_file(modname)
        if not f:
            return missing
        self.consulted.add(f)
        stat = stat_of(f)
        kept = held.get(modname)
        if kept is not None and kept[0] == stat:
            return kept[1]
        value = read(f)
        held[modname] = (stat, value)
        return value

    def subclasses(self, dotted: str, limit: int = 400) -> list[tuple[str, str]]:
        """(module, class) of the classes that derive from the class `dotted` ("pkg.mod.Cls"),
        directly or not, in the files of its top-level package: where a call through an attribute
        typed with it may lead (torchsde's solvers call `self.bm(t0, t1)`, `bm: BaseBrownian`;
        `BrownianInterval.__call__` runs). Files are read only when their text names a class
        on the way; none when the package has more than `limit` files. Kept while the files'
        stats are the same."""
        mod, _, name = dotted.rpartition(".")
        f = self.module_file(mod) if mod else None
        if not f:
            return []
        top = import_root(f)
        package = os.path.join(top, mod.split(".")[0])
        files = self._package_files(package, limit)
        out: list[tuple[str, str]] = []
        todo, seen = [(mod, name)], {dotted}
        while todo and len(seen) < 64:
            base_mod, base = todo.pop()
            for path in files:
                if base not in self._read_module(self._class_words, _module_of(top, path), _words, frozenset()):
                    continue
                found = self.module_source(_module_of(top, path))
                if found is None:
                    continue
                sym = found[0]
                for ci in sym.classes.values():
                    for b in ci.bases:
                        if b.rsplit(".", 1)[-1] != base:
                            continue
                        got = self.resolve_class(b) if b != f"{sym.module}.{ci.name}" else None
                        if got is not None and (got[0].module, got[1].name) == (base_mod, base) \
                                and f"{sym.module}.{ci.name}" not in seen:
                            seen.add(f"{sym.module}.{ci.name}")
                            out.append((sym.module, ci.name))
                            todo.append((sym.module, ci.name))
        return out

    def _package_files(self, package: str, limit: int) -> list[str]:
        """The .py files under a package directory (none past `limit`), kept by the directory's
        stat."""
        stat = stat_of(package)
        kept = self._listings.get(package)
        if kept is not None and kept[0] == stat:
            return kept[1]
        files: list[str] = []
        for d, dirs, names in os.walk(package):
            dirs[:] = [x for x in dirs if not x.startswith((".", "__pycache__"))]
            files += [os.path.join(d, n) for n in names if n.endswith(".py")]
            if len(files) > limit:
                files = []
                break
        self._listings[package] = (stat, files)
        return files

    def loaded_files(self) -> set[str]:
        """Every module file this workspace has read definitions or sources of (an
        over-approximation of what one file's analysis depends on)."""
        out = {f for m, sym in list(self._symbols.items()) if sym is not None for f in [self.module_file(m)] if f}
        out |= {held[1][2] for held in list(self._sources.values()) if held[1] is not None}
        return out

    def resolve_class(self, dotted: str, depth: int = 0) -> Optional[tuple[Symbols, ClassInfo]]:
        """"transformers.modeling_utils.PreTrainedModel" -> its Symbols and ClassInfo."""
        if depth > 8 or "." not in dotted:
            return None
        mod, name = dotted.rsplit(".", 1)
        sym = self.symbols(mod)
        if sym is None:
            return None
        if name in sym.classes:
            return sym, sym.classes[name]
        if name in sym.imports and sym.imports[name] != dotted:  # re-export
            return self.resolve_class(sym.imports[name], depth + 1)
        for star in sym.star_imports:  # `from .x import *`
            found = self.resolve_class(f"{star}.{name}", depth + 1)
            if found is not None:
                return found
        if sym.star_imports and depth == 0:  # what static lookup cannot follow, jedi may
            target = self.jedi_goto(mod, name)
            if target and target != dotted:
                return self.resolve_class(target, depth + 1)
        return None

    def jedi_goto(self, mod: str, name: str) -> Optional[str]:
        """Where `from mod import name` really leads (star imports, __all__ games), per jedi;
        cached. jedi only parses: nothing is imported or run."""
        key = f"{mod}.{name}"
        if key in self._jedi_cache:
            return self._jedi_cache[key]
        self._jedi_cache[key] = None
        if not self.use_jedi:
            return None
        try:
            import jedi

            project = jedi.Project(self.roots[0] if self.roots else ".", added_sys_path=self.search_path,
                                   smart_sys_path=False)
            line = f"from {mod} import {name}"
            for d in jedi.Script(line, project=project).goto(1, len(line) - len(name), follow_imports=True):
                if d.type == "class" and d.module_name:
                    self._jedi_cache[key] = f"{d.module_name}.{d.name}"
                    break
        except Exception:  # jedi is a fallback: any failure means "unresolved"
            pass
        return self._jedi_cache[key]

    @contextlib.contextmanager
    def reading(self):
        """Yields a set that holds, on exit, the module files read meanwhile (those `consulted`
        records): what an answer kept for later depends on. They count as consulted by the
        enclosing work too."""
        outer, self.consulted = self.consulted, set()
        read: set[str] = set()
        try:
            yield read
        finally:
            read |= self.consulted
            self.consulted = outer
            outer |= read

    def is_module_class(self, dotted: str, depth: int = 0) -> bool:
        if dotted in MODULE_BASES:
            return True
        if dotted in self._module_cache:
            # a kept answer still depends on the files it was read from: the file being analysed
            # now consulted them too (a scan cache entry must be redone when they change)
            self.consulted |= self._module_files.get(dotted, frozenset())
            return self._module_cache[dotted]
        self._module_cache[dotted] = False
        with self.reading() as mine:  # what this answer reads
            last = dotted.rsplit(".", 1)[-1]
            result = False
            if dotted.startswith("torch.nn.") and last[:1].isupper() and "functional" not in dotted:
                result = True  # nn.Linear, nn.Sequential, nn.ModuleList, ... are all Modules
            elif depth < 12:
                found = self.resolve_class(dotted)
                if found is not None:
                    sym, ci = found
                    result = any(self.class_is_module(sym, ci, depth + 1) for _ in [0])
                elif last.endswith(KNOWN_MODULE_SUFFIXES):
                    result = True
        self._module_cache[dotted] = result
        self._module_files[dotted] = frozenset(mine)
        return result

    def is_autograd_function(self, sym: Symbols, ci: ClassInfo, depth: int = 0) -> bool:
        """A subclass of torch.autograd.Function (through classes of its file or others): its
        `apply` runs its `forward`, which Dynamo traces."""
        for b in ci.bases:
            if b in AUTOGRAD_FUNCTIONS:
                return True
            if depth < 6 and b:
                local = b.rsplit(".", 1)[-1]
                found = (sym, sym.classes[local]) if b == f"{sym.module}.{local}" and local in sym.classes \
                    else self.resolve_class(b)
                if found is not None and found[1] is not ci and self.is_autograd_function(*found, depth + 1):
                    return True
        return False

    def class_is_module(self, sym: Symbols, ci: ClassInfo, depth: int = 0,
                        _seen: Optional[set[int]] = None) -> bool:
        seen = set() if _seen is None else _seen  # local classes visited: `class A(B)`, `class B(A)`
        if id(ci) in seen:
            return False
        seen.add(id(ci))
        for b in ci.bases:
            if not b:
                continue
            if "." not in b and b not in sym.classes:  # a bare name: from a star import?
                if any(self.is_module_class(f"{m}.{b}", depth + 1) for m in sym.star_imports):
                    return True
                continue
            local = b.rsplit(".", 1)[-1]
            if b == f"{sym.module}.{local}" and local in sym.classes and local != ci.name:
                if self.class_is_module(sym, sym.classes[local], depth + 1, seen):
                    return True
            elif self.is_module_class(b, depth + 1):
                return True
        return False


@functools.lru_cache(maxsize=1)
def default_workspace() -> Workspace:
    return Workspace()


def class_of(dotted: str, sym: Symbols, ws: Workspace) -> Optional[tuple[Symbols, ClassInfo]]:
    """A class by its dotted name: this file's own, else the workspace's."""
    own = local_class(dotted, sym)
    return (sym, own) if own is not None else ws.resolve_class(dotted)
