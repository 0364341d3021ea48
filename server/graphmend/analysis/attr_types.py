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

from graphmend.analysis.symbols import ClassInfo, Symbols, _statements, lineage

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
    annotated).
    Computed once per ClassInfo (an edit of a method makes a new one, and
    analysis/incremental.py walks the class' methods again when this changes); reading it
    counts as reading the class' attributes (`symbols.tracking`)."""
    ci.attr_ctors  # noqa: B018 - records the read of "class:<name>"
    if ci._param_stores is not None:
        return ci._param_stores
    out: dict[str, Optional[ast.expr]] = {}
    for fi in ci.methods.values():
        node = fi._node
        params = {a.arg: a.annotation for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]}
        for st in _statements(node.body):
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
                if t.attr in out and (out[t.attr] is None or ann is None or ast.dump(out[t.attr]) != ast.dump(ann)):
                    ann = None
                out[t.attr] = ann
    ci._param_stores = out
    return out


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
