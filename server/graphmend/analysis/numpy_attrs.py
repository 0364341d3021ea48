"""Attributes a class holds numpy arrays in: `space.nvec` after `isinstance(space, MultiDiscrete)`.

stable-baselines3's preprocess_obs reads gymnasium's MultiDiscrete counts into Python:

    elif isinstance(observation_space, spaces.MultiDiscrete):
        ... F.one_hot(obs_.long(), num_classes=int(observation_space.nvec[idx])) ...

and gymnasium's class declares and builds that attribute as an array:

    class MultiDiscrete(Space[NDArray[_IntegerT_co]], Generic[_IntegerT_co]):
        nvec: NDArray[_IntegerT_co]
        def __init__(self, nvec, dtype=np.int64, ...):
            self.nvec = np.array(nvec, dtype=dtype, copy=True)

Dynamo traces a numpy array held by an input as a tensor (torch._numpy), so `int()` of an item
is a data-dependent operator (GB0033, measured on torch 2.13). The attribute counts as an array
only when the class and every base (read from their files; `Generic`, `object` and `ABC` aside)
store it only as `self.<attr> = <numpy builder>(...)` (detect.NUMPY_ARRAY_FUNCS), at least once,
define no method, property or class value of that name, and annotate it, if at all, as an
array (`NDArray`, `ndarray`).
"""

from __future__ import annotations

import ast
from typing import Optional

from graphmend.analysis.workspace import class_of

_NEUTRAL_BASES = frozenset({"object", "builtins.object", "typing.Generic", "typing.Protocol", "abc.ABC",
                            "typing_extensions.Protocol"})
_ARRAY_ANNOTATIONS = ("ndarray", "NDArray")
_MAX_CLASSES = 8


def class_attr_is_array(ws, dotted: str, attr: str, builders: frozenset) -> bool:
    """Whether instances of the class `dotted` hold a numpy array in `attr` (module docstring)."""
    if ws is None:
        return False
    key = (dotted, attr)
    if key not in ws.array_attrs:
        ws.array_attrs[key] = _judge(ws, dotted, attr, builders)
    return ws.array_attrs[key]


def _judge(ws, dotted: str, attr: str, builders: frozenset) -> bool:
    got = ws.resolve_class(dotted)
    if got is None:
        return False
    todo, seen, stores = [got], set(), 0
    while todo:
        sym, ci = todo.pop(0)
        if id(ci) in seen:
            continue
        seen.add(id(ci))
        if len(seen) > _MAX_CLASSES:
            return False
        verdict = _class_stores(sym, ci, attr, builders)
        if verdict is None:
            return False
        stores += verdict
        for b in ci.node.bases:
            while isinstance(b, ast.Subscript):  # `Space[NDArray[...]]`, `Generic[T]`
                b = b.value
            q = sym.qualify(b) or ""
            if q in _NEUTRAL_BASES:
                continue
            base = class_of(q, sym, ws) if q else None
            if base is None:
                return False  # a base not read: it may define the name otherwise
            todo.append(base)
        if ci.node.keywords:
            return False  # a metaclass may add attributes
    return stores > 0


def _class_stores(sym, ci, attr: str, builders: frozenset) -> Optional[int]:
    """How many `self.<attr> = <numpy builder>(...)` the class' methods hold; None when the
    class binds the name any other way."""
    count = 0
    for s in ci.node.body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and s.name == attr:
            return None
        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.target.id == attr:
            if s.value is not None:
                return None
            text = ast.unparse(s.annotation).replace("'", "").replace('"', "")
            if text.split("[")[0].rsplit(".", 1)[-1] not in _ARRAY_ANNOTATIONS or "|" in text \
                    or "Optional" in text or "Union" in text:
                return None
        elif isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr for t in s.targets):
            return None
    for s in ci.node.body:
        if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for n in ast.walk(s):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target] \
                if isinstance(n, (ast.AnnAssign, ast.AugAssign)) else []
            for t in targets:
                if any(isinstance(x, ast.Attribute) and x.attr == attr for x in ast.walk(t)) and not (
                        isinstance(t, ast.Attribute) and t.attr == attr):
                    return None  # `self.a, self.nvec = ...`, a store inside a target
                if isinstance(t, ast.Attribute) and t.attr == attr:
                    if not (isinstance(n, ast.Assign) and isinstance(t.value, ast.Name) and t.value.id == "self"
                            and isinstance(n.value, ast.Call) and (sym.qualify(n.value.func) or "") in builders):
                        return None
                    count += 1
            if isinstance(n, ast.Call) and getattr(n.func, "id", None) in ("setattr", "delattr"):
                return None
    return count
