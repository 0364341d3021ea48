"""Named tuples whose fields hold tensors.

torchdiffeq keeps a Runge-Kutta tableau in a `collections.namedtuple` and passes it to its step
function, documented `tableau: _ButcherTableau`:

    _ButcherTableau = collections.namedtuple('_ButcherTableau', 'alpha, beta, c_sol, c_error')
    self.tableau = _ButcherTableau(alpha=self.tableau.alpha.to(device=device, dtype=dtype),
                                   beta=[b.to(device=device, dtype=dtype) for b in ...], ...)
    for i, (alpha_i, beta_i) in enumerate(zip(tableau.alpha, tableau.beta)):
        if alpha_i == 1.:                # a tensor's truth: Dynamo breaks

A field is a tensor when the class says so (`class S(NamedTuple): t: Tensor`) or when every
construction of the tuple in its module gives it a tensor by its form alone (a torch function's
result, `x.to(...)`, `x.float()`, ...), and a sequence of tensors when every one gives a list
or comprehension of such. Only tuples defined at the top of the module being walked are known.
"""

from __future__ import annotations

import ast
from typing import Optional

from graphmend.analysis.symbols import Symbols

NAMEDTUPLE_FACTORIES = frozenset({"collections.namedtuple", "typing.NamedTuple", "typing_extensions.NamedTuple"})
# Tensor methods whose result is a tensor, of those whose presence marks a tensor
# (dataflow.TENSOR_EVIDENCE): not `size`, `dim`, `item`, ... nor the splits, which give tuples
_NOT_A_TENSOR = frozenset({"size", "dim", "numel", "item", "tolist", "split", "chunk", "unbind"})

TENSOR, SEQUENCE = "tensor", "sequence"


def record_types(sym: Symbols) -> dict[str, tuple[str, ...]]:
    """The named tuples defined at the top of the module: name -> its fields. Computed once per
    Symbols (an edit of module-level code is analysed in full, analysis/incremental.py)."""
    cached = sym.__dict__.get("_record_types")
    if cached is not None:
        return cached
    out: dict[str, tuple[str, ...]] = {}
    for st in sym._tree.body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) \
                and isinstance(st.value, ast.Call) and (sym.qualify(st.value.func) or "") in NAMEDTUPLE_FACTORIES:
            fields = _functional_fields(st.value)
            if fields:
                out[st.targets[0].id] = fields
        elif isinstance(st, ast.ClassDef) and any((sym.qualify(b) or "") in NAMEDTUPLE_FACTORIES for b in st.bases):
            fields = tuple(s.target.id for s in st.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name))
            if fields:
                out[st.name] = fields
    sym.__dict__["_record_types"] = out
    return out


def _functional_fields(call: ast.Call) -> tuple[str, ...]:
    """`namedtuple("T", "a, b")`, `namedtuple("T", ["a", "b"])`, `NamedTuple("T", [("a", int)])`."""
    if len(call.args) < 2:
        return ()
    spec = call.args[1]
    if isinstance(spec, ast.Constant) and isinstance(spec.value, str):
        return tuple(spec.value.replace(",", " ").split())
    if isinstance(spec, (ast.List, ast.Tuple)):
        out = []
        for e in spec.elts:
            if isinstance(e, ast.Constant) and isinstance(e.value, str):
                out.append(e.value)
            elif isinstance(e, ast.Tuple) and e.elts and isinstance(e.elts[0], ast.Constant) \
                    and isinstance(e.elts[0].value, str):
                out.append(e.elts[0].value)
            else:
                return ()
        return tuple(out)
    return ()


def field_kinds(sym: Symbols, name: str) -> dict[str, str]:
    """The fields of the named tuple `name` (of this module) that hold tensors: field ->
    TENSOR or SEQUENCE (a list of tensors). Reading it reads the whole module (its
    constructions may be anywhere): `symbols.tracking` records that."""
    fields = record_types(sym).get(name)
    if not fields:
        return {}
    tree = sym.tree  # noqa: F841 - records the read of the whole module
    cache = sym.__dict__.setdefault("_field_kinds", {})
    if name in cache:
        return cache[name]
    from graphmend.analysis.dataflow import Kind, annotation_kind, container_of_tensors

    out: dict[str, str] = {}
    cls = next((st for st in sym._tree.body if isinstance(st, ast.ClassDef) and st.name == name), None)
    if cls is not None:  # `class S(NamedTuple): t: Tensor`: the annotations say it
        for s in cls.body:
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
                if container_of_tensors(s.annotation) == "sequence":
                    out[s.target.id] = SEQUENCE
                elif annotation_kind(s.annotation, s.target.id) is Kind.TENSOR:
                    out[s.target.id] = TENSOR
        cache[name] = out
        return out
    given: dict[str, list[Optional[str]]] = {}
    for c in [*sym.module_calls, *(c for fi in sym.all_functions for c in fi._calls)]:
        if not (isinstance(c.func, ast.Name) and c.func.id == name):
            continue
        if any(isinstance(a, ast.Starred) for a in c.args) or any(k.arg is None for k in c.keywords):
            return _keep(cache, name, {})  # `T(*xs)`, `T(**d)`: what goes where is unknown
        for field_name, value in [*zip(fields, c.args), *((k.arg, k.value) for k in c.keywords)]:
            given.setdefault(field_name, []).append(_form(value, sym))
    for field_name, forms in given.items():
        if forms and all(f == TENSOR for f in forms):
            out[field_name] = TENSOR
        elif forms and all(f == SEQUENCE for f in forms):
            out[field_name] = SEQUENCE
    return _keep(cache, name, out)


def _keep(cache: dict, name: str, value: dict[str, str]) -> dict[str, str]:
    cache[name] = value
    return value


def _form(e: ast.expr, sym: Symbols) -> Optional[str]:
    """TENSOR when `e` is a tensor by its form alone, SEQUENCE for a list, tuple or list
    comprehension of such; else None."""
    if isinstance(e, ast.Call):
        q = sym.qualify(e.func) or ""
        from graphmend.analysis.dataflow import TENSOR_EVIDENCE, TORCH_STATIC_FUNCS, _torch_func

        tf = _torch_func(q)
        if tf is not None and tf not in TORCH_STATIC_FUNCS and q.startswith("torch."):
            return TENSOR
        if isinstance(e.func, ast.Attribute) and e.func.attr in TENSOR_EVIDENCE \
                and e.func.attr not in _NOT_A_TENSOR and not q.startswith(("torch.", "math.", "np.", "numpy.")):
            return TENSOR
        return None
    if isinstance(e, ast.ListComp):
        return SEQUENCE if _form(e.elt, sym) == TENSOR else None
    if isinstance(e, (ast.List, ast.Tuple)) and e.elts:
        return SEQUENCE if all(_form(x, sym) == TENSOR for x in e.elts) else None
    return None


def documented_records(fn: ast.AST, sym: Symbols) -> dict[str, str]:
    """Parameters annotated or documented as one of the module's named tuples
    (`tableau: _ButcherTableau`, `tableau (_ButcherTableau): ...` in the docstring): name -> the
    tuple's name."""
    types = record_types(sym)
    if not types:
        return {}
    out: dict[str, str] = {}
    args = fn.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    for a in params:
        ann = a.annotation
        text = ann.id if isinstance(ann, ast.Name) else (ann.value if isinstance(ann, ast.Constant) else None)
        if isinstance(text, str) and text in types:
            out[a.arg] = text
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        names = {a.arg for a in params}
        for line in body[0].value.value.splitlines():
            head, sep, rest = line.strip().partition(":")
            if not sep:
                continue
            param, _, typ = head.partition("(")
            param = param.strip().strip("*")
            typ = typ.rstrip(")").strip().strip("`") if typ else rest.strip().split(" ", 1)[0].strip("`")
            if param in names and param not in out and typ in types:
                out[param] = typ
    return out
