"""GM501's search: where a value that may be None is dereferenced after a statement, on the
path through one function and the functions of the same module it is passed to (detect.py's
`compile_only_none` asks it about `if X is None and not is_compiling(): X = default`)."""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field
from typing import Optional

from graphmend.analysis.astwalk import walk as fast_walk
from graphmend.analysis.symbols import FunctionInfo, Symbols

MAX_CALL_DEPTH = 3


@dataclass
class NoneUse:
    """Where a None value fails: `node` at `line`, and the calls that carried it there."""

    node: ast.AST
    how: str
    via: list[tuple[str, int]] = field(default_factory=list)  # (callee, line of the call)

    @property
    def line(self) -> int:
        return self.node.lineno

    def describe(self) -> str:
        text = ast.unparse(self.node)
        if len(text) > 60:
            text = text[:57] + "..."
        if not self.via:
            return f"`{text}` at line {self.line} {self.how}"
        chain = " -> ".join(f"`{c}()` (line {ln})" for c, ln in self.via)
        return f"it is passed to {chain}, where `{text}` at line {self.line} {self.how}"


# results of scanning a statement for a None dereference
_NORMAL, _EXIT, _LOST = 0, 1, 2  # go on; this path ends; the value may have changed (stop)


class NoneUses:
    """Find a dereference of a name that may be None: on the path after a statement of one
    function, and through the functions of the same module it is passed to (depth <= 3).
    Precision first: a dereference under a test of the name (`X is not None`, `if X:`,
    `isinstance(X, ...)`) does not count, and the search stops at anything it cannot follow
    (a rebinding, a try, a None test that exits or rebinds)."""

    def __init__(self, symbols: Symbols):
        self.symbols = symbols
        self._memo: dict[tuple[int, str], Optional[NoneUse]] = {}
        self._locals: dict[int, set[str]] = {}  # id(function node) -> _local_names (nodes live as long as self)

    def after(self, s: ast.stmt, fi: FunctionInfo, name: str) -> Optional[NoneUse]:
        parents = _parents(fi.node)
        node = s
        while node is not fi.node:
            owner, seq = parents.get(id(node), (None, None))
            if owner is None or isinstance(owner, ast.Try) or type(owner).__name__ == "TryStar":
                return None
            rest = seq[seq.index(node) + 1:]
            use, state = self.block(rest, name, fi, 0)
            if use is not None:
                return use
            if state is not _NORMAL:
                return None
            node = owner
        return None

    # --- statements ----------------------------------------------------------------------------
    def block(self, body, name, fi, depth):
        for s in body:
            use, state = self.stmt(s, name, fi, depth)
            if use is not None or state is not _NORMAL:
                return use, state
        return None, _NORMAL

    def stmt(self, s, name, fi, depth):  # noqa: C901 - dispatch over statement types
        ex = functools.partial(self.expr, name=name, fi=fi, depth=depth)
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return None, (_LOST if s.name == name else _NORMAL)
        if isinstance(s, ast.If):
            use = ex(s.test)
            if use is not None:
                return use, _NORMAL
            if _tests_none(s.test, name):
                # guarded: not followed; after it, the value is known only if no branch changes it
                changes = _binds(s.body + s.orelse, name) or _exits(s.body + s.orelse)
                return None, (_LOST if changes else _NORMAL)
            u1, st1 = self.block(s.body, name, fi, depth)
            if u1 is not None:
                return u1, st1
            u2, st2 = self.block(s.orelse, name, fi, depth)
            if u2 is not None:
                return u2, st2
            if _LOST in (st1, st2):
                return None, _LOST
            return None, (_EXIT if st1 is _EXIT and st2 is _EXIT else _NORMAL)
        if isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
            head = s.test if isinstance(s, ast.While) else s.iter
            use = ex(head)
            if use is not None:
                return use, _NORMAL
            if isinstance(s, ast.While) and _tests_none(s.test, name):
                return None, _LOST
            if not isinstance(s, ast.While) and _binds_target(s.target, name):
                return None, _LOST
            use, st = self.block(s.body, name, fi, depth)
            if use is not None:
                return use, st
            if st is _LOST or _binds(s.body + s.orelse, name):
                return None, _LOST
            return None, _NORMAL  # the body may not run; break/continue end only the loop
        if isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                use = ex(item.context_expr)
                if use is not None:
                    return use, _NORMAL
                if item.optional_vars is not None and _binds_target(item.optional_vars, name):
                    return None, _LOST
            return self.block(s.body, name, fi, depth)
        if isinstance(s, (ast.Return, ast.Raise)):
            for e in ast.iter_child_nodes(s):
                use = ex(e)
                if use is not None:
                    return use, _NORMAL
            return None, _EXIT
        if isinstance(s, (ast.Break, ast.Continue)):
            return None, _EXIT
        if isinstance(s, (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Assert, ast.Delete)):
            if isinstance(s, ast.Assert) and _tests_none(s.test, name):
                return None, _LOST
            values = [s.value] if isinstance(s, (ast.Expr, ast.AugAssign)) else []
            if isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None:
                values = [s.value]
            if isinstance(s, ast.Assert):
                values = [s.test]
            targets = (s.targets if isinstance(s, (ast.Assign, ast.Delete)) else
                       [s.target] if isinstance(s, (ast.AnnAssign, ast.AugAssign)) else [])
            for e in values + [t for t in targets if not isinstance(t, ast.Name)]:
                use = ex(e)
                if use is not None:
                    return use, _NORMAL
            if _binds([s], name) or any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return None, _LOST
            return None, _NORMAL
        if isinstance(s, ast.Pass):
            return None, _NORMAL
        return None, _LOST  # try, match, global, import, ...: not followed

    # --- expressions ---------------------------------------------------------------------------
    def expr(self, e, name, fi, depth) -> Optional[NoneUse]:  # noqa: C901
        if e is None or isinstance(e, (ast.Lambda, ast.Constant)):
            return None
        rec = functools.partial(self.expr, name=name, fi=fi, depth=depth)
        if isinstance(e, ast.IfExp):
            use = rec(e.test)
            if use is not None or _tests_none(e.test, name):
                return use
            return rec(e.body) or rec(e.orelse)
        if isinstance(e, ast.BoolOp):
            for v in e.values:
                use = rec(v)
                if use is not None or _tests_none(v, name):
                    return use
            return None
        if isinstance(e, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            if any(_binds_target(g.target, name) for g in e.generators):
                return None
        if isinstance(e, ast.Subscript) and _is(e.value, name):
            return NoneUse(e, "subscripts it (None is not subscriptable)")
        if isinstance(e, ast.Attribute) and _is(e.value, name):
            return NoneUse(e, f"reads `.{e.attr}` of it (None has no attribute `{e.attr}`)")
        if isinstance(e, ast.Call):
            if _is(e.func, name):
                return NoneUse(e, "calls it (None is not callable)")
            for child in [e.func, *e.args, *(k.value for k in e.keywords)]:
                use = rec(child)
                if use is not None:
                    return use
            if depth < MAX_CALL_DEPTH:
                return self.passed(e, name, fi, depth)
            return None
        for child in ast.iter_child_nodes(e):
            if isinstance(child, ast.expr):
                use = rec(child)
                if use is not None:
                    return use
            elif isinstance(child, ast.comprehension):
                for x in (child.iter, *child.ifs):
                    use = rec(x)
                    if use is not None:
                        return use
        return None

    def passed(self, call: ast.Call, name, fi, depth) -> Optional[NoneUse]:
        """`f(..., X, ...)` with f a function of this module or a method of this class (self.m):
        a dereference of the matching parameter in f."""
        target, bound = self.resolve(call.func, fi)
        if target is None:
            return None
        args = target.node.args
        positional = [a.arg for a in [*args.posonlyargs, *args.args]]
        if bound:
            positional = positional[1:]
        params = []
        for i, a in enumerate(call.args):
            if isinstance(a, ast.Starred):
                break
            if _is(a, name) and i < len(positional):
                params.append(positional[i])
        named = set(positional) | {a.arg for a in args.kwonlyargs}
        for k in call.keywords:
            if k.arg is not None and _is(k.value, name) and k.arg in named:
                params.append(k.arg)
        for p in params:
            key = (id(target.node), p)
            if key not in self._memo:
                self._memo[key] = None  # recursion guard
                use, _ = self.block(target.node.body, p, target, depth + 1)
                self._memo[key] = use
            use = self._memo[key]
            if use is not None:
                return NoneUse(use.node, use.how, [(target.qualname, call.lineno), *use.via])
        return None

    def resolve(self, func: ast.expr, fi: FunctionInfo) -> tuple[Optional[FunctionInfo], bool]:
        """(the function a call reaches, whether its first parameter is bound)."""
        if isinstance(func, ast.Name):
            names = self._locals.get(id(fi.node))
            if names is None:  # once per function, not per call that passes the name on
                names = self._locals[id(fi.node)] = _local_names(fi.node)
            if func.id in names:
                return None, False
            target = self.symbols.functions.get(func.id)
            return target, False
        if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"
                and fi.cls is not None):
            target = fi.cls.methods.get(func.attr)
            if target is None:
                return None, False
            decos = {self.symbols.qualify(d.func if isinstance(d, ast.Call) else d) or ""
                     for d in target.node.decorator_list}
            if decos - {"staticmethod", "classmethod"}:
                return None, False  # a property, a cache, a wrapper: not followed
            return target, "staticmethod" not in decos
        return None, False


def _is(e: ast.expr, name: str) -> bool:
    return isinstance(e, ast.Name) and e.id == name


def _tests_none(test: ast.expr, name: str) -> bool:
    """Whether a condition looks at the name other than by dereferencing it (`X is None`,
    `X is not None`, `if X:`, `isinstance(X, T)`): what it guards is not followed."""
    deref = set()
    for n in fast_walk(test):
        if isinstance(n, (ast.Subscript, ast.Attribute)) and _is(n.value, name):
            deref.add(id(n.value))
        elif isinstance(n, ast.Call) and _is(n.func, name):
            deref.add(id(n.func))
    return any(_is(n, name) and id(n) not in deref for n in fast_walk(test))


def _binds_target(t: ast.expr, name: str) -> bool:
    return any(_is(n, name) for n in fast_walk(t))


def _binds(body: list[ast.stmt], name: str) -> bool:
    """Whether the statements (re)bind or delete the name, anywhere in them."""
    for s in body:
        for n in fast_walk(s):
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, (ast.Store, ast.Del)):
                return True
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name:
                return True
            if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
                return True
            if isinstance(n, (ast.Import, ast.ImportFrom)) and any(
                    (a.asname or a.name.split(".")[0]) == name for a in n.names):
                return True
    return False


def _exits(body: list[ast.stmt]) -> bool:
    return any(isinstance(n, (ast.Return, ast.Raise, ast.Break, ast.Continue))
               for s in body for n in fast_walk(s))


def _parents(fn: ast.AST) -> dict[int, tuple[ast.AST, list]]:
    """id(statement) -> (the node whose body holds it, that body)."""
    out = {}
    for n in fast_walk(fn):
        for fld in ("body", "orelse", "finalbody", "handlers"):
            seq = getattr(n, fld, None)
            if isinstance(seq, list):
                for c in seq:
                    if isinstance(c, (ast.stmt, ast.excepthandler)):
                        out[id(c)] = (n, seq)
        if isinstance(n, ast.Match):
            for c in n.cases:
                for b in c.body:
                    out[id(b)] = (n, c.body)
    return out


def _local_names(fn: ast.AST) -> set[str]:
    args = fn.args
    out = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if a}
    for n in fast_walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
    return out
