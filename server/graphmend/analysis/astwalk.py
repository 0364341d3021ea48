"""Fast traversals of an ast, for the hot loops of the analysis.

`ast.iter_child_nodes` and `ast.walk` look at every field of every node through generators
and `isinstance`; profiled over transformers' models, they were over a third of a check's time.
Here each node class's fields that can hold nodes are known from its ASDL signature (the
class' docstring, "Name(identifier id, expr_context ctx)"), and the leaves that carry no
information for the analysis are left out: the expression contexts (Load, Store, Del, shared
singletons) and the operator nodes (Add, And, Not, Eq, ...). Every other node comes out in the
same order as from `ast.iter_child_nodes` / `ast.walk`, so a caller that looks only at other
node types sees exactly what it saw before.
"""

from __future__ import annotations

import ast
import re
import warnings
from typing import Optional

# leaves without children that no caller of these helpers looks for
LEAF_TYPES = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)
_SCALAR = frozenset({"identifier", "string", "constant", "int"})
_LEAF_NAMES = frozenset({"expr_context", "boolop", "operator", "unaryop", "cmpop"})
_SIG = re.compile(r"^\w+\((.*)\)$")
# list fields whose items may be None: `def f(*, a, b=1)` (kw_defaults), `{**d}` (Dict.keys)
_HOLES = frozenset({("arguments", "kw_defaults"), ("Dict", "keys")})
_ONE, _MANY, _MANY_OR_NONE = 0, 1, 2

# node class -> ((field, _ONE | _MANY | _MANY_OR_NONE), ...): the fields that can hold child
# nodes other than LEAF_TYPES, in field order; _GENERIC: a class without a usable signature
_FIELDS: dict[type, object] = {}
_GENERIC = object()


def _fields_of(cls: type):
    doc = (cls.__doc__ or "").strip().splitlines()
    sig = _SIG.match(doc[0]) if doc else None
    fields = tuple(getattr(cls, "_fields", ()))
    out: list[tuple[str, int]] = []
    if not fields:
        _FIELDS[cls] = ()
        return ()
    if sig is not None:
        decl = [d.strip().split() for d in sig.group(1).split(",")]
        if len(decl) == len(fields) and all(len(d) == 2 and d[1] == f for d, f in zip(decl, fields)):
            for typ, name in decl:
                base = typ.rstrip("*?")
                if base in _SCALAR or base in _LEAF_NAMES:
                    continue
                if typ.endswith("*"):
                    out.append((name, _MANY_OR_NONE if (cls.__name__, name) in _HOLES else _MANY))
                else:
                    out.append((name, _ONE))
            _FIELDS[cls] = tuple(out)
            return _FIELDS[cls]
    _FIELDS[cls] = _GENERIC  # look at each value
    return _GENERIC


def _generic(node: ast.AST) -> list[ast.AST]:
    return [c for c in ast.iter_child_nodes(node) if not isinstance(c, LEAF_TYPES)]


def children(node: ast.AST) -> list[ast.AST]:
    """`list(ast.iter_child_nodes(node))` without the contexts and operators (LEAF_TYPES)."""
    fields = _FIELDS.get(type(node))
    if fields is None:
        fields = _fields_of(type(node))
    if fields is _GENERIC:
        return _generic(node)
    out: list[ast.AST] = []
    for name, kind in fields:
        v = getattr(node, name, None)
        if v is None:
            continue
        if kind == _ONE:
            out.append(v)
        elif kind == _MANY:
            out.extend(v)
        else:
            out.extend(x for x in v if x is not None)
    return out


def walk(node: ast.AST) -> list[ast.AST]:
    """The nodes of `ast.walk(node)`, in its (breadth-first) order, without the contexts and
    operators (LEAF_TYPES) below `node`. A list, not a generator."""
    out = [node]
    i = 0
    get = _FIELDS.get
    append, extend = out.append, out.extend
    while i < len(out):
        n = out[i]
        i += 1
        fields = get(type(n))
        if fields is None:
            fields = _fields_of(type(n))
        if fields is _GENERIC:
            extend(_generic(n))
            continue
        for name, kind in fields:
            v = getattr(n, name, None)
            if v is None:
                continue
            if kind == _ONE:
                append(v)
            elif kind == _MANY:
                extend(v)
            else:
                extend(x for x in v if x is not None)
    return out


def preorder(node: ast.AST, skip: type | tuple = (), skipped: Optional[list] = None) -> list[ast.AST]:
    """The nodes below and including `node`, depth-first, parents before children, children in
    field order (what a stack of reversed `iter_child_nodes` gives), without LEAF_TYPES; a node
    of a `skip` type is left out with everything below it (and appended to `skipped`)."""
    out: list[ast.AST] = []
    stack = [node]
    get = _FIELDS.get
    pop, push, append = stack.pop, stack.extend, out.append
    while stack:
        n = pop()
        if skip and isinstance(n, skip):
            if skipped is not None:
                skipped.append(n)
            continue
        append(n)
        fields = get(type(n))
        if fields is None:
            fields = _fields_of(type(n))
        if not fields:
            continue
        if fields is _GENERIC:
            kids = _generic(n)
        elif len(fields) == 1 and fields[0][1] == _ONE:  # Attribute, Expr, Starred, UnaryOp, ...
            v = getattr(n, fields[0][0], None)
            if v is not None:
                stack.append(v)
            continue
        else:
            kids = []
            for name, kind in fields:
                v = getattr(n, name, None)
                if v is None:
                    continue
                if kind == _ONE:
                    kids.append(v)
                elif kind == _MANY:
                    kids.extend(v)
                else:
                    kids.extend(x for x in v if x is not None)
        if kids:
            kids.reverse()
            push(kids)
    return out


def parse(text: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse`, without the compile-time warnings of the code read (an invalid escape sequence
    in a docstring: DeprecationWarning, SyntaxWarning from 3.12): checking or mending a file is not
    importing it, and its installed .pyc shows none (realcode round 10: POT's `\\delta` printed
    from every mended import)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(text, filename=filename)


def arg_names(a: ast.arguments) -> list[str]:
    """The names a function's or lambda's parameters bind, in order (`*args` and `**kw` too)."""
    return [x.arg for x in (*a.posonlyargs, *a.args, a.vararg, *a.kwonlyargs, a.kwarg) if x is not None]
