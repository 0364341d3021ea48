"""Python ints and tensor ranks, for indexing: the names a function binds only to ints, the
rank a call or a test fixes, the lambdas applied to the ints of a `range`."""

from __future__ import annotations

import ast
from typing import Optional

from graphmend.analysis.astwalk import walk as fast_walk
from graphmend.analysis.dataflow import int_keyed
from graphmend.analysis.symbols import _statements

_INT_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)


INPLACE_RESHAPES = frozenset({"squeeze_", "unsqueeze_", "resize_", "t_", "transpose_", "swapdims_", "swapaxes_",
                               "as_strided_", "set_"})


# calls that give a tuple (or list) of tensors: an element of what they give is a tensor, not a number
_TUPLE_RESULTS = frozenset({"sort", "topk", "unbind", "split", "chunk", "tensor_split", "meshgrid", "eig", "eigh",
                            "qr", "svd", "slogdet", "lu", "sort_by", "aminmax", "histogram", "frexp"})


def _dim_is_one(e: ast.expr) -> ast.Compare:
    """`e.dim() == 1`: the condition under which an element of `e` is a 0-dim tensor."""
    return ast.Compare(ast.Call(ast.Attribute(e, "dim", ast.Load()), [], []), [ast.Eq()], [ast.Constant(1)])


def element_is_scalar_or_mask(e: ast.expr) -> ast.BoolOp:
    """`e.dim() == 1 or e.dtype == torch.bool`: when an element (or a row) of `e`, a tensor whose rank
    and dtype the code does not fix, breaks as an index: a 0-dim element is read into Python
    (GB0033); a row of a boolean tensor is a mask, whose selection has a data-dependent shape
    (GB0036: vector-quantize's `samples[seq_mask[ind]]`, botorch's `sample[feas[i]]`, which broke
    with 2-d masks while the condition named only the rank)."""
    is_bool = ast.Compare(ast.Attribute(e, "dtype", ast.Load()), [ast.Eq()],
                          [ast.Attribute(ast.Name("torch", ast.Load()), "bool", ast.Load())])
    return ast.BoolOp(ast.Or(), [_dim_is_one(e), is_bool])


def _owner(e: ast.expr, methods: tuple, attrs: tuple) -> Optional[ast.expr]:
    """`x` of `x.m()` (m one of `methods`, no arguments) or of `x.a` (a one of `attrs`), else None."""
    if isinstance(e, ast.Call) and not e.args and not e.keywords and isinstance(e.func, ast.Attribute) \
            and e.func.attr in methods:
        return e.func.value
    return e.value if isinstance(e, ast.Attribute) and e.attr in attrs else None


def stated_ranks(fn: ast.AST) -> dict[str, int]:
    """Ranks the function states of its parameters and locals: `assert x.dim() == 2` (`x.ndim`,
    also a conjunct of the assert), `a, b = x.shape` (or `x.size()`); a name stated two ways is
    left out. pytorch-crf's `_compute_score`: `assert emissions.dim() == 3 and tags.dim() == 2`,
    then `self.start_transitions[tags[0]]` takes a row."""
    found: dict[str, set[int]] = {}

    def rank_test(t: ast.expr) -> None:
        if isinstance(t, ast.BoolOp) and isinstance(t.op, ast.And):
            for v in t.values:
                rank_test(v)
            return
        if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq)):
            return
        left, right = t.left, t.comparators[0]
        if isinstance(left, ast.Constant):
            left, right = right, left
        if not (isinstance(right, ast.Constant) and type(right.value) is int):
            return
        left = _owner(left, ("dim", "ndimension"), ("ndim",))
        if isinstance(left, ast.Name):
            found.setdefault(left.id, set()).add(right.value)

    for st in _statements(getattr(fn, "body", [])):
        if isinstance(st, ast.Assert):
            rank_test(st.test)
        elif isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Tuple) \
                and not any(isinstance(x, ast.Starred) for x in st.targets[0].elts):
            v = _owner(st.value, ("size",), ("shape",))
            if isinstance(v, ast.Name):
                found.setdefault(v.id, set()).add(len(st.targets[0].elts))
    if not found:
        return {}
    stores: dict[str, int] = {}
    for n in fast_walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            stores[n.id] = stores.get(n.id, 0) + 1
    # a name bound again may have another rank where it is used
    return {k: next(iter(v)) for k, v in found.items() if len(v) == 1 and stores.get(k, 0) <= 1}


def rank_of(c: ast.Call):
    """1 or 2 where a call fixes the rank of what it gives (`torch.randperm(n)`, `x.flatten()`,
    `x.view(-1)`; `x.nonzero()` is (count, ndim)), "tuple" for a tuple of tensors, else None."""
    f = c.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    kw = {k.arg: k.value for k in c.keywords}
    if name == "nonzero" or name == "argwhere":
        as_tuple = kw.get("as_tuple")
        return "tuple" if isinstance(as_tuple, ast.Constant) and as_tuple.value is True else \
            2 if as_tuple is None or isinstance(as_tuple, ast.Constant) else None
    if name == "where":
        n = len(c.args) + len(kw)
        return "tuple" if n == 1 else None
    if name in ("randperm", "arange", "linspace", "logspace", "bincount"):
        return 1
    if name in ("flatten", "ravel") and not c.args and not kw and isinstance(f, ast.Attribute):
        return 1
    if name in ("view", "reshape") and isinstance(f, ast.Attribute) and len(c.args) == 1 and not kw \
            and isinstance(c.args[0], ast.UnaryOp) and isinstance(c.args[0].op, ast.USub) \
            and isinstance(c.args[0].operand, ast.Constant) and c.args[0].operand.value == 1:
        return 1
    if name in _TUPLE_RESULTS:
        return "tuple"
    if name in ("max", "min", "median", "mode", "kthvalue", "nanmedian", "cummax", "cummin"):
        # with a dim: (values, indices); `x.max(1)`, not `torch.max(a, b)` (elementwise)
        method = isinstance(f, ast.Attribute) and not (isinstance(f.value, ast.Name) and f.value.id == "torch")
        return "tuple" if "dim" in kw or (method and c.args) else None
    return None


def int_expr(e: ast.expr, ints: frozenset[str]) -> bool:
    """`e` is a Python int: an int literal, a name of `ints`, `len(...)`, `int(...)`, and +, -, *, //,
    % of such."""
    if isinstance(e, ast.Constant):
        return type(e.value) is int
    if isinstance(e, ast.Name):
        return e.id in ints
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        return int_expr(e.operand, ints)
    if isinstance(e, ast.BinOp) and isinstance(e.op, _INT_OPS):
        return int_expr(e.left, ints) and int_expr(e.right, ints)
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("len", "int") \
        and len(e.args) == 1 and not e.keywords


def int_names(fn: ast.AST, int_keyed_result=None) -> frozenset[str]:
    """Names of `fn` every binding of which gives a Python int: `i = 0`, `i += 1`, `i = end` of
    another such name, a `for` target over `range(...)`, `enumerate`'s count, a parameter annotated
    `int`, the key a `for` takes from a dict keyed by ints (`for k, v in d.items()`, `d.keys()`,
    `d`: `d` a parameter annotated `dict[int, ...]`, or bound only to calls `int_keyed_result`
    says return one). Nested definitions' names are left out."""
    bindings: dict[str, list] = {}
    other: set[str] = set()
    keyed: set[str] = set()  # parameters annotated as dicts keyed by ints
    loops: list[tuple[str, str]] = []  # (a loop's key name, the dict it iterates)
    a = getattr(fn, "args", None)
    for p in ([*a.posonlyargs, *a.args, *a.kwonlyargs] if a is not None else ()):
        ann = p.annotation
        if isinstance(ann, ast.Name) and ann.id == "int":
            bindings.setdefault(p.arg, []).append(ast.Constant(0))
        else:
            other.add(p.arg)
            if int_keyed(ann):
                keyed.add(p.arg)
    for extra in (a.vararg, a.kwarg) if a is not None else ():
        if extra is not None:
            other.add(extra.arg)
    counted: set[int] = set()  # id() of the Store names a binding below accounts for
    for st in _statements(getattr(fn, "body", [])):
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            bindings.setdefault(st.targets[0].id, []).append(st.value)
            counted.add(id(st.targets[0]))
        elif isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Tuple) \
                and isinstance(st.value, ast.Tuple) and len(st.value.elts) == len(st.targets[0].elts):
            for t, v in zip(st.targets[0].elts, st.value.elts):  # `i, out = 0, []`
                if isinstance(t, ast.Name):
                    bindings.setdefault(t.id, []).append(v)
                    counted.add(id(t))
        elif isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name):
            ok = isinstance(st.op, _INT_OPS)
            bindings.setdefault(st.target.id, []).append(st.value if ok else None)
            counted.add(id(st.target))
        elif isinstance(st, (ast.For, ast.AsyncFor)) and isinstance(st.iter, ast.Call) \
                and isinstance(st.iter.func, ast.Name):
            t, f = st.target, st.iter.func.id
            if f == "range" and isinstance(t, ast.Name):
                bindings.setdefault(t.id, []).append(ast.Constant(0))
                counted.add(id(t))
            elif f == "enumerate" and isinstance(t, ast.Tuple) and t.elts and isinstance(t.elts[0], ast.Name):
                bindings.setdefault(t.elts[0].id, []).append(ast.Constant(0))
                counted.add(id(t.elts[0]))
        if isinstance(st, (ast.For, ast.AsyncFor)) and (key := _dict_key_target(st)) is not None:
            loops.append((key[0].id, key[1]))
            counted.add(id(key[0]))
    stored: set[str] = set()
    for n in fast_walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            stored.add(n.id)
            if id(n) not in counted:
                other.add(n.id)
    for name, d in loops:
        dict_values = bindings.get(d, [])
        int_dict = d not in stored if d in keyed else (
            d not in other and bool(dict_values) and int_keyed_result is not None
            and all(isinstance(v, ast.Call) and int_keyed_result(v) for v in dict_values))
        bindings.setdefault(name, []).append(ast.Constant(0) if int_dict else None)
    ints = {k for k in bindings if k not in other}
    changed = True
    while changed:
        changed = False
        for k in list(ints):
            if any(v is None or not int_expr(v, frozenset(ints)) for v in bindings[k]):
                ints.discard(k)
                changed = True
    return frozenset(ints)


def _dict_key_target(st: ast.For) -> Optional[tuple[ast.Name, str]]:
    """(the name bound to each key, the dict's name) of `for k, v in d.items():`, `for k in
    d.keys():`, `for k in d:`; None for any other loop."""
    it, t = st.iter, st.target
    if isinstance(it, ast.Name):
        return (t, it.id) if isinstance(t, ast.Name) else None
    if not (isinstance(it, ast.Call) and not it.args and not it.keywords and isinstance(it.func, ast.Attribute)
            and isinstance(it.func.value, ast.Name)):
        return None
    if it.func.attr == "keys" and isinstance(t, ast.Name):
        return t, it.func.value.id
    if it.func.attr == "items" and isinstance(t, ast.Tuple) and len(t.elts) == 2 and isinstance(t.elts[0], ast.Name):
        return t.elts[0], it.func.value.id
    return None


def _ranged(e: ast.expr) -> bool:
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "range"


def over_range(fn: ast.AST) -> frozenset[int]:
    """id() of the lambdas in `fn` that a call applies to the ints of a `range(...)`: the `key=`
    of `sorted`, `min`, `max` or `itertools.groupby` over one, `map`'s function over one."""
    out = set()
    for c in fast_walk(fn):
        if not isinstance(c, ast.Call) or not c.args:
            continue
        name = c.func.id if isinstance(c.func, ast.Name) else c.func.attr if isinstance(c.func, ast.Attribute) else ""
        if name in ("sorted", "min", "max", "groupby") and _ranged(c.args[0]):
            out.update(id(k.value) for k in c.keywords if k.arg == "key" and isinstance(k.value, ast.Lambda))
        elif name == "map" and len(c.args) == 2 and isinstance(c.args[0], ast.Lambda) and _ranged(c.args[1]):
            out.add(id(c.args[0]))
    return frozenset(out)
