"""Which functions Dynamo traces: compiled entries, and everything they call.

Per file we find the entries (`@torch.compile` in any spelling, `torch.compile(f)`, the
`forward` of every nn.Module subclass, module hooks) and the call edges of every function
(local ones by qualname, others as dotted names). `reach` closes over the edges of one file
or of many (the CLI joins all files it scans, so a helper in another file is in scope when a
forward reaches it).
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

from graphmend.analysis.detect import is_disabled
from graphmend.analysis.symbols import (ClassInfo, FunctionInfo, Symbols, called_methods, function_refs, lineage,
                                        getattr_dispatch, getattr_pattern, overrides)
from graphmend.analysis.workspace import Workspace, class_of

COMPILE_NAMES = frozenset({"torch.compile", "torch._dynamo.optimize", "torch.compiler.compile"})
# The runtime helper block a mend inserts (rewrite/runtime.py) is ours, not the user's.
RUNTIME_PREFIXES = ("_graphmend_", "_gm_")
HOOK_METHODS = frozenset({"register_forward_hook", "register_forward_pre_hook",
                          "register_full_backward_hook", "register_module_forward_hook",
                          "register_module_forward_pre_hook"})


@dataclass
class FileScope:
    module: str
    entries: dict[str, str] = field(default_factory=dict)  # qualname -> why ("@torch.compile", ...)
    edges: dict[str, set[str]] = field(default_factory=dict)  # qualname -> {"mod:qual" | qual}
    defined: set[str] = field(default_factory=set)  # every function qualname in the file
    disabled: set[str] = field(default_factory=set)
    # module-level class -> its bases' dotted names: `reach` follows a virtual edge
    # ("~mod:Cls.m", `self.m()` in a method of Cls) to the overrides in other files' subclasses
    classes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # qualname -> the other methods whose bodies its edges were read from (a getter returning
    # `getattr(self, ...)`): an edit of one of them makes those edges stale (analysis/incremental.py)
    edge_reads: dict[str, frozenset[str]] = field(default_factory=dict)


BUILTIN_NAMES = frozenset(dir(builtins))  # `len(x)`, `isinstance(...)`: never a local bound to a function
# Method names too common to say which class a value of unknown type is an instance of: those of
# the builtin containers and of the protocols a model's objects share (a module, an optimizer, a
# distribution, an autograd Function).
GENERIC_METHODS = frozenset(dir(dict)) | frozenset(dir(list)) | frozenset(dir(str)) | frozenset(dir(set)) | \
    frozenset({"forward", "backward", "apply", "step", "update", "reset", "reset_parameters", "train", "eval",
               "to", "cuda", "cpu", "float", "half", "double", "parameters", "named_parameters", "modules",
               "children", "state_dict", "load_state_dict", "zero_grad", "sample", "rsample", "log_prob",
               "encode", "decode", "generate", "run", "compute", "predict", "fit", "transform", "call", "init",
               "setup", "build", "close", "save", "load", "add", "remove", "register", "size", "shape", "view",
               "reshape", "item", "numpy", "detach", "clone", "sum", "mean", "max", "min", "norm", "dim"})
VIRTUAL = "~"  # an edge "~mod:Cls.m": `self.m()` in Cls, also every override of m in a subclass


def _is_compile(expr: ast.expr, sym: Symbols) -> bool:
    target = expr.func if isinstance(expr, ast.Call) else expr
    return (sym.qualify(target) or "") in COMPILE_NAMES


def _method_targets(sym: Symbols, ci: ClassInfo, name: str, ws: Workspace, depth: int = 0) -> list[str]:
    """Where `self.<name>` resolves: this class's method, else the bases' (dotted)."""
    if name in ci.methods:
        owner = sym.module if sym.module else ""
        return [f"{owner}:{ci.methods[name].qualname}"]
    if depth > 6:
        return []
    out: list[str] = []
    for b in ci.bases:
        if not b or b in ("torch.nn.Module", "object"):
            continue
        found = class_of(b, sym, ws)
        if found is not None:
            out += _method_targets(found[0], found[1], name, ws, depth + 1)
            if out:
                break
    return out


def file_scope(sym: Symbols, ws: Workspace, scope_mode: str = "default",
               known_edges: Optional[Callable[[FunctionInfo], Optional[tuple]]] = None) -> FileScope:
    """`known_edges`: the call edges of a function and the methods they were read from
    (`FileScope.edge_reads`) when they are known from the analysis of the previous version (None:
    compute them), for re-analysing one edited function."""
    fs = FileScope(sym.module)
    mod = sym.module
    fs.classes = {name: tuple(b for b in ci.bases if b) for name, ci in sym.classes.items()}
    module_classes = {name for name, ci in sym.classes.items() if ws.class_is_module(sym, ci)}
    for fi in sym.all_functions:
        fs.defined.add(fi.qualname)
        if is_disabled(fi.node, sym) or fi.qualname.startswith(RUNTIME_PREFIXES):
            fs.disabled.add(fi.qualname)
            continue
        if any(_is_compile(d, sym) for d in fi.node.decorator_list):
            fs.entries[fi.qualname] = "@torch.compile"
        elif scope_mode == "module":
            fs.entries[fi.qualname] = "module scope"
        elif (scope_mode == "default" and fi.cls is not None and fi.node.name == "forward"
              and fi.cls.name in module_classes and fi.qualname == f"{fi.cls.name}.forward"):
            fs.entries[fi.qualname] = "nn.Module.forward"
        known = known_edges(fi) if known_edges is not None else None
        if known is None:
            getters: set[str] = set()
            known = (_edges(fi, sym, ws, mod, getters), frozenset(getters))
        fs.edges[fi.qualname] = known[0]
        if known[1]:
            fs.edge_reads[fi.qualname] = known[1]
    _compile_calls(sym, fs, module_classes, hooks=scope_mode != "compiled")
    return fs


def _edges(fi: FunctionInfo, sym: Symbols, ws: Workspace, mod: str, getters: set[str]) -> set[str]:
    """The call edges of `fi`; `getters` collects the other methods whose bodies were read."""
    out: set[str] = set()
    local_defs = set(fi.nested)
    for d in fi.node.decorator_list:  # a decorator's wrapper runs around the function
        target = d.func if isinstance(d, ast.Call) else d
        out |= _callee(target, fi, sym, ws, mod, local_defs)
    for name in fi.nested:  # closures defined here (called, returned or passed on)
        out.add(f"{mod}:{fi.qualname}.<locals>.{name}")
    refs = dispatch = None
    for node in fi.calls:
        func = node.func
        if isinstance(func, ast.Name) and func.id not in local_defs and func.id not in sym.functions \
                and func.id not in sym.classes and func.id not in sym.imports and func.id not in BUILTIN_NAMES:
            if refs is None:
                refs = function_refs(fi.node)  # a local bound to a function: `fn = mod.f` then `fn(x)`
            for ref in refs.get(func.id, ()):
                out |= _callee(ref, fi, sym, ws, mod, local_defs)
            if func.id in refs:
                continue
            if fi.cls is not None:  # `fn = getattr(self, f"{kind}_reduction")`, then `fn(...)`
                dispatch = getattr_dispatch(fi, getters) if dispatch is None else dispatch
                if func.id in dispatch:
                    out |= _dispatch_edges(dispatch[func.id], fi, sym, ws, mod)
                    continue
        elif isinstance(func, ast.Call) and fi.cls is not None:  # `getattr(self, "assert_" + kind)(...)`
            pattern = getattr_pattern(func)
            if pattern is not None:
                out |= _dispatch_edges(pattern, fi, sym, ws, mod)
                continue
        out |= _callee(func, fi, sym, ws, mod, local_defs)
    return out


def _callee(func: ast.expr, fi: FunctionInfo, sym: Symbols, ws: Workspace, mod: str,
            local_defs: set[str]) -> set[str]:
    if isinstance(func, ast.Name):
        name = func.id
        if name in local_defs:
            return {f"{mod}:{fi.qualname}.<locals>.{name}"}
        if name in sym.functions:
            return {f"{mod}:{name}"}
        if name in sym.classes:  # instantiating a local class runs its __init__ (not forward)
            return {f"{mod}:{name}.__init__"}
        q = sym.qualify(func)
        if q and "." in q:
            m, n = q.rsplit(".", 1)
            return {f"{m}:{n}", f"{m}:{n}.__init__"}
        return set()
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        base = func.value.id
        if func.attr == "apply" and base not in ("self", "cls"):
            # `MyFunction.apply(x)`: an autograd Function, whose forward Dynamo traces
            q = sym.qualify(func.value)
            found = class_of(q, sym, ws) if q else None
            if found is not None and ws.is_autograd_function(found[0], found[1]):
                # and its backward: Dynamo traces it with the forward, and the autograd engine
                # calls it, a frame of its own, from a compiled train step's `backward()`
                return set(_method_targets(found[0], found[1], "forward", ws)) | \
                    set(_method_targets(found[0], found[1], "backward", ws))
        if base in ("self", "cls") and fi.cls is not None:  # `cls.m(...)` in a classmethod
            ci = fi.cls
            if func.attr in ci.attr_ctors and func.attr not in ci.methods:
                ctor = ci.attr_ctors[func.attr]
                found = class_of(ctor, sym, ws)
                if found is not None:  # self.sub(...) runs the submodule's forward
                    return set(_method_targets(found[0], found[1], "forward", ws))
                return set()
            return _self_method_edges(called_methods(ci, func.attr), ci, sym, ws, mod)
        if base in sym.classes:
            return set(_method_targets(sym, sym.classes[base], func.attr, ws))
        q = sym.qualify(func)
        if q and base in sym.imports:
            m, n = q.rsplit(".", 1)
            return {f"{m}:{n}"}
        if base not in ("self", "cls") and base not in sym.imports and base not in sym.aliases:
            return _unique_method(func.attr, sym)
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute) \
            and isinstance(func.value.value, ast.Name) and func.value.value.id == "self" and fi.cls is not None:
        # `self.proj_updater.redraw_projections()` (performer-pytorch): a method of a submodule
        ctor = fi.cls.attr_ctors.get(func.value.attr)
        # torch's own modules (`self.layers.append(...)`) are not followed: resolving them was 1.5 s
        # of a check of transformers' models/ (jedi, through torch's star imports)
        found = None
        if ctor and "." in ctor and not ctor.startswith(("torch.", "builtins.", "typing.", "collections.")):
            local = ctor.rsplit(".", 1)[-1]
            # no jedi for this edge (`depth=1`): a star-imported class is not followed here
            found = (sym, sym.classes[local]) if ctor == f"{sym.module}.{local}" and local in sym.classes \
                else ws.resolve_class(ctor, 1)
        if found is not None:
            return set(_method_targets(found[0], found[1], func.attr, ws))
        return set()
    if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name) and func.value.func.id == "super"
            and fi.cls is not None):
        out: set[str] = set()
        for b in fi.cls.bases:
            found = class_of(b, sym, ws) if b else None
            if found is not None:
                out |= set(_method_targets(found[0], found[1], func.attr, ws))
        return out
    return set()


def _unique_method(name: str, sym: Symbols) -> set[str]:
    """`v.name(...)` on a value of unknown type: the method of the one class of this file that
    defines `name` (linformer's `block.backward_pass(y, dy)` over `ctx.blocks`, its reversible
    blocks), unless the name is a common protocol's (GENERIC_METHODS) or several classes define it."""
    if name in GENERIC_METHODS or name.startswith("__"):
        return set()
    owners = sym.method_owners().get(name, ())
    if len(owners) != 1:
        return set()
    return {f"{sym.module}:{owners[0].methods[name].qualname}"}


def _self_method_edges(names: Iterable[str], ci: ClassInfo, sym: Symbols, ws: Workspace, mod: str) -> set[str]:
    """Where `self.<name>(...)` in a method of `ci` leads, for each of `names`: the method of the
    class or its bases, and the overrides in subclasses, which `self` may be an instance of:
    this file's here, every checked file's through the virtual edge (`reach`)."""
    found: set[str] = set()
    for name in names:
        found |= set(_method_targets(sym, ci, name, ws))
        found |= {f"{mod}:{fo.qualname}" for fo in overrides(sym, ci, name)}
        if ci.name in sym.classes and sym.classes[ci.name] is ci:
            found.add(f"{VIRTUAL}{mod}:{ci.name}.{name}")
    return found


def _method_names(sym: Symbols, ci: ClassInfo, ws: Workspace) -> set[str]:
    """The names of the methods of `ci` and of its bases (those the workspace finds)."""
    return {m for _, c in lineage(sym, ci, 12, ws) for m in c.methods}


def _dispatch_edges(pattern, fi: FunctionInfo, sym: Symbols, ws: Workspace, mod: str) -> set[str]:
    """The methods a call through `getattr(self, <pattern>)` may run (symbols.getattr_dispatch)."""
    ci = fi.cls
    names = sorted(n for n in _method_names(sym, ci, ws) if pattern.match(n))
    return _self_method_edges(names, ci, sym, ws, mod) if names else set()


_CALL_ATTRS = frozenset({name.rsplit(".", 1)[1] for name in COMPILE_NAMES}) | HOOK_METHODS


def _compile_calls(sym: Symbols, fs: FileScope, module_classes: set[str], hooks: bool = True) -> None:
    """`torch.compile(f)`, `torch.compile(Model())`, `m = Model(); torch.compile(m)`, and module
    hooks (not under scope "compiled": a hook runs compiled only if its module is)."""
    instances: dict[str, str] = {}
    # `x.attr(...)` can only qualify to a name ending in `.attr`: only `compile`, `optimize` and the
    # hook methods need a look (qualifying every call of a large file took ~20 ms)
    calls = [c for c in (*sym.module_calls, *(c for fi in sym.all_functions for c in fi.calls))
             if not isinstance(c.func, ast.Attribute) or c.func.attr in _CALL_ATTRS]
    if not any(_is_compile(c.func, sym) or (isinstance(c.func, ast.Attribute) and c.func.attr in HOOK_METHODS)
               for c in calls):
        return
    for node in sym.name_call_assigns:
        if node.value.func.id in sym.classes:
            for t in node.targets:
                if isinstance(t, ast.Name):
                    instances[t.id] = node.value.func.id
    for node in calls:
        is_compile = _is_compile(node.func, sym) and node.args
        is_hook = hooks and isinstance(node.func, ast.Attribute) and node.func.attr in HOOK_METHODS and node.args
        if not (is_compile or is_hook):
            continue
        why = "torch.compile(...)" if is_compile else f"{node.func.attr}(...)"
        arg = node.args[0]
        if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name):
            arg = arg.func
            cls = arg.id if arg.id in sym.classes else None
        else:
            cls = instances.get(arg.id) if isinstance(arg, ast.Name) else None
        if cls is not None and "forward" in sym.classes[cls].methods:
            fs.entries.setdefault(f"{cls}.forward", why)
        elif isinstance(arg, ast.Name) and arg.id in sym.functions:
            fs.entries.setdefault(arg.id, why)
        elif isinstance(arg, ast.Name) and arg.id in sym.classes:
            if "forward" in sym.classes[arg.id].methods:
                fs.entries.setdefault(f"{arg.id}.forward", why)
        elif isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == "self":
            for ci in sym.classes.values():
                if arg.attr in ci.methods and _encloses(ci.node, node):
                    fs.entries.setdefault(ci.methods[arg.attr].qualname, why)


def _encloses(outer: ast.AST, inner: ast.AST) -> bool:
    return (outer.lineno <= inner.lineno and (outer.end_lineno or 0) >= (inner.end_lineno or 0))


def reach(scopes: Iterable[FileScope]) -> dict[str, dict[str, str]]:
    """Close over the edges of all given files. Returns module -> {qualname: entry label}."""
    by_mod = {fs.module: fs for fs in scopes}
    result: dict[str, dict[str, str]] = {m: {} for m in by_mod}
    work: list[tuple[str, str, str]] = []
    for fs in by_mod.values():
        for q, why in fs.entries.items():
            label = why[4:] if why.startswith("via ") else (f"{q} ({why})" if why != "nn.Module.forward" else q)
            work.append((fs.module, q, label))
    subclasses: Optional[dict[str, list[tuple[str, str]]]] = None
    followed: set[str] = set()
    while work:
        mod, q, label = work.pop()
        fs = by_mod.get(mod)
        if fs is None or q not in fs.defined or q in fs.disabled or q in result[mod]:
            continue
        result[mod][q] = label
        for t in fs.edges.get(q, ()):
            if t.startswith(VIRTUAL):
                if t in followed:
                    continue
                followed.add(t)
                if subclasses is None:
                    subclasses = _subclasses(by_mod.values())
                work.extend((m, f"{cls}.{meth}", label) for m, cls, meth in _overriding(t, subclasses, by_mod))
                continue
            m, _, tq = t.partition(":")
            work.append((m or mod, tq, label))
    return result


def _subclasses(scopes: Iterable[FileScope]) -> dict[str, list[tuple[str, str]]]:
    """Dotted class name -> the (module, class) of the classes that name it as a base."""
    out: dict[str, list[tuple[str, str]]] = {}
    for fs in scopes:
        for cls, bases in fs.classes.items():
            for b in bases:
                out.setdefault(b, []).append((fs.module, cls))
    return out


def _overriding(edge: str, subclasses: dict[str, list[tuple[str, str]]],
                by_mod: dict[str, FileScope]) -> list[tuple[str, str, str]]:
    """(module, class, method) of the overrides a virtual edge "~mod:Cls.m" leads to, in every
    subclass of Cls, at any depth, among the given files."""
    mod, _, rest = edge[len(VIRTUAL):].partition(":")
    cls, _, meth = rest.rpartition(".")
    out, seen, todo = [], set(), [f"{mod}.{cls}"]
    while todo:
        for m, c in subclasses.get(todo.pop(), ()):
            if (m, c) in seen:
                continue
            seen.add((m, c))
            fs = by_mod.get(m)
            if fs is not None and f"{c}.{meth}" in fs.defined:
                out.append((m, c, meth))
            todo.append(f"{m}.{c}")
    return out
