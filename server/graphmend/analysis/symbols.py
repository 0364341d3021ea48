"""One file's symbols from its ast: imports, classes, functions, and dotted-name qualification."""

from __future__ import annotations

import ast
import contextlib
import re
import string
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

from graphmend.analysis.astwalk import arg_names, children
from graphmend.analysis.astwalk import walk as fast_walk

FuncNode = Union[ast.FunctionDef, ast.AsyncFunctionDef]


class _Reads(threading.local):
    """What the analysis of one function reads of the rest of the file, while `tracking()` is
    on: the qualnames of the functions whose bodies it looks at (their `node`, `calls` or
    `evidence`), "class:<name>" for a class' `attr_ctors`/`buffers` (collected from all its
    methods), and "*" for the whole tree. Incremental re-analysis re-walks a function when an
    edit changes what it read (analysis/incremental.py)."""

    current: Optional[set] = None


READS = _Reads()


@contextlib.contextmanager
def tracking(into: set):
    outer, READS.current = READS.current, into
    try:
        yield into
    finally:
        READS.current = outer


@dataclass
class FunctionInfo:
    _node: FuncNode
    qualname: str  # "Class.method", "func", "outer.<locals>.inner"
    cls: Optional["ClassInfo"] = None
    # Filled by the one traversal of the module (nested definitions excluded):
    _calls: list[ast.Call] = field(default_factory=list)
    nested: list[str] = field(default_factory=list)  # names of functions defined directly inside
    # names used like tensors (x.view(...), x.shape) -> the last line of such a use
    _evidence: dict[str, int] = field(default_factory=dict)
    backward_only: set[str] = field(default_factory=set)  # names whose only evidence is `.backward()`

    # what comes from the body is read through these, so that `tracking()` sees it
    @property
    def node(self) -> FuncNode:
        reads = READS.current
        if reads is not None:
            reads.add(self.qualname)
        return self._node

    @property
    def calls(self) -> list[ast.Call]:
        reads = READS.current
        if reads is not None:
            reads.add(self.qualname)
        return self._calls

    @property
    def evidence(self) -> dict[str, int]:
        reads = READS.current
        if reads is not None:
            reads.add(self.qualname)
        return self._evidence


@dataclass
class ClassInfo:
    node: ast.ClassDef
    name: str
    bases: list[str]  # qualified dotted names of the bases, as far as they can be qualified
    methods: dict[str, FunctionInfo] = field(default_factory=dict)
    # self.<attr> = <call> in any method: attr -> qualified dotted name of the callee (e.g. "torch.nn.Linear")
    _attr_ctors: dict[str, str] = field(default_factory=dict)
    _buffers: set[str] = field(default_factory=set)  # register_buffer / nn.Parameter names
    _method_aliases: Optional[dict[str, list[str]]] = None  # method_aliases(), computed when first asked
    _param_stores: Optional[dict] = None  # attr_types.param_stores(), computed when first asked
    _declared_tensors: Optional[frozenset] = None  # Env.declared_tensor, computed when first asked

    @property
    def attr_ctors(self) -> dict[str, str]:
        reads = READS.current
        if reads is not None:
            reads.add(f"class:{self.name}")
        return self._attr_ctors

    @property
    def buffers(self) -> set[str]:
        reads = READS.current
        if reads is not None:
            reads.add(f"class:{self.name}")
        return self._buffers


def module_name_for(path: str) -> str:
    """Dotted module name of a file, climbing package directories (those with __init__.py)."""
    p = Path(path)
    if not p.suffix == ".py":
        return p.stem
    parts = [] if p.stem == "__init__" else [p.stem]
    d = p.parent
    while (d / "__init__.py").is_file():
        parts.insert(0, d.name)
        if d.parent == d:
            break
        d = d.parent
    return ".".join(parts) or p.stem


def resolve_relative(module: str, is_package: bool, level: int, mod: Optional[str]) -> Optional[str]:
    """The dotted module `from <level dots><mod> import ...` names in `module`; None when the
    dots go past the top package."""
    if level == 0:
        return mod or ""
    base = module.split(".") if module else []
    if not is_package:
        base = base[:-1]
    if level - 1 > len(base):
        return None
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, *([mod] if mod else [])])


def _autograd_call(f: ast.expr) -> bool:
    """`autograd.grad`, `torch.autograd.grad`, `torch.autograd.backward` (as written)."""
    if not (isinstance(f, ast.Attribute) and f.attr in ("grad", "backward")):
        return False
    v = f.value
    return (isinstance(v, ast.Name) and v.id == "autograd") or (
        isinstance(v, ast.Attribute) and v.attr == "autograd" and isinstance(v.value, ast.Name) and v.value.id == "torch")


def _used_like_a_tensor(fi: FunctionInfo, name: str, line: int) -> None:
    if fi._evidence.get(name, 0) < line:
        fi._evidence[name] = line


class Symbols:
    """Imports, classes and functions of one module, and `qualify(expr)` to dotted names."""

    def __init__(self, tree: ast.Module, module: str = "", is_package: bool = False, collect: bool = True,
                 definitions_only: bool = False):
        self._tree = tree
        self.module = module
        self.is_package = is_package
        self.imports: dict[str, str] = {}  # local name -> dotted target
        self.aliases: dict[str, str] = {}  # local name = <dotted attr>  (e.g. tc = torch.compile)
        self.classes: dict[str, ClassInfo] = {}
        self.functions: dict[str, FunctionInfo] = {}  # module-level functions by name
        self.all_functions: list[FunctionInfo] = []  # every def, nested and methods included
        self.logger_names: set[str] = set()
        self._pending_classes: list[ClassInfo] = []
        self.star_imports: list[str] = []  # modules imported with `from m import *`
        # `self.<attr> = <call>`, or a conditional expression of two calls (also through a local
        # bound once to one): the value
        self._self_assigns: list[tuple[ClassInfo, str, ast.expr]] = []
        self._single_values: dict[int, dict[str, ast.expr]] = {}  # single_assignments per method, while collecting
        self.module_calls: list[ast.Call] = []
        self.name_call_assigns: list[ast.Assign] = []  # every `x = f(...)`, anywhere in the file
        # Only imports, classes (bases, methods), functions and module-level aliases: what another
        # file's analysis asks of a module it imports (analysis/workspace.py); no expression is
        # looked at, so calls, evidence, attr_ctors, buffers and name_call_assigns stay empty.
        self.definitions_only = definitions_only
        self.workspace = None  # the analysed file's: where other modules' functions are looked up
        self._subclasses: Optional[dict[str, set[str]]] = None  # subclass_names
        self._method_owners: Optional[dict[str, list[ClassInfo]]] = None  # method_owners
        if collect:
            self._collect()

    @property
    def tree(self) -> ast.Module:
        reads = READS.current
        if reads is not None:
            reads.add("*")
        return self._tree

    @tree.setter
    def tree(self, tree: ast.Module) -> None:
        self._tree = tree

    def method_owners(self) -> dict[str, list["ClassInfo"]]:
        """Method name -> the classes of this file that define it (computed once)."""
        if self._method_owners is None:
            owners: dict[str, list[ClassInfo]] = {}
            for ci in self.classes.values():
                for m in ci.methods:
                    owners.setdefault(m, []).append(ci)
            self._method_owners = owners
        return self._method_owners

    def subclass_names(self) -> dict[str, set[str]]:
        """Class name -> the names of this file's classes that list it as a base (computed once;
        an edit that changes a class body is analysed in full, analysis/incremental.py)."""
        if self._subclasses is None:
            local = {f"{self.module}.{n}": n for n in self.classes}
            children: dict[str, set[str]] = {}
            for n, ci in self.classes.items():
                for b in ci.bases:
                    parent = local.get(b) or (b if b in self.classes else None)
                    if parent is not None and parent != n:
                        children.setdefault(parent, set()).add(n)
            self._subclasses = children
        return self._subclasses

    def part(self, node: FuncNode, cls: Optional[ClassInfo], prefix: str) -> "Symbols":
        """What one definition contributes, collected as `_collect` does for the whole file (for
        re-analysing an edited function, analysis/incremental.py): its FunctionInfos (nested
        ones included), imports, `x = f(...)` and `self.x = f(...)` assignments. `cls` is
        a stand-in for the class of a method (its `methods` receive the method)."""
        out = Symbols(self._tree, self.module, self.is_package, collect=False)
        out._traverse([(node, None, cls, prefix)])
        return out

    # --- imports -----------------------------------------------------------------------------
    def _resolve_relative(self, level: int, mod: Optional[str]) -> str:
        found = resolve_relative(self.module, self.is_package, level, mod)
        return (mod or "") if found is None else found  # past the top package: as if absolute

    def _collect(self) -> None:
        """One traversal of the whole tree: imports, definitions, and per-function calls."""
        # stack items: (node, enclosing FunctionInfo or None, class being defined or None, prefix)
        self._traverse([(n, None, None, "") for n in reversed(self._tree.body)])
        self._finish()

    def _traverse(self, stack: list) -> None:
        from graphmend.analysis.dataflow import TENSOR_EVIDENCE  # the one list of tensor methods

        definitions_only = self.definitions_only
        expr, stmt = ast.expr, ast.stmt
        while stack:
            node, fi, cls, prefix = stack.pop()
            if isinstance(node, expr):
                # an expression holds no statement: its whole subtree is scanned here, in the
                # order the stack would give (depth-first, children in field order)
                if not definitions_only:
                    self._scan_expr(node, fi, TENSOR_EVIDENCE)
                continue
            if definitions_only and not isinstance(node, stmt):
                if not isinstance(node, (ast.excepthandler, ast.match_case)):
                    continue  # arguments, withitem, keyword, ...: expressions only
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                q = f"{prefix}{node.name}"
                new = FunctionInfo(node, q, cls)
                self.all_functions.append(new)
                if cls is not None and fi is None:
                    cls.methods.setdefault(node.name, new)
                elif fi is None and not prefix:
                    self.functions[node.name] = new
                if fi is not None:
                    fi.nested.append(node.name)
                for d in node.decorator_list:
                    stack.append((d, fi, None, prefix))
                args = node.args
                for dflt in [*args.defaults, *[d for d in args.kw_defaults if d is not None]]:
                    stack.append((dflt, fi, None, prefix))
                for child in reversed(node.body):
                    stack.append((child, new, None, f"{q}.<locals>."))
                continue
            if isinstance(node, ast.ClassDef):
                ci = ClassInfo(node, node.name, [self.qualify(b) or "" for b in node.bases])
                if fi is None and not prefix:
                    self.classes[node.name] = ci
                self._pending_classes.append(ci)
                for child in reversed(node.body):
                    stack.append((child, None, ci, f"{prefix}{node.name}."))
                continue
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.imports[a.asname] = a.name
                    else:
                        top = a.name.split(".")[0]
                        self.imports[top] = top
            elif isinstance(node, ast.ImportFrom):
                src = self._resolve_relative(node.level, node.module)
                for a in node.names:
                    if a.name != "*":
                        self.imports[a.asname or a.name] = f"{src}.{a.name}" if src else a.name
                    else:
                        self.star_imports.append(src)
            elif definitions_only and fi is not None and fi.cls is not None and isinstance(node, (ast.Expr, ast.Assign)) \
                    and isinstance(node.value, ast.Call):
                # what another file's subclass reads of this class: its buffers and parameters
                # (`self.register_buffer("frozen", ...)` in pomegranate's Distribution base), and
                # what its methods construct in `self` (torchdr's `self.n_iter_ = torch.tensor(-1)`
                # in AffinityMatcher.__init__, read as a tensor in a subclass elsewhere)
                c = node.value
                if isinstance(node, ast.Expr):
                    if (name := registered_name(c)) is not None:
                        fi.cls._buffers.add(name)
                else:
                    self._self_assigns.extend((fi.cls, a, c) for a in _self_attrs(node.targets))
            elif isinstance(node, ast.Assign) and isinstance(node.value, (ast.Call, ast.IfExp, ast.Name)) \
                    and not definitions_only:
                if isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name):
                    self.name_call_assigns.append(node)  # `m = Model(...)` (torch.compile(m) targets)
                attrs = _self_attrs(node.targets) if fi is not None and fi.cls is not None else ()
                value = self._stored_value(fi, node.value) if attrs else None
                if value is not None:
                    self._self_assigns.extend((fi.cls, a, value) for a in attrs)
            keep = cls if fi is None and isinstance(node, (ast.If, ast.Try, ast.With)) else None
            for child in reversed(children(node)):
                stack.append((child, fi, keep, prefix))

    def _stored_value(self, fi: FunctionInfo, value: ast.expr) -> Optional[ast.expr]:
        """What a store `self.<attr> = value` in `fi` tells of (note_self_assign): a call, a
        conditional expression (torch-pca's `self.noise_variance_ = torch.mean(...) if ... else
        torch.tensor(0.0)`, realcode round 26), or what a local is bound to, once (`noise =
        torch.mean(x)`, then `self.noise = noise`); None for anything else."""
        if isinstance(value, ast.Name):
            if id(fi) not in self._single_values:
                self._single_values[id(fi)] = single_assignments(fi.node)
            value = self._single_values[id(fi)].get(value.id)
        return value if isinstance(value, (ast.Call, ast.IfExp)) else None

    def _scan_expr(self, root: ast.expr, fi: Optional[FunctionInfo], evidence_methods,
                   shadow: frozenset = frozenset()) -> None:
        """Calls (per function, or the module's) and tensor evidence in one expression. A
        lambda's parameters (`shadow` in its body) are not the function's names: `map(lambda t:
        t.reshape(...), ...)` is no evidence that the function's `t` is a tensor
        (routing-transformer's `b, h, t, d = *q.shape`)."""
        calls = fi._calls if fi is not None else self.module_calls
        Call, Attribute, Subscript, Name = ast.Call, ast.Attribute, ast.Subscript, ast.Name
        stack = [root]
        while stack:
            node = stack.pop()
            t = type(node)
            if t is ast.Lambda and fi is not None:
                a = node.args
                stack.extend(d for d in (*a.defaults, *a.kw_defaults) if d is not None)
                self._scan_expr(node.body, fi, evidence_methods, shadow | set(arg_names(a)))
                continue
            if t is Call:
                calls.append(node)
                f = node.func
                if fi is not None and type(f) is Attribute and type(f.value) is Name and f.value.id not in shadow \
                        and f.attr in evidence_methods and not _str_split(node, fi._node):
                    if f.attr != "backward":
                        fi.backward_only.discard(f.value.id)
                    elif f.value.id not in fi._evidence:
                        fi.backward_only.add(f.value.id)
                    _used_like_a_tensor(fi, f.value.id, node.lineno)
                if fi is not None and node.args and type(node.args[0]) is Name and node.args[0].id not in shadow \
                        and _autograd_call(f):
                    # what autograd differentiates is a tensor (torchmin's `f = self.fun(x)`, a
                    # user's objective, then `autograd.grad(f, x)` and `float(f)`)
                    _used_like_a_tensor(fi, node.args[0].id, node.lineno)
            elif t is Attribute:
                if fi is not None and type(node.value) is Name and node.value.id not in shadow \
                        and node.attr in ("shape", "dtype", "device", "ndim"):
                    _used_like_a_tensor(fi, node.value.id, node.lineno)
            elif t is Subscript:
                # x[:, 0], x[..., 1:]: multi-dimensional slicing is what tensors (and arrays) take
                if fi is not None and isinstance(node.value, Name) and node.value.id not in shadow \
                        and isinstance(node.slice, ast.Tuple) \
                        and any(isinstance(e, (ast.Slice,)) or (isinstance(e, ast.Constant) and e.value is Ellipsis)
                                for e in node.slice.elts):
                    _used_like_a_tensor(fi, node.value.id, node.lineno)
            elif t is Name or t is ast.Constant:
                continue  # no children
            kids = children(node)
            if kids:
                kids.reverse()
                stack.extend(kids)

    def _finish(self) -> None:
        for stmt in self._tree.body:
            self._top_level(stmt)
        for ci in self._pending_classes:
            ci.bases = [self.qualify(b) or "" for b in ci.node.bases]
        self._single_values = {}
        for ci, attr, call in self._self_assigns:
            note_self_assign(self, ci, attr, call)
        for fi in self.all_functions:
            if fi.cls is None:
                continue
            for c in fi._calls:
                if (name := registered_name(c)) is not None:
                    fi.cls.buffers.add(name)

    def _top_level(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            v = stmt.value
            if isinstance(v, (ast.Attribute, ast.Name)):
                q = self.qualify(v)
                if q:
                    self.aliases[name] = q
            elif isinstance(v, ast.Call):
                q = self.qualify(v.func) or ""
                if q.endswith(("getLogger", "get_logger")) or q in ("logging.Logger",):
                    self.logger_names.add(name)
        elif isinstance(stmt, (ast.If, ast.Try)):
            for s in getattr(stmt, "body", []) + getattr(stmt, "orelse", []):
                self._top_level(s)

    # --- names -------------------------------------------------------------------------------
    def qualify(self, expr: ast.expr) -> Optional[str]:
        """`nn.Module` -> "torch.nn.Module" following imports; None for non-name expressions."""
        parts: list[str] = []
        e = expr
        while isinstance(e, ast.Attribute):
            parts.append(e.attr)
            e = e.value
        if not isinstance(e, ast.Name):
            return None
        head = e.id
        if head in self.imports:
            head = self.imports[head]
        elif head in self.aliases:
            head = self.aliases[head]
        elif head in self.classes or head in self.functions:
            head = f"{self.module}.{head}" if self.module else head
        return ".".join([head, *reversed(parts)])


def function_refs(fn: ast.AST) -> dict[str, list[ast.expr]]:
    """Locals of a function bound only to references of functions (`spline_fn =
    splines.rational_quadratic_spline` in one branch, `= splines.unconstrained_...` in the other,
    or `f = a if flag else b`): name -> the referenced expressions, for the calls through them.
    A name also bound to anything else (a call's result, a loop target, a parameter, anything in
    a nested function) is left out. One pass over the function's nodes."""
    from graphmend.analysis.astwalk import preorder

    refs: dict[str, list[ast.expr]] = {}
    other: set[str] = {a.arg for a in preorder(fn.args) if isinstance(a, ast.arg)} if hasattr(fn, "args") else set()
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
    ref_values: set[int] = set()
    for n in preorder(fn):
        if n is not fn and isinstance(n, nested):
            other |= {x.id for x in preorder(n) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)}
            if not isinstance(n, ast.Lambda):
                other.add(n.name)
            continue
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            v = n.value
            values = [v.body, v.orelse] if isinstance(v, ast.IfExp) else [v]
            if all(isinstance(x, (ast.Name, ast.Attribute)) for x in values):
                refs.setdefault(n.targets[0].id, []).extend(values)
                ref_values.add(id(n.targets[0]))
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and id(n) not in ref_values:
            other.add(n.id)
    return {k: v for k, v in refs.items() if k not in other}


def _self_attrs(targets: list[ast.expr]) -> list[str]:
    """The attributes of `self` among assignment targets (`self.x = ...`)."""
    return [t.attr for t in targets
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"]


def note_self_assign(sym: "Symbols", ci: "ClassInfo", attr: str, value: ast.expr) -> None:
    """What a store `self.<attr> = value` tells of the attribute: its constructor (`attr_ctors`, the
    first store's), a parameter (`buffers`). A conditional expression is a constructor when both
    arms are calls of tensor constructors (`torch.mean(...) if c else torch.tensor(0.0)`: torch-pca's
    `noise_variance_`, realcode round 26)."""
    if isinstance(value, ast.IfExp):
        if not (isinstance(value.body, ast.Call) and isinstance(value.orelse, ast.Call)):
            return
        q, other = sym.qualify(value.body.func), sym.qualify(value.orelse.func)
        if q and other:
            from graphmend.analysis.dataflow import tensor_ctor  # dataflow imports this module
            if tensor_ctor(q) and tensor_ctor(other):
                ci.attr_ctors.setdefault(attr, q)
        return
    q = sym.qualify(value.func)
    if q:
        ci.attr_ctors.setdefault(attr, q)
    if q in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
        ci.buffers.add(attr)


def single_assignments(fn: ast.AST, neutral=None) -> dict[str, ast.expr]:
    """Locals of `fn` (not its parameters) bound exactly once in it, by a plain `name = value`
    (name -> value). Every other binding (augmented, annotated, a loop or comprehension target,
    `:=`, `with ... as`, a tuple target) counts as one too; `neutral(binding, name)` names
    bindings that do not count (detect: `mask = None` before the mask)."""

    binds: dict[str, list] = {}
    for n in fast_walk(fn):
        if type(n) not in _BINDING_TYPES:  # (most nodes: statement_targets would give [])
            continue
        for t in statement_targets(n):
            for x in fast_walk(t):
                if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store):
                    binds.setdefault(x.id, []).append(n)
    params = {a.arg for a in fast_walk(fn.args) if isinstance(a, ast.arg)} if hasattr(fn, "args") else set()
    out = {}
    for name, bs in binds.items():
        if neutral is not None:
            bs = [b for b in bs if not neutral(b, name)]
        if len(bs) == 1 and isinstance(bs[0], ast.Assign) and name not in params and any(
                isinstance(t, ast.Name) and t.id == name for t in bs[0].targets):
            out[name] = bs[0].value
    return out


def method_aliases(ci: "ClassInfo") -> dict[str, list[str]]:
    """Attributes of `ci` bound only to its own methods in its methods: `self.loss_method =
    self.mat_based_loss if mat_based_loss else self.pair_based_loss` (pytorch-metric-learning's
    GenericPairLoss), so `self.loss_method(...)` calls one of them. attr -> the method names. An
    attribute also bound to anything else, or that is a method itself, is left out. Computed
    on the first call for a class (only `self.x(...)` calls of a non-method ask)."""
    if ci._method_aliases is not None:
        return ci._method_aliases
    found: dict[str, list[str]] = {}
    other: set[str] = set(ci.methods)
    for fi in ci.methods.values():
        for n in _statements(fi.node.body):  # statements only: an attribute is bound by one
            if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                for t in targets:
                    if not (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"):
                        continue
                    v = n.value
                    values = [v.body, v.orelse] if isinstance(v, ast.IfExp) else [v]
                    names = [x.attr for x in values if isinstance(x, ast.Attribute) and isinstance(x.value, ast.Name)
                             and x.value.id == "self" and x.attr in ci.methods]
                    if isinstance(n, ast.Assign) and len(targets) == 1 and len(names) == len(values):
                        found.setdefault(t.attr, []).extend(names)
                    else:
                        other.add(t.attr)
    ci._method_aliases = {k: sorted(set(v)) for k, v in found.items() if k not in other}
    return ci._method_aliases


def called_methods(ci: "ClassInfo", attr: str) -> list[str]:
    """The method names `self.<attr>(...)` in a method of `ci` may call: `attr` itself, or the
    methods an attribute of that name is bound to (`method_aliases`)."""
    return [attr] if attr in ci.methods else method_aliases(ci).get(attr, [attr])


def getattr_pattern(e: ast.expr) -> Optional[re.Pattern]:
    """`getattr(self, "{}_reduction".format(kind))` (also an f-string, `"a_" + kind`, `"%s_x" % k`):
    a pattern of the method names it can give, the constant parts kept and each value an
    identifier's worth of characters (pytorch-metric-learning's reducers dispatch so). None for
    anything else, and for a pattern with no constant part (it would match every method)."""
    if not (isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "getattr"
            and len(e.args) == 2 and not e.keywords and isinstance(e.args[0], ast.Name)
            and e.args[0].id in ("self", "cls")):
        return None
    parts = _name_parts(e.args[1])
    if not parts or not any(p for p in parts if p is not None):
        return None
    return re.compile("".join(r"\w+" if p is None else re.escape(p) for p in parts) + r"\Z")


def _name_parts(e: ast.expr, depth: int = 0) -> Optional[list]:
    """The constant strings (str) and the values (None) a string expression is made of, in order;
    None when it is not one of the forms `getattr_pattern` reads."""
    if depth > 4:
        return None
    if isinstance(e, ast.Constant) and isinstance(e.value, str):
        return [e.value]
    if isinstance(e, ast.JoinedStr):
        return [v.value if isinstance(v, ast.Constant) else None for v in e.values]
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
        left, right = _name_parts(e.left, depth + 1), _name_parts(e.right, depth + 1)
        return None if left is None or right is None else left + right
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "format" \
            and isinstance(e.func.value, ast.Constant) and isinstance(e.func.value.value, str):
        text = e.func.value.value
        if "{{" in text or "}}" in text:
            return None
        pieces = re.split(r"\{[^{}]*\}", text)
        return [x for i, piece in enumerate(pieces) for x in ([piece] if i == 0 else [None, piece])]
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mod) and isinstance(e.left, ast.Constant) \
            and isinstance(e.left.value, str):
        pieces = re.split(r"%[sdr]", e.left.value)
        if "%" in "".join(pieces):
            return None
        return [x for i, piece in enumerate(pieces) for x in ([piece] if i == 0 else [None, piece])]
    if isinstance(e, (ast.Name, ast.Attribute)):
        return [None]
    return None


def sole_return(fn: ast.AST) -> Optional[ast.expr]:
    """What a function does nothing but return (`def get(self, k): return getattr(self, k)`,
    a docstring allowed before it); None for any other body."""
    body = fn.body[1:] if ast.get_docstring(fn, clean=False) is not None else fn.body
    return body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None


def registered_name(c: ast.Call) -> Optional[str]:
    """"b" of `....register_buffer("b", ...)` / `register_parameter("b", ...)`; for a name
    formatted there (`'indices_{}'.format(s)`, `f"indices_{s}"`), its template "indices_{}"
    (name_template: read back by `getattr(self, f"indices_{s}")`); else None."""
    f = c.func
    if isinstance(f, ast.Attribute) and f.attr in ("register_buffer", "register_parameter") and c.args:
        if isinstance(c.args[0], ast.Constant) and isinstance(c.args[0].value, str):
            return c.args[0].value
        return name_template(c.args[0])
    if isinstance(f, ast.Attribute) and f.attr in STATE_ADDERS and isinstance(f.value, ast.Name) and f.value.id == "self" \
            and c.args and isinstance(c.args[0], ast.Constant) and isinstance(c.args[0].value, str):
        # a metric's state, which the base class sets on the instance: torchmetrics'
        # `self.add_state("total", default=torch.tensor(0), ...)`, torcheval's
        # `self._add_state("weighted_sum", torch.tensor(0.0))` (`setattr(self, name,
        # deepcopy(default))`, realcode round 31); a tensor when its default is built as one (a
        # list state, `default=[]`, is not)
        default = c.args[1] if len(c.args) > 1 else next((k.value for k in c.keywords if k.arg == "default"), None)
        if isinstance(default, ast.Call) and isinstance(default.func, ast.Attribute) \
                and isinstance(default.func.value, ast.Name) and default.func.value.id == "torch" \
                and default.func.attr in TENSOR_BUILDERS:
            return c.args[0].value
    return None


STATE_ADDERS = frozenset({"add_state", "_add_state"})
TENSOR_BUILDERS = frozenset({"tensor", "as_tensor", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
                             "full_like", "empty_like", "eye", "arange", "rand", "randn"})


def name_template(e: ast.expr) -> Optional[str]:
    """The constant parts of a formatted string with "{}" for each field: `f"in_{s}"` and
    `"in_{}".format(s)` -> "in_{}"; None for anything else (or a string with no field)."""
    if isinstance(e, ast.JoinedStr):
        parts = []
        for v in e.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                parts.append(v.value.replace("{", "{{").replace("}", "}}"))
            elif isinstance(v, ast.FormattedValue):
                parts.append("{}")
            else:
                return None
        text = "".join(parts)
    elif isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "format" \
            and isinstance(e.func.value, ast.Constant) and isinstance(e.func.value.value, str):
        try:
            fields = list(string.Formatter().parse(e.func.value.value))
        except ValueError:
            return None
        text = "".join(lit.replace("{", "{{").replace("}", "}}") + ("{}" if name is not None else "")
                       for lit, name, _, _ in fields)
    else:
        return None
    return text if "{}" in text else None


def bound_only_to(fn: ast.AST, value_of, unpack: bool = False, augmented: bool = False) -> dict[str, list]:
    """Names of `fn` every binding of which is a plain `name = value` for which `value_of(value)`
    is not None: name -> those answers, in order. A parameter, or any other binding, leaves the
    name out (`nx = get_backend(...)`; `hess = A(...) if c else B(...)` on two paths).
    `unpack`: `a, b = call(...)` binds each name to the call's answer; `augmented`: `a += v` is
    a binding that keeps the name in (its answer None)."""

    stores: dict[str, int] = {}
    bound: dict[str, list] = {}
    for n in fast_walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            stores[n.id] = stores.get(n.id, 0) + 1
        elif isinstance(n, ast.arg):
            stores[n.arg] = stores.get(n.arg, 0) + 1
        elif isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            got = value_of(n.value)
            if got is not None:
                bound.setdefault(n.targets[0].id, []).append(got)
        elif unpack and isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Tuple) \
                and isinstance(n.value, ast.Call):
            got = value_of(n.value)
            if got is not None:
                for t in n.targets[0].elts:
                    if isinstance(t, ast.Name):
                        bound.setdefault(t.id, []).append(got)
        elif augmented and isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            bound.setdefault(n.target.id, []).append(None)
    return {k: v for k, v in bound.items() if stores.get(k) == len(v)}


def lineage(sym: "Symbols", ci: "ClassInfo", limit: int = 8, ws=None, local: bool = False):
    """`ci`, then its bases, nearest first (breadth first), each with its module's Symbols: those
    of its own file, and (unless `local`) those the workspace (`ws`, else `sym`'s) finds; never
    torch's, builtins' or typing's own classes. At most `limit` classes, each once."""
    ws = None if local else ws if ws is not None else sym.workspace
    todo, seen = [(sym, ci)], set()
    while todo and len(seen) < limit:
        s, c = todo.pop(0)
        if id(c) in seen:
            continue
        seen.add(id(c))
        yield s, c
        for b in c.bases:
            if not b or b.startswith(("torch.", "builtins.", "typing.")):
                continue
            local = b.rsplit(".", 1)[-1]
            if b == f"{s.module}.{local}" and local in s.classes:
                todo.append((s, s.classes[local]))
            elif ws is not None:
                got = ws.resolve_class(b)
                if got is not None:
                    todo.append(got)


def _str_split(c: ast.Call, fn: Optional[ast.AST] = None) -> bool:
    """`s.split()`, `s.split("->")`, `s.split(sep=",")`: str.split (a tensor's split takes sizes;
    pyro's `inputs, output = equation.split("->")`, realcode round 8); also with a separator that
    is a parameter of `fn` annotated `str` or defaulting to a string (tensordict's
    `key.split(separator)`, `separator: str = "."`)."""
    if not (isinstance(c.func, ast.Attribute) and c.func.attr in ("split", "rsplit")):
        return False
    if not c.args and not c.keywords:
        return True
    first = c.args[0] if c.args else next((k.value for k in c.keywords if k.arg == "sep"), None)
    if isinstance(first, ast.Name) and fn is not None and hasattr(fn, "args"):
        return first.id in _str_params(fn)
    return isinstance(first, ast.Constant) and isinstance(first.value, str)


def param_defaults(args: ast.arguments) -> dict[str, ast.expr]:
    """The default of each parameter that has one (positional and keyword-only), by name."""
    positional = [*args.posonlyargs, *args.args]
    out = {a.arg: d for a, d in zip(positional[len(positional) - len(args.defaults):], args.defaults)}
    out.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
    return out


def _str_params(fn: ast.AST) -> set[str]:
    """Parameters of `fn` annotated `str` (not a Union) or defaulting to a string literal."""
    a = fn.args
    defaults = param_defaults(a)
    out = set()
    for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
        d = defaults.get(p.arg)
        if (isinstance(p.annotation, ast.Name) and p.annotation.id == "str") or (
                isinstance(d, ast.Constant) and isinstance(d.value, str)):
            out.add(p.arg)
    return out


def _is_getter_call(c: ast.Call, ci: "ClassInfo") -> bool:
    """`getattr(self, ...)`, or `self.m(...)` with `m` a method of `ci` that returns one."""
    f = c.func
    if isinstance(f, ast.Name):
        return f.id == "getattr" and len(c.args) == 2 and isinstance(c.args[0], ast.Name) and c.args[0].id in ("self", "cls")
    if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self"
            and f.attr in ci.methods):
        return False
    value = sole_return(ci.methods[f.attr]._node)
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "getattr"


def getattr_dispatch(fi: "FunctionInfo", getters: Optional[set] = None) -> dict[str, re.Pattern]:
    """Locals of a method bound once to a method picked by name (`fn = getattr(self, f"{k}_x")`,
    or `fn = self.get_fn(k)` where `get_fn` does nothing but return such a getattr): name -> the
    pattern of the method names. `getters` collects the qualnames of the getter methods read."""
    out: dict[str, re.Pattern] = {}
    ci = fi.cls
    if ci is None or not any(_is_getter_call(c, ci) for c in fi.calls):
        return out  # no `getattr(self, ...)` nor getter call to bind a local to: nothing to look at
    for name, value in single_assignments(fi.node).items():
        pat = getattr_pattern(value)
        if pat is None and isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                and isinstance(value.func.value, ast.Name) and value.func.value.id == "self":
            getter = ci.methods.get(value.func.attr)
            if getter is not None:
                if getters is not None:
                    getters.add(getter.qualname)
                returned = sole_return(getter.node)
                pat = getattr_pattern(returned) if returned is not None else None
        if pat is not None:
            out[name] = pat
    return out


# the node types statement_targets gives targets of
_BINDING_TYPES = frozenset({ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.comprehension,
                            ast.NamedExpr, ast.With, ast.AsyncWith})


def statement_targets(st: ast.AST) -> list[ast.expr]:
    """What a statement (or a comprehension, a `:=`) binds into: assignment targets, an augmented
    or annotated target, a loop's target, `with ... as x`; [] for anything else."""
    if isinstance(st, ast.Assign):
        return st.targets
    if isinstance(st, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr)):
        return [st.target]
    if isinstance(st, (ast.With, ast.AsyncWith)):
        return [i.optional_vars for i in st.items if i.optional_vars is not None]
    return []


def _statements(body: list[ast.stmt]):
    """The statements of a function body, nested blocks included, nested definitions not."""
    todo = list(reversed(body))
    while todo:
        n = todo.pop()
        yield n
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field_name in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(n, field_name, None)
            if block:
                todo.extend(reversed(block))


def overrides(sym: "Symbols", cls: "ClassInfo", name: str) -> list["FunctionInfo"]:
    """The methods `name` of the classes of this file that derive from `cls` (directly or through
    other classes of the file): where `self.name(...)` in a method of `cls` may lead at run time
    (nflows' `PiecewiseCouplingTransform._coupling_transform` calls `self._piecewise_cdf`, which
    each subclass defines)."""
    children = sym.subclass_names()
    out, seen, todo = [], {cls.name}, list(children.get(cls.name, ()))
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        ci = sym.classes.get(n)
        if ci is None:
            continue
        fi = ci.methods.get(name)
        if fi is not None:
            out.append(fi)
        todo.extend(children.get(n, ()))
    return out


def stored_self_attrs(node: ast.AST) -> frozenset:
    """The attributes of `self` a function's statements store (assign, unpack into, augment, loop
    or `with` into; not its nested definitions')."""
    return frozenset(n.attr for st in _statements(node.body) for t in statement_targets(st)
                     for n in fast_walk(t) if isinstance(n, ast.Attribute)
                     and isinstance(n.value, ast.Name) and n.value.id == "self")


def storing_methods(ci: ClassInfo) -> dict[str, list[FunctionInfo]]:
    """Per attribute of `self`, the methods of `ci` whose statements store it (stored_self_attrs);
    once per ClassInfo (an edit of one of its methods makes a new one)."""
    held = ci.__dict__.get("_storing_methods")
    if held is None:
        held = {}
        for fi in ci.methods.values():
            if fi._node is not None:
                for a in stored_self_attrs(fi._node):
                    held.setdefault(a, []).append(fi)
        ci.__dict__["_storing_methods"] = held
    return held


def local_class(dotted: str, sym: Symbols) -> Optional[ClassInfo]:
    """The class of this file a dotted name (`mod.Cls`, as `qualify` gives it) names, else None."""
    local = dotted.rsplit(".", 1)[-1]
    return sym.classes.get(local) if dotted == f"{sym.module}.{local}" else None


def read_stores(ci: ClassInfo, attr: str) -> None:
    """Record that what the methods of `ci` store in `self.<attr>` was read: an edit that adds a
    store of it to a method marks "stores:<class>.<attr>" dirty (analysis/incremental.py)."""
    reads = READS.current
    if reads is not None:
        reads.add(f"stores:{ci.name}.{attr}")


def self_attr_stores(sym: Symbols, ci: ClassInfo, attr: str) -> list[Optional[ast.expr]]:
    """What each store of `self.<attr>` in the methods of `ci` stores: a plain `self.<attr> = v`
    gives v, any other (unpacked, augmented) None. Cached per file version."""
    cache = sym.__dict__.setdefault("self_attr_stores", {})
    key = (ci.name, attr)
    if key in cache:
        for fi in ci.methods.values():
            fi.node  # noqa: B018 - records the read (symbols.tracking)
    else:
        cache[key] = [st.value if isinstance(st, ast.Assign) and t in st.targets else None
                      for fi in ci.methods.values() for st in _statements(fi.node.body)
                      for t in statement_targets(st) if attr in _self_attrs(
                          [n for n in fast_walk(t) if isinstance(n, ast.Attribute)])]
    return cache[key]
