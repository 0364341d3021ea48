"""What a condition says of a value's type: `isinstance` tests (tensor, number, container),
`X is None` tests and bindings to None, `torch.is_tensor` tests."""

from __future__ import annotations

import ast
from typing import Optional

from graphmend.analysis.astwalk import walk as fast_walk
from graphmend.analysis.symbols import Symbols

NUMBER_TYPES = frozenset({"int", "float", "bool", "complex", "numbers.Number", "numbers.Integral",
                          "numbers.Real"})


# isinstance(x, T) with these proves x a Python value Dynamo holds as a constant: numbers, and a
# slice or a str (linear_operator's `if isinstance(idx, slice): if idx == _noop_index:`)
PYTHON_VALUE_TYPES = NUMBER_TYPES | {"slice", "str", "bytes", "range"}


def none_tests(test: ast.expr) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """What an `if` test proves about local names being None: (in the body, in the else branch),
    each a list of (name, is None). `x is None` / `x is not None`, and in the body also such
    operands of an `and`."""
    def one(e: ast.expr) -> Optional[tuple[str, bool]]:
        t = none_compare(e)
        return (t[0].id, t[1]) if t is not None and isinstance(t[0], ast.Name) else None
    t = one(test)
    if t is not None:
        return [t], [(t[0], not t[1])]
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [x for x in map(one, test.values) if x is not None], []
    return [], []


def isinstance_classes(test: ast.expr, symbols: Symbols) -> dict[str, str]:
    """Names `test` proves instances of one class (by its dotted name) when true:
    `isinstance(x, C)`, and each side of an `and`. Not a tuple of classes, not torch's."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        out: dict[str, str] = {}
        for v in test.values:
            out.update(isinstance_classes(v, symbols))
        return out
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" \
            and len(test.args) == 2 and not test.keywords and isinstance(test.args[0], ast.Name) \
            and isinstance(test.args[1], (ast.Name, ast.Attribute)):
        q = symbols.qualify(test.args[1]) or ""
        if "." in q and not q.startswith(("torch.", "builtins.", "numpy.")):
            return {test.args[0].id: q}
    return {}


def tensor_tests(test: ast.expr, symbols: Symbols) -> tuple[list[str], list[str]]:
    """(names `test` proves tensors when true, names it proves tensors when false):
    `torch.is_tensor(x)`, `isinstance(x, torch.Tensor)`, their `not`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yes, no = tensor_tests(test.operand, symbols)
        return no, yes
    if not (isinstance(test, ast.Call) and test.args and isinstance(test.args[0], ast.Name)):
        return [], []
    q = symbols.qualify(test.func) or ""
    if q == "torch.is_tensor" and len(test.args) == 1:
        return [test.args[0].id], []
    if isinstance(test.func, ast.Name) and test.func.id == "isinstance" and len(test.args) == 2 \
            and (symbols.qualify(test.args[1]) or "") == "torch.Tensor":
        return [test.args[0].id], []
    return [], []


def any_tensor_tests(test: ast.expr, symbols: Symbols) -> list[str]:
    """Names an `or` of tensor tests (`isinstance(a, Tensor) or torch.is_tensor(b)`) proves no
    tensors where it is false."""
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or)):
        return []
    out = []
    for v in test.values:
        yes, _ = tensor_tests(v, symbols)
        if not yes:
            return []  # another kind of test: where the `or` is false, that proves nothing of it
        out += yes
    return out


# attributes every tensor has (a failed `hasattr(x, ...)` of one says x is none)
TENSOR_ATTRS = frozenset({"__len__", "__getitem__", "__iter__", "shape", "dtype", "device", "ndim", "size", "numel",
                          "tolist", "item", "dim"})


TENSOR_TYPES = frozenset({"torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"})


# abstract types every tensor is an instance of (0-dim ones too, measured): where `isinstance(x,
# Iterable)` fails, x is no tensor (poutyne's `_get_metric` ends in `else: float(metrics)` after
# `elif isinstance(metrics, Iterable):`, realcode round 32)
TENSOR_ABCS = frozenset(f"{m}.{t}" for m in ("collections.abc", "typing")
                        for t in ("Iterable", "Sized", "Collection", "Container", "Reversible"))


def method_names(symbols: Symbols) -> frozenset:
    """The names of the methods of the file's classes (once per file version): a call `x.m(...)`
    on a local can reach one of them only if `m` is among them."""
    got = symbols.__dict__.get("method_names")
    if got is None:
        got = symbols.__dict__["method_names"] = frozenset(n for c in symbols.classes.values() for n in c.methods)
    return got


def not_tensor_unless(test: ast.expr, symbols: Symbols, holds: bool, fn: Optional[ast.AST] = None) -> list[str]:
    """Names that are no tensor where `test` is `not holds`: `isinstance(x, T)` with T, a tuple,
    or a name bound once to a tuple (in the function `fn`, else at module level) that holds
    torch.Tensor (or Parameter) among other types; where it fails, x is none of them. (`holds`
    True: the names that are no tensor where the test fails.)"""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return not_tensor_unless(test.operand, symbols, not holds, fn)
    if holds and isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "hasattr" \
            and len(test.args) == 2 and isinstance(test.args[0], ast.Name) and isinstance(test.args[1], ast.Constant) \
            and test.args[1].value in TENSOR_ATTRS:
        # where `hasattr(start, '__len__')` fails, start is no tensor (deepctr-torch's `slice_arrays`
        # slices by `start:stop` there, after `start = start.tolist()` in the other branch, round 33)
        return [test.args[0].id]
    if not holds or not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name)
                         and test.func.id == "isinstance" and len(test.args) == 2
                         and isinstance(test.args[0], ast.Name)):
        return []
    types = test.args[1]
    if isinstance(types, ast.Name):
        # bound in the function (pomegranate's `vector = (numpy.ndarray, torch.Tensor, ...)`), else
        # among the module's own statements (an edit of one is a full check, analysis/incremental.py)
        local = [b for b in fast_walk(fn) if isinstance(b, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                 and any(isinstance(t, ast.Name) and t.id == types.id
                         for t in (b.targets if isinstance(b, ast.Assign) else [b.target]))] if fn is not None else []
        top = symbols._tree.body if symbols._tree is not None and not local else []
        bound = [b for b in [*local, *top] if isinstance(b, ast.Assign) and len(b.targets) == 1
                 and isinstance(b.targets[0], ast.Name) and b.targets[0].id == types.id]
        if len(bound) == 1 and len(local) <= 1:
            types = bound[0].value
    elts = types.elts if isinstance(types, ast.Tuple) else [types]
    return [test.args[0].id] if any((symbols.qualify(t) or "") in TENSOR_TYPES | TENSOR_ABCS for t in elts) else []


# types no tensor is an instance of (a tensor is no Mapping or Sequence, measured)
_CONTAINER_TYPES = frozenset({"list", "tuple", "dict", "set", "frozenset", "range", "str", "bytes",
                              *(f"{m}.{t}" for m in ("collections.abc", "typing")
                                for t in ("Mapping", "MutableMapping", "Sequence", "MutableSequence"))})


def isinstance_containers(test: ast.expr, symbols: Symbols, holds: bool) -> list[str]:
    """Names no tensor where `test` is `holds`: `isinstance(x, (list, range))` holds (tensordict's
    `if not isinstance(element, (list, range)): element = element.reshape(-1).tolist()`, then
    `int(p) for p in element`: a list either way). Not a Python number: `isinstance_numbers`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return isinstance_containers(test.operand, symbols, not holds)
    got = _isinstance_of(test, symbols) if holds else None
    if got and got[1] and all(t.removeprefix("builtins.") in _CONTAINER_TYPES for t in got[1]):
        return [got[0]]
    return []


def _isinstance_of(test: ast.expr, symbols: Symbols) -> Optional[tuple[str, list[str]]]:
    """`isinstance(x, T)` / `isinstance(x, (T1, T2))` of a name: (x, the types qualified)."""
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
            and len(test.args) == 2 and isinstance(test.args[0], ast.Name)):
        return None
    types = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
    return test.args[0].id, [symbols.qualify(t) or "" for t in types]


def isinstance_numbers(test: ast.expr, symbols: Symbols) -> list[str]:
    """Names that `test` proves Python numbers (or slices, strs) when true: `isinstance(n, int)`,
    `isinstance(n, (int, float))`, `isinstance(i, slice)`, those among the operands of an `and`, and
    those every operand of an `or` proves (POT's `isinstance(b, int) or isinstance(b, float)`)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [n for v in test.values for n in isinstance_numbers(v, symbols)]
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        first, *rest = [isinstance_numbers(v, symbols) for v in test.values]
        return [n for n in dict.fromkeys(first) if all(n in r for r in rest)]
    got = _isinstance_of(test, symbols)
    if got and got[1] and all(t in PYTHON_VALUE_TYPES for t in got[1]):
        return [got[0]]
    return []


def none_binding(b: ast.AST, name: str) -> bool:
    """`name = None`, or `a, name = x, None`: a binding of `name` to the constant None."""
    if not isinstance(b, ast.Assign) or len(b.targets) != 1:
        return False
    t, v = b.targets[0], b.value
    if isinstance(t, ast.Name):
        return t.id == name and isinstance(v, ast.Constant) and v.value is None
    if isinstance(t, (ast.Tuple, ast.List)) and isinstance(v, (ast.Tuple, ast.List)) and len(t.elts) == len(v.elts):
        return any(isinstance(x, ast.Name) and x.id == name and isinstance(y, ast.Constant) and y.value is None
                   for x, y in zip(t.elts, v.elts))
    return False


def not_number_test(name: str) -> ast.expr:
    """`not isinstance(name, (int, float))`: the value condition of a break that needs a parameter
    annotated a number or a tree of tensors to be the tree (conditions.name_condition says "`name`
    is not a number")."""
    return ast.UnaryOp(ast.Not(), ast.Call(ast.Name("isinstance"), [
        ast.Name(name), ast.Tuple([ast.Name("int"), ast.Name("float")], ast.Load())], []))


def is_tensor_test(name: str) -> ast.expr:
    """`isinstance(name, torch.Tensor)`: the value condition of a break that needs `name` to be a
    tensor (conditions.name_condition says "`name` is a tensor")."""
    return ast.Call(ast.Name("isinstance"), [ast.Name(name), ast.Attribute(ast.Name("torch"), "Tensor")], [])


def none_compare(e: ast.expr) -> Optional[tuple[ast.expr, bool]]:
    """`X is None` -> (X, True), `X is not None` -> (X, False); else None."""
    if isinstance(e, ast.Compare) and len(e.ops) == 1 and isinstance(e.ops[0], (ast.Is, ast.IsNot)) \
            and isinstance(e.comparators[0], ast.Constant) and e.comparators[0].value is None:
        return e.left, isinstance(e.ops[0], ast.Is)
    return None


def is_none_test(e: ast.expr) -> Optional[str]:
    """`X is None` -> "X" (a name)."""
    t = none_compare(e)
    return t[0].id if t is not None and t[1] and isinstance(t[0], ast.Name) else None
