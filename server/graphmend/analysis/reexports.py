"""Names imported from a package module that are the torch module: `from ..backend import torch`.

deepxde's modules take torch from their own backend package (`from ..backend import backend_name,
tf, torch`); read as written, `torch.autograd.grad(...)` there is a call of
"deepxde.backend.torch.autograd.grad", which no rule knows. The module the name comes from is
read, without importing anything, and the name counts as torch only when every way that module
can bind it gives the torch module or None (None has no attributes: a call through it never
reaches Dynamo):

- `import torch` (or `import torch.nn`, `import torch as torch`), `torch = None`, and
  `from <module> import torch` / `from <module> import *` whose module passes the same test;
- any other binding (an assignment of anything but None, `import numpy as torch`, a def, a
  class, `global torch` in a function, `setattr(m, "torch", ...)`, `globals()["torch"] = ...`),
  an import from a module that cannot be read, or a module `__getattr__`, and the name is not
  torch;
- a package module that sets its own attributes under computed names (deepxde's backend loader:
  `setattr(thismod, api, mod.__dict__[api])` for each name of its API, `mod` one of its
  subpackages imported by name): the value comes from one of the package's own modules, so the
  name counts as torch when no module under the package binds it to anything but the torch
  module or None, and one binds it to torch.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Optional

from graphmend.analysis.symbols import resolve_relative


TORCH, NONE, OTHER = "torch", "none", "other"
_MAX_DEPTH = 6
_MAX_PACKAGE_FILES = 200


def is_torchish(target: str) -> bool:
    return target == "torch" or target.startswith("torch.")


def resolve_torch_reexports(sym, ws) -> None:
    """Point the file's names imported as `from <module> import torch` at "torch" when that
    module's `torch` is the torch module (see the module docstring)."""
    for local, target in list(sym.imports.items()):
        if local != "torch" or not target.endswith(".torch") or is_torchish(target):
            continue
        mod = target[: -len(".torch")]
        if mod and torch_binding(ws, mod, "torch") == TORCH:
            sym.imports[local] = "torch"


def torch_binding(ws, modname: str, attr: str, depth: int = 0, seen: frozenset = frozenset()) -> Optional[str]:
    """What `<modname>.<attr>` is: TORCH, NONE (only ever None), OTHER (anything else, or not
    known), or None when the module does not bind it at all. `seen`: the (module, name) pairs
    on the way here (an import cycle is not followed)."""
    if depth > _MAX_DEPTH or (modname, attr) in seen:
        return OTHER
    seen = seen | {(modname, attr)}
    if ws.module_file(f"{modname}.{attr}"):
        return OTHER  # a submodule of that name
    facts = _module_facts(ws, modname)
    if facts is None:
        return OTHER
    kinds = set()
    for kind, detail in facts["bindings"].get(attr, ()):
        if kind == "from":
            src, name = detail
            kinds.add(OTHER if is_torchish(src) else torch_binding(ws, src, name, depth + 1, seen) or OTHER)
        else:
            kinds.add(kind)
    for src in facts["stars"]:
        if src is None or is_torchish(src):
            kinds.add(OTHER)  # a relative import past the top, or torch's own exports: not read
            continue
        src_facts = _module_facts(ws, src)
        if src_facts is not None and src_facts["exported"] is not None and attr not in src_facts["exported"]:
            continue  # its __all__ leaves the name out
        got = torch_binding(ws, src, attr, depth + 1, seen)
        if got is not None:
            kinds.add(got)
    if attr in facts["constant_sets"] or facts["getattr"]:
        kinds.add(OTHER)
    if OTHER in kinds:
        return OTHER
    if facts["dynamic"]:
        if not facts["package"]:
            return OTHER
        got = _package_binding(ws, modname, facts["file"], attr, depth, seen)
        if got is None or got == OTHER:
            return OTHER
        kinds.add(got)
    if not kinds:
        return None
    return TORCH if TORCH in kinds else NONE


def _package_binding(ws, modname: str, init: str, attr: str, depth: int,
                     seen: frozenset) -> Optional[str]:
    """What the modules under a package directory bind `attr` to, taken together."""
    package = os.path.dirname(init)
    files: list[str] = []
    for d, dirs, names in os.walk(package):
        dirs[:] = sorted(x for x in dirs if not x.startswith((".", "__pycache__")))
        files += [os.path.join(d, n) for n in sorted(names) if n.endswith(".py")]
        if len(files) > _MAX_PACKAGE_FILES:
            return OTHER
    kinds = set()
    for f in files:
        if f == init:
            continue
        rel = os.path.relpath(f, package)[:-3].replace(os.sep, ".")
        rel = rel[: -len(".__init__")] if rel.endswith(".__init__") else rel
        sub = f"{modname}.{rel}"
        facts = _module_facts(ws, sub)
        if facts is None or facts["file"] != f:
            return OTHER
        if facts["dynamic"]:
            continue  # a loader of its own: what it sets comes from the files read here
        got = torch_binding(ws, sub, attr, depth + 1, seen)
        if got is not None:
            kinds.add(got)
    if OTHER in kinds:
        return OTHER
    return TORCH if TORCH in kinds else (NONE if kinds else None)


def _module_facts(ws, modname: str) -> Optional[dict]:
    return ws._read_module(ws.torch_bindings, modname, lambda f: _read_facts(f, modname), None)


def _read_facts(path: str, modname: str) -> Optional[dict]:
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
        return None
    is_package = os.path.basename(path) == "__init__.py"

    def absolute(node: ast.ImportFrom) -> Optional[str]:
        if not node.level:
            return node.module
        return resolve_relative(modname, is_package, node.level, node.module) or None

    bindings: dict[str, list] = {}
    stars: list = []
    exported: Optional[set] = None

    def bind(name: str, kind: str, detail=None) -> None:
        bindings.setdefault(name, []).append((kind, detail))

    def top(stmts) -> None:
        nonlocal exported
        for s in stmts:
            if isinstance(s, ast.Import):
                for a in s.names:
                    if a.asname:
                        bind(a.asname, TORCH if a.name == "torch" else OTHER)
                    else:
                        head = a.name.split(".")[0]
                        bind(head, TORCH if head == "torch" else OTHER)
            elif isinstance(s, ast.ImportFrom):
                src = absolute(s)
                for a in s.names:
                    if a.name == "*":
                        stars.append(src)  # None: past the top package
                    elif src is None:
                        bind(a.asname or a.name, OTHER)
                    else:
                        bind(a.asname or a.name, "from", (src, a.name))
            elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bind(s.name, OTHER)
            elif isinstance(s, ast.Assign):
                none = isinstance(s.value, ast.Constant) and s.value.value is None
                for t in s.targets:
                    for n in _target_names(t):
                        bind(n, NONE if none and isinstance(t, ast.Name) else OTHER)
                    if isinstance(t, ast.Name) and t.id == "__all__":
                        exported = _constant_names(s.value)
            elif isinstance(s, (ast.AnnAssign, ast.AugAssign)):
                for n in _target_names(s.target):
                    bind(n, NONE if isinstance(s, ast.AnnAssign) and isinstance(s.value, ast.Constant)
                         and s.value.value is None else OTHER)
                if isinstance(s.target, ast.Name) and s.target.id == "__all__":
                    exported = None if isinstance(s, ast.AugAssign) else _constant_names(s.value)
            elif isinstance(s, (ast.For, ast.AsyncFor)):
                for n in _target_names(s.target):
                    bind(n, OTHER)
            elif isinstance(s, (ast.With, ast.AsyncWith)):
                for item in s.items:
                    if item.optional_vars is not None:
                        for n in _target_names(item.optional_vars):
                            bind(n, OTHER)
            elif isinstance(s, ast.Delete):
                for t in s.targets:
                    for n in _target_names(t):
                        bind(n, OTHER)
            elif isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
                for h in s.handlers:
                    if h.name:
                        bind(h.name, OTHER)
            elif isinstance(s, ast.Match):
                for case in s.cases:
                    for n in ast.walk(case.pattern):
                        for name in (getattr(n, "name", None), getattr(n, "rest", None)):
                            if isinstance(name, str):
                                bind(name, OTHER)
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                inner = getattr(s, field, None)
                if inner and not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    for x in inner:
                        top(x.body if isinstance(x, (ast.excepthandler, ast.match_case)) else [x])

    top(tree.body)
    dynamic = False
    constant_sets: set = set()
    getattr_hook = False
    for n in ast.walk(tree):
        if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
            bind(n.target.id, OTHER)  # conservative: wherever it is
        elif isinstance(n, ast.Global):
            constant_sets.update(n.names)  # a function may rebind the module's name
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "__getattr__" \
                and n in tree.body:
            getattr_hook = True
        elif isinstance(n, ast.Call):
            f = n.func
            fname = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if fname == "setattr" and len(n.args) >= 2:
                key = n.args[1]
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    constant_sets.add(key.value)
                else:
                    dynamic = True
            elif fname == "update" and isinstance(f, ast.Attribute) and isinstance(f.value, ast.Call) \
                    and getattr(f.value.func, "id", "") in ("globals", "vars", "locals"):
                dynamic = True
        elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store):
            v = n.value
            owner = v.func if isinstance(v, ast.Call) else v if isinstance(v, ast.Attribute) else None
            if (isinstance(owner, ast.Name) and owner.id in ("globals", "vars")) or \
                    (isinstance(owner, ast.Attribute) and owner.attr == "__dict__"):
                if isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str):
                    constant_sets.add(n.slice.value)
                else:
                    dynamic = True
    return {"file": path, "package": is_package, "bindings": bindings, "stars": stars,
            "exported": exported, "constant_sets": constant_sets, "getattr": getattr_hook,
            "dynamic": dynamic}


def _target_names(t: ast.expr) -> list[str]:
    """The names an assignment target binds (`a`, `a, *b`; not `a.x` or `a[i]`)."""
    if isinstance(t, ast.Name):
        return [t.id]
    if isinstance(t, ast.Starred):
        return _target_names(t.value)
    if isinstance(t, (ast.Tuple, ast.List)):
        return [n for e in t.elts for n in _target_names(e)]
    return []


def _constant_names(v: Optional[ast.expr]) -> Optional[set]:
    if isinstance(v, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                                                    for e in v.elts):
        return {e.value for e in v.elts}
    return None

