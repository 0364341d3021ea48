"""The class an attribute of `self` holds, from the constructor that stores it.

torchsde's solvers keep the Brownian motion they are given and call it:

    class BaseSDESolver:                                    # base_solver.py
        def __init__(self, sde, bm: BaseBrownian, ...):
            self.bm = bm
    class Euler(BaseSDESolver):                             # methods/euler.py
        def step(self, t0, t1, y0, extra0):
            I_k = self.bm(t0, t1)                           # BaseBrownian.__call__, or an override

`self.bm` holds a BaseBrownian: the parameter stored is annotated with the class (in this class
or a base, in this file or another). The call runs `__call__` of that class or of a subclass
(Workspace.subclasses); analysis/callers.py walks them with the tensors passed.
"""

from __future__ import annotations

import ast
from typing import Optional

from graphmend.analysis.symbols import ClassInfo, Symbols, lineage, param_defaults

MAX_BASES = 8


def attribute_class(sym: Symbols, ci: ClassInfo, attr: str) -> Optional[str]:
    """The dotted name of the class `self.<attr>` holds, when a method of `ci` or of a base
    stores a parameter annotated with a class there (`self.bm = bm`, `bm: BaseBrownian`), and
    every store of it in that class does; else None."""
    for s, c in lineage(sym, ci, MAX_BASES):
        stores = param_stores(c)
        if attr in stores:
            ann = stores[attr]
            return _annotated_class(s, ann, sym.workspace) if ann is not None else None
    return None


def param_stores(ci: ClassInfo) -> dict[str, Optional[ast.expr]]:
    """The attributes the methods of `ci` store in `self` (assigned, or unpacked into), each with
    the annotation of the parameter every store of it stores (None: stored otherwise too, or not
    annotated), narrowed as a type checker narrows it: where the store is under `if p is not
    None:` (or after `if p is None: p = ...` / `raise`), `Optional[T]` and `T | None` are `T`
    (torch-pme's `update(self, ns_mesh: torch.Tensor | None = None)` keeps `self.ns_mesh =
    ns_mesh` under such a test: realcode round 29); an unguarded store of a parameter whose
    default is None admits None (`T | None`). Only tensor annotations are narrowed: a class's
    (attribute_class) would send `self.covar_module_T(self.train_T, T)`, `covar_module_T:
    Module | None`, to every subclass's `__call__` of gpytorch's Module, one of which takes
    `are_samples` second (a false alarm in botorch, measured).
    Computed once per ClassInfo (an edit of a method makes a new one, and
    analysis/incremental.py walks the class' methods again when this changes); reading it
    counts as reading the class' attributes (`symbols.tracking`)."""
    ci.attr_ctors  # noqa: B018 - records the read of "class:<name>"
    if ci._param_stores is not None:
        return ci._param_stores
    out: dict[str, Optional[ast.expr]] = {}
    for fi in ci.methods.values():
        node = fi._node
        args = node.args
        params = {a.arg: a.annotation for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
        none_default = {n for n, d in param_defaults(args).items() if isinstance(d, ast.Constant) and d.value is None}
        for st, proven in _statements_proven(node.body, frozenset()):
            if not isinstance(st, (ast.Assign, ast.AnnAssign)):
                continue
            for t in (st.targets if isinstance(st, ast.Assign) else [st.target]):
                if isinstance(t, (ast.Tuple, ast.List)):  # unpacked into: stored, not from one parameter
                    for e in ast.walk(t):
                        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
                            out[e.attr] = None
                    continue
                if not (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"):
                    continue
                v = st.value
                ann = params.get(v.id) if isinstance(v, ast.Name) else None
                if ann is not None and _tensor_annotation(ann):
                    if v.id in proven:
                        ann = without_none(ann)
                    elif v.id in none_default and not _admits_none(ann):
                        ann = ast.BinOp(ann, ast.BitOr(), ast.Constant(None))
                if t.attr in out and (out[t.attr] is None or ann is None or ast.dump(out[t.attr]) != ast.dump(ann)):
                    ann = None
                out[t.attr] = ann
    ci._param_stores = out
    return out


def _tensor_annotation(ann: ast.expr) -> bool:
    from graphmend.analysis.dataflow import Kind, annotation_kind  # dataflow imports this module

    return annotation_kind(ann) is Kind.TENSOR


def _statements_proven(body: list[ast.stmt], proven: frozenset):
    """The statements of a method body as `_statements` gives them, each with the names proven
    not None there by the `if` tests around it (`if p is not None:`, the `else` of `if p is
    None:`, `and` of such tests) or by an earlier `if p is None:` whose block binds `p` or
    leaves (`raise`, `return`)."""
    for st in body:
        yield st, proven
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(st, ast.If):
            yes, no = _none_tests(st.test)
            yield from _statements_proven(st.body, proven | yes)
            yield from _statements_proven(st.orelse, proven | no)
            if len(no) == 1 and (name := next(iter(no))) not in proven and _binds_or_leaves(st.body, name):
                proven = proven | no
            continue
        for field_name in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(st, field_name, None)
            if block:
                yield from _statements_proven(block, proven)


def _none_tests(test: ast.expr) -> tuple[frozenset, frozenset]:
    """(names not None where `test` is true, names not None where it is false): `p is not None`,
    `p is not None and ...` and `p is None`."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return frozenset().union(*(_none_tests(v)[0] for v in test.values)), frozenset()
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        if isinstance(test.ops[0], ast.IsNot):
            return frozenset({test.left.id}), frozenset()
        if isinstance(test.ops[0], ast.Is):
            return frozenset(), frozenset({test.left.id})
    return frozenset(), frozenset()


def _binds_or_leaves(body: list[ast.stmt], name: str) -> bool:
    """The block of `if name is None:` leaves (its last statement raises or returns) or binds
    `name` to something else than None at its top level."""
    if body and isinstance(body[-1], (ast.Raise, ast.Return)):
        return True
    return any(isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in st.targets)
               and not (isinstance(st.value, ast.Constant) and st.value.value is None) for st in body)


def _is_none(e: ast.expr) -> bool:
    return isinstance(e, ast.Constant) and e.value is None


def _head(ann: ast.expr) -> str:
    """`Optional` of `Optional[T]` / `typing.Optional[T]`, `Union` of a Union: a subscripted
    annotation's name, else ""."""
    if isinstance(ann, ast.Subscript):
        v = ann.value
        return v.id if isinstance(v, ast.Name) else v.attr if isinstance(v, ast.Attribute) else ""
    return ""


def _admits_none(ann: ast.expr) -> bool:
    """The annotation admits None: `Optional[T]`, `Union[T, None]`, `T | None`, `None`, or
    such a text in a string annotation."""
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        text = ann.value.replace(" ", "")
        return "Optional[" in text or "None" in text
    if _is_none(ann) or _head(ann) == "Optional":
        return True
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return _admits_none(ann.left) or _admits_none(ann.right)
    if _head(ann) == "Union":
        return any(_admits_none(x) for x in (ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]))
    return False


def one_type(ann: ast.expr) -> bool:
    """The annotation, in a string or not, names one type: no Union, Optional or `X | Y` in it
    (kornia's `Union[torch.Tensor, Tuple[float, float]]`, `T | None`)."""
    text = ann.value if isinstance(ann, ast.Constant) and isinstance(ann.value, str) else ast.unparse(ann)
    return not ("Union" in text or "Optional" in text or "|" in text)


def without_none(ann: ast.expr) -> ast.expr:
    """The annotation with None taken out of it: `Optional[T]`, `Union[T, None]` and `T | None`
    are `T`; anything else as it is (a Union of several types stays a Union)."""
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        if _is_none(ann.right):
            return without_none(ann.left)
        if _is_none(ann.left):
            return without_none(ann.right)
        return ann
    if _head(ann) == "Optional":
        return ann.slice
    if _head(ann) == "Union" and isinstance(ann.slice, ast.Tuple):
        rest = [x for x in ann.slice.elts if not _is_none(x)]
        if len(rest) == 1:
            return rest[0]
    return ann


def same_stores(a: dict, b: dict) -> bool:
    """Two `param_stores` answers are the same (annotations compared by their text)."""
    return a.keys() == b.keys() and all(
        (a[k] is None) == (b[k] is None) and (a[k] is None or ast.dump(a[k]) == ast.dump(b[k])) for k in a)


def _annotated_class(sym: Symbols, ann: ast.expr, ws) -> Optional[str]:
    """`BaseBrownian`, `brownian_base.BaseBrownian`, `"BaseBrownian"`: the class's dotted name,
    when the workspace finds a class there."""
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return None
    if not isinstance(ann, (ast.Name, ast.Attribute)):
        return None
    dotted = sym.qualify(ann)
    if not dotted:
        return None
    if "." not in dotted:
        return f"{sym.module}.{dotted}" if dotted in sym.classes else None
    if dotted.startswith(("torch.", "builtins.", "typing.")):
        return None
    local = dotted.rsplit(".", 1)[-1]
    if dotted == f"{sym.module}.{local}" and local in sym.classes:
        return dotted
    found = ws.resolve_class(dotted) if ws is not None else None
    return f"{found[0].module}.{found[1].name}" if found is not None else None
