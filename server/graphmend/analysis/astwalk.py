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

# leaves without children that no caller of these helpers looks for
LEAF_TYPES = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)
_SCALAR = frozenset({"identifier", "string", "constant", "int"})
_LEAF_NAMES = frozenset({"expr_context", "boolop", "operator", "unaryop", "cmpop"})
_SIG = re.compile(r"^\w+\((.*)\)$")

# node class -> ((field, is_list), ...): the fields that can hold child nodes
_FIELDS: dict[type, tuple[tuple[str, bool], ...]] = {}
_GENERIC = object()


def _fields_of(cls: type):
    sig = _SIG.match((cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else "")
    fields = tuple(cls._fields)
    out: list[tuple[str, bool]] = []
    if sig is not None and sig.group(1).strip():
        decl = [d.strip().split() for d in sig.group(1).split(",")]
        if len(decl) == len(fields) and all(len(d) == 2 and d[1] == f for d, f in zip(decl, fields)):
            for (typ, name) in decl:
                base = typ.rstrip("*?")
                if base in _SCALAR or base in _LEAF_NAMES:
                    continue
                out.append((name, typ.endswith("*")))
            _FIELDS[cls] = tuple(out)
            return _FIELDS[cls]
    if not fields:
        _FIELDS[cls] = ()
        return ()
    _FIELDS[cls] = _GENERIC  # a class without a usable signature: look at each value
    return _GENERIC


def children(node: ast.AST) -> list[ast.AST]:
    """`list(ast.iter_child_nodes(node))` without the contexts and operators (LEAF_TYPES)."""
    fields = _FIELDS.get(type(node))
    if fields is None:
        fields = _fields_of(type(node))
    out: list[ast.AST] = []
    if fields is _GENERIC:
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, LEAF_TYPES):
                out.append(child)
        return out
    for name, is_list in fields:
        v = getattr(node, name, None)
        if v is None:
            continue
        if is_list:
            for x in v:
                if x is not None and not isinstance(x, LEAF_TYPES):
                    out.append(x)
        elif isinstance(v, ast.AST) and not isinstance(v, LEAF_TYPES):
            out.append(v)
    return out


def walk(node: ast.AST) -> list[ast.AST]:
    """The nodes of `ast.walk(node)`, in its (breadth-first) order, without the contexts and
    operators (LEAF_TYPES) below `node`. A list, not a generator."""
    out = [node]
    i = 0
    get = _FIELDS.get
    while i < len(out):
        n = out[i]
        i += 1
        fields = get(type(n))
        if fields is None:
            fields = _fields_of(type(n))
        if fields is _GENERIC:
            out.extend(children(n))
            continue
        for name, is_list in fields:
            v = getattr(n, name, None)
            if v is None:
                continue
            if is_list:
                for x in v:
                    if x is not None and not isinstance(x, LEAF_TYPES):
                        out.append(x)
            elif not isinstance(v, LEAF_TYPES):
                out.append(v)
    return out


def preorder(node: ast.AST, skip: type | tuple = ()) -> list[ast.AST]:
    """The nodes below and including `node`, depth-first, parents before children, children in
    field order (what a stack of reversed `iter_child_nodes` gives), without LEAF_TYPES; a node
    of a `skip` type is left out with everything below it."""
    out: list[ast.AST] = []
    stack = [node]
    get = _FIELDS.get
    while stack:
        n = stack.pop()
        if skip and isinstance(n, skip):
            continue
        out.append(n)
        fields = get(type(n))
        if fields is None:
            fields = _fields_of(type(n))
        if not fields:
            continue
        if fields is _GENERIC:
            kids = children(n)
        else:
            kids = []
            for name, is_list in fields:
                v = getattr(n, name, None)
                if v is None:
                    continue
                if is_list:
                    for x in v:
                        if x is not None and not isinstance(x, LEAF_TYPES):
                            kids.append(x)
                elif not isinstance(v, LEAF_TYPES):
                    kids.append(v)
        if kids:
            kids.reverse()
            stack.extend(kids)
    return out
