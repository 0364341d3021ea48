"""Boolean masks: the calls and operators that make one, the names a function binds only to
masks, the masks a function returns in a tuple and its callers unpack."""

from __future__ import annotations

import ast
from typing import Iterable, Optional

from graphmend.analysis.astwalk import walk as fast_walk
from graphmend.analysis.dataflow import docstring_bool_tensors, module_function, starred_sources, tuple_arity
from graphmend.analysis.symbols import FunctionInfo, Symbols, _statements, bound_only_to, lineage, single_assignments
from graphmend.analysis.type_tests import none_binding

MASK_CALLS = frozenset({"isnan", "isinf", "isfinite", "isneginf", "isposinf", "isclose", "isin", "isreal",
                        "signbit", "logical_and", "logical_or", "logical_not", "logical_xor", "eq", "ne", "gt",
                        "ge", "lt", "le", "greater", "greater_equal", "less", "less_equal", "not_equal", "bool"})


# methods that keep a boolean tensor boolean (only its shape or layout changes)
MASK_SHAPES = frozenset({"squeeze", "unsqueeze", "view", "reshape", "flatten", "expand", "expand_as", "transpose",
                         "permute", "contiguous", "clone", "detach", "t", "view_as", "reshape_as"})


def truth_names(e: ast.expr) -> list[str]:
    """The names whose truth a condition tests: `v`, `not v`, the bare operands of and/or."""
    if isinstance(e, ast.Name):
        return [e.id]
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        return truth_names(e.operand)
    if isinstance(e, ast.BoolOp):
        return [n for v in e.values for n in truth_names(v)]
    return []


def boolean_expr(e: ast.expr, is_mask) -> bool:
    """A boolean tensor expression: a comparison, `~`, `&`, `|` of such, torch.isnan/isinf/
    isfinite/logical_*, a name (or attribute) `is_mask(e)` holds to be one, such a mask reshaped
    or indexed (`m[idx]`: torch-linode's `~self.P_available[unique_indices]`, realcode round 28)."""
    if isinstance(e, ast.Compare):
        return not any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in e.ops)
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Invert):
        return boolean_expr(e.operand, is_mask)
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.BitAnd, ast.BitOr, ast.BitXor, ast.Mult)):
        # a product of boolean tensors is a boolean tensor (pythae's `w[acc * stopping_mask]`,
        # realcode round 31)
        return boolean_expr(e.left, is_mask) and boolean_expr(e.right, is_mask)
    if isinstance(e, ast.Call) and _pad_call(e) and e.args:
        # `F.pad(mask, [0, 1], value=1.0)` keeps the mask's dtype (torcheval's precision-recall
        # `mask = F.pad(threshold.diff(dim=0) != 0, [0, 1], value=1.0)`, realcode round 31)
        return boolean_expr(e.args[0], is_mask)
    if isinstance(e, (ast.Name, ast.Attribute)):
        return is_mask(e)
    if isinstance(e, ast.Subscript):
        return boolean_expr(e.value, is_mask)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in MASK_CALLS:
        return True
    if isinstance(e, ast.Call) and _reduced_mask(e):
        return True
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in MASK_SHAPES:
        return boolean_expr(e.func.value, is_mask)  # `(sizes == k).squeeze(dim)`: still a mask
    if isinstance(e, ast.Call) and _bool_dtype(e):
        return True  # `torch.ones(b, t, dtype=torch.bool)`, `m.to(torch.bool)`
    if isinstance(e, ast.IfExp):  # torchsurv's `torch.ones_like(time).bool() if tmax is None else time < tmax`
        return boolean_expr(e.body, is_mask) and boolean_expr(e.orelse, is_mask)
    if isinstance(e, ast.Call) and _bool_list_tensor(e):
        return True
    if isinstance(e, ast.Call) and e.args and isinstance(e.func, (ast.Attribute, ast.Name)) \
            and (e.func.attr if isinstance(e.func, ast.Attribute) else e.func.id) in JOINS:
        # `torch.row_stack([torch.cat([torch.ones(n, dtype=torch.bool), ...]) for x in bins])`:
        # joined masks are a mask (rtdl-num-embeddings' `mask` buffer, realcode round 35)
        items = e.args[0]
        elts = [items.elt] if isinstance(items, ast.ListComp) else \
            items.elts if isinstance(items, (ast.List, ast.Tuple)) else []
        return bool(elts) and all(boolean_expr(x, is_mask) for x in elts)
    return False


#: torch's functions that join tensors (their dtype is their inputs'); rules/where.py's too
JOINS = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack",
                   "row_stack"})


def _reduced_mask(c: ast.Call) -> bool:
    """`torch.any(m, dim=1)`, `m.all(-1)`, `np.any(m, axis=1)`: any/all over a dimension, a
    boolean tensor of what is left (torchstain's `OD[~torch.any(OD < beta, dim=1)]`, realcode
    round 32). Over everything it is 0-dim, no mask here."""
    f = c.func
    if not (isinstance(f, ast.Attribute) and f.attr in ("any", "all")):
        return False
    if any(k.arg in ("dim", "axis") for k in c.keywords):
        return True
    function = isinstance(f.value, ast.Name) and f.value.id in ("torch", "np", "numpy")
    return len(c.args) >= (2 if function else 1)


def _bool_list_tensor(c: ast.Call) -> bool:
    """`torch.tensor([len(h) > 0 for h in H])`: a tensor made of a list of Python bools (torchsurv's
    `include`, realcode round 23)."""
    name = c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", "")
    if name not in ("tensor", "as_tensor") or not c.args or any(k.arg == "dtype" for k in c.keywords):
        return False
    items = c.args[0]
    elts = [items.elt] if isinstance(items, ast.ListComp) else items.elts if isinstance(items, ast.List) else []
    return bool(elts) and all(
        isinstance(x, (ast.Compare, ast.BoolOp)) or (isinstance(x, ast.UnaryOp) and isinstance(x.op, ast.Not))
        or (isinstance(x, ast.Constant) and isinstance(x.value, bool)) for x in elts)


_BOOL_BUILDERS = frozenset({"ones", "zeros", "full", "empty", "ones_like", "zeros_like", "full_like", "empty_like",
                            "tensor", "as_tensor"})


def _pad_call(c: ast.Call) -> bool:
    """`F.pad(...)`, `torch.nn.functional.pad(...)`, `nn.functional.pad(...)`."""
    f = c.func
    return isinstance(f, ast.Attribute) and f.attr == "pad" and (
        isinstance(f.value, ast.Name) and f.value.id == "F"
        or isinstance(f.value, ast.Attribute) and f.value.attr == "functional")


def _bool_dtype(c: ast.Call) -> bool:
    """A tensor built or converted with dtype torch.bool: `torch.ones(..., dtype=torch.bool)`,
    `x.to(torch.bool)`, `x.to(dtype=torch.bool)`, `x.type(torch.bool)`."""
    name = c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", "")
    dtype = next((k.value for k in c.keywords if k.arg == "dtype"), None)
    if name in ("to", "type") and dtype is None and len(c.args) == 1:
        dtype = c.args[0]
    if dtype is None or name not in _BOOL_BUILDERS | {"to", "type"}:
        return False
    return isinstance(dtype, ast.Attribute) and dtype.attr == "bool" and isinstance(dtype.value, ast.Name) \
        and dtype.value.id == "torch"


def _bitwise(e: ast.expr) -> bool:
    """`a & b`, `a | b`, `a ^ b`, `~a`: a boolean tensor when its operands are (their dtype unknown)."""
    return isinstance(e, ast.BinOp) and isinstance(e.op, (ast.BitAnd, ast.BitOr, ast.BitXor)) or \
        isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Invert)


def bool_mask_names(fn: ast.AST, given: Iterable[str] = ()) -> dict[str, ast.expr]:
    """Locals of `fn` bound exactly once, to a boolean tensor expression, with what each is bound to (see
    FunctionWalker.is_mask_name); parameters and names bound twice are left out. `low = None`
    first (threshold_reducer's `low_condition, high_condition = None, None`) does not count:
    where a read of `x[low]` sees None, the walk's kind of `low` there is not a tensor.
    `given`: parameters a caller passes masks to (analysis/callers.py), masks while never bound
    in the body, like those the docstring documents as boolean tensors."""
    single = single_assignments(fn, none_binding)
    masks: dict[str, ast.expr] = {}  # name -> what it is bound to

    def mask(n: ast.expr) -> bool:
        return isinstance(n, ast.Name) and n.id in masks

    changed = True
    while changed:  # `inside = (x >= a) & (x <= b)`, then `outside = ~inside`
        changed = False
        for name, value in single.items():
            if name not in masks and boolean_expr(value, mask):
                masks[name] = value
                changed = True
    # A name bound on several paths, each time to a boolean tensor expression or to `&`, `|`, `~`
    # of operands whose dtype is not known, at least once to the former (torch-rechub's DIEN:
    # `valid = mask[:, :-1] & mask[:, 1:]` if a mask is given, else `torch.ones(..., dtype=torch.bool)`):
    # the bindings index alike, so each is a mask.
    def binding(v: ast.expr):  # (the value, whether a boolean tensor expression), else None
        if boolean_expr(v, mask):
            return v, True
        return (v, False) if _bitwise(v) else None

    for name, found in bound_only_to(fn, binding).items():
        if name not in masks and any(is_mask for _, is_mask in found):
            masks[name] = found[0][0]
    # parameters the docstring documents as boolean tensors, never bound in the body (torchsurv's
    # `event_sorted (torch.Tensor, bool)`, then `time_to_k[event_sorted]`: realcode round 23)
    documented = docstring_bool_tensors(fn) | set(given)
    if documented:
        bound = {x.id for x in fast_walk(fn) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)}
        for name in documented - bound:
            masks.setdefault(name, ast.Constant(True))
    return masks


def unpacked_masks(fi: FunctionInfo, sym: Symbols, known: dict) -> dict[str, ast.expr]:
    """Locals of `fi` bound once, by unpacking what a function or method of this file returns,
    at a position where every return of it gives a mask (torchdr UMAP's `source, target, edge_mask
    = self._flatten_padded_edges(...)`, whose `mask = nn_indices >= 0` is returned third, then
    `self.affinity_in_[edge_mask]`: realcode round 27). Each maps to a placeholder value."""
    fn = fi.node
    found: list[tuple[list, frozenset]] = []
    for st in _statements(fn.body):
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], (ast.Tuple, ast.List)) \
                and isinstance(st.value, ast.Call):
            elts = st.targets[0].elts
            callee = _unpacked_callee(fi, sym, st.value.func)
            owner = sym
            if callee is None and isinstance(st.value.func, ast.Name) and st.value.func.id in sym.imports:
                # a function another module defines (sbi's `is_valid_x, num_nans, num_infs =
                # handle_invalid_x(x, exclude_invalid_x)`, imported from sbi.utils.sbiutils,
                # realcode round 35)
                got = module_function(sym.imports[st.value.func.id], sym)
                if got is not None and got[1].node is not None:
                    owner, callee = got
            if callee is None:
                continue
            stars = [i for i, e in enumerate(elts) if isinstance(e, ast.Starred)]
            if not stars:
                positions = _returned_mask_positions(owner, callee, len(elts))
            elif len(stars) == 1 and (n := tuple_arity(callee)) is not None and n >= len(elts) - 1:
                # `is_valid_t, *_ = handle_invalid_x(batch_t, True)` (sbi's standardizing_net,
                # realcode round 35): the names before the star take the first items, those after
                # it the last
                got = _returned_mask_positions(owner, callee, n)
                positions = frozenset(i for i, j in enumerate(starred_sources(len(elts), stars[0], n)) if j in got)
            else:
                positions = frozenset()
            if positions:
                found.append((elts, positions))
    if not found:
        return {}
    binds: dict[str, int] = {}  # only a name bound once here: not rebound after the unpacking
    for n in fast_walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            binds[n.id] = binds.get(n.id, 0) + 1
        elif isinstance(n, ast.arg):
            binds[n.arg] = 2  # a parameter: bound by the caller too
    return {e.id: ast.Constant(True) for elts, positions in found for i, e in enumerate(elts)
            if i in positions and isinstance(e, ast.Name) and binds.get(e.id) == 1 and e.id not in known}


def _unpacked_callee(fi: FunctionInfo, sym: Symbols, func: ast.expr) -> Optional[FunctionInfo]:
    """The function of this file a call's `func` names: `f`, `self.m` (the class or a base of this
    file), `Cls.m`."""
    if isinstance(func, ast.Name):
        return sym.functions.get(func.id)
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return None
    if func.value.id == "self" and fi.cls is not None:
        for _, c in lineage(sym, fi.cls, local=True):
            if func.attr in c.methods:
                return c.methods[func.attr]
        return None
    ci = sym.classes.get(func.value.id)
    return ci.methods.get(func.attr) if ci is not None else None


def _returned_mask_positions(sym: Symbols, callee: FunctionInfo, n: int) -> frozenset:
    """The positions of the `n`-tuple every return of `callee` gives where it gives a mask (a local
    bound once to a boolean tensor expression, or one written there). Cached per file version;
    a cached answer still counts as reading the callee's body (symbols.tracking)."""
    node = callee.node  # records the read
    cache = sym.__dict__.setdefault("returned_masks_cache", {})
    key = (callee.qualname, n)
    if key in cache:
        return cache[key]
    returns = [st for st in _statements(node.body) if isinstance(st, ast.Return)]
    found: frozenset = frozenset()
    if returns and all(isinstance(r.value, ast.Tuple) and len(r.value.elts) == n for r in returns):
        # a position each return fills with a name or a boolean expression (the mask names, which
        # cost a pass over the body, only then)
        maybe = [i for i in range(n) if all(isinstance(r.value.elts[i], ast.Name)
                                            or boolean_expr(r.value.elts[i], lambda _: True) for r in returns)]
        if maybe and not any(isinstance(x, (ast.Yield, ast.YieldFrom)) for x in fast_walk(node)):
            masks = bool_mask_names(node)
            found = frozenset(i for i in maybe if all(
                boolean_expr(r.value.elts[i], lambda x: isinstance(x, ast.Name) and x.id in masks) for r in returns))
    cache[key] = found
    return found
