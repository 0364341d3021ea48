"""A condition that reads a tensor into Python (`h.mean().item() > 0.5`, `float(t) > c`,
`bool(t)`, `t.any().item()`) as the tensor condition it stands for (`h.mean() > 0.5`).

Python compares the extracted number exactly; a tensor compared with a Python scalar rounds
the scalar to the tensor's dtype (`torch.tensor(0.1) > 0.1` is False, `0.1f.item() > 0.1` is
True; an int tensor against a float promotes both to float32; a uint8 tensor against -1 wraps
the -1). So the translation keeps the comparison in the tensor's dtype only where the scalar
is exact in every dtype the tensor can have, and otherwise compares in float64, which holds
every value of every real dtype (int64 up to 2**53) and every Python float exactly:

  t.item() OP c, float(t) OP c   c a literal every possible dtype of t holds exactly
                                  -> t OP c                        (equal)
                                  otherwise -> t.double() OP c     (equal on real tensors
                                  except int64 values beyond 2**53 and Python ints beyond
                                  2**53; float64 does not exist on MPS: the fix is unsafe)
  if t.item(): / if bool(t): / not t.item()   -> the tensor's truth (`t != 0`, nan true): equal
  int(t) ...                      declined: int() truncates toward zero and raises on nan/inf
  bool(t) OP c, arithmetic on the extracted value (`t.item() * 2 > c`)
                                  not translated (reported as a tensor-to-Python read)

A complex tensor is not considered: its `.item()` compared with `<` raises TypeError in
Python, and the tensor comparison raises RuntimeError (both raise).
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Callable, Optional

from graphmend.analysis.astwalk import walk as fast_walk  # ast.walk's nodes and order, without contexts/operators
from graphmend.analysis.dataflow import Kind
from graphmend.findings import Condition

COMPARE_OPS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
# results that are floating point whatever the input (or the call raises on other inputs, eagerly
# and mended alike: mean() of an int tensor)
FLOAT_RESULTS = frozenset({"float", "double", "half", "bfloat16", "mean", "std", "var", "norm", "softmax",
                           "log_softmax", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "erf",
                           "log1p", "expm1", "reciprocal"})
BOOL_RESULTS = frozenset({"any", "all", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "bool",
                          "logical_and", "logical_or", "logical_not", "logical_xor", "eq", "ne", "lt",
                          "le", "gt", "ge", "equal"})
DOUBLE_CAVEAT = ("the condition compares in float64, as Python compares the extracted number; that is "
                 "exact for every real dtype except int64 values beyond 2**53, but float64 does not exist "
                 "on MPS devices, where the mended condition raises")
INT_DECLINE = ("`int()` truncates toward zero and raises on nan and inf; the tensor condition would "
               "neither truncate nor raise")


@dataclass
class Extracted:
    """The condition as a tensor expression, and what it took to get there."""

    test: ast.expr  # new nodes carry no position: rules render them with ast.unparse
    calls: set[int] = field(default_factory=set)  # id() of the extraction calls
    details: list[str] = field(default_factory=list)  # "`.item()`", "`float()`", ...
    caveat: Optional[str] = None  # why the tensor condition may differ (the fix becomes unsafe)
    decline: Optional[str] = None  # why no tensor condition keeps the meaning
    # `flag = mask.any().item()` read earlier, used only here: (the read call, its tensor); the
    # fix turns the read into the tensor itself (`flag = mask.any()`)
    bindings: list = field(default_factory=list)


class _Fail(Exception):
    pass


class Translator:
    def __init__(self, kind: Callable[[ast.expr], Kind], qualify: Callable[[ast.expr], Optional[str]],
                 bound: Optional[dict] = None):
        self.kind = kind
        self.qualify = qualify
        # name -> (read call, tensor, how): a local bound once to a read and used only in this test
        self.bound = bound or {}

    def extraction(self, e: ast.expr) -> Optional[tuple[ast.expr, str, ast.Call]]:
        """(tensor, how, call) for `t.item()`, `float(t)`, `int(t)`, `bool(t)` of a tensor t."""
        if isinstance(e, ast.Name) and e.id in self.bound:
            call, tensor, how = self.bound[e.id]
            return e, how, call  # the name stands for the tensor once its read is undone
        if not isinstance(e, ast.Call) or e.keywords:
            return None
        if isinstance(e.func, ast.Attribute) and e.func.attr == "item" and not e.args \
                and self.kind(e.func.value) is Kind.TENSOR:
            return e.func.value, "item", e
        q = self.qualify(e.func) or ""
        if q in ("float", "int", "bool") and len(e.args) == 1 and self.kind(e.args[0]) is Kind.TENSOR:
            return e.args[0], q, e
        return None

    def translate(self, test: ast.expr) -> Optional[Extracted]:
        """The tensor condition, or None when the test reads no tensor into Python or does so
        where no translation applies (then it is reported as the read it is)."""
        out = Extracted(test)
        try:
            out.test = self._tr(test, out, truth=True)
        except _Fail:
            return None
        return out if out.calls else None

    def _tr(self, e: ast.expr, out: Extracted, truth: bool) -> ast.expr:
        if isinstance(e, ast.BoolOp):
            return ast.BoolOp(e.op, [self._tr(v, out, truth) for v in e.values]) \
                if self._has(e) else e
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            return ast.UnaryOp(ast.Not(), self._tr(e.operand, out, truth)) if self._has(e) else e
        ex = self.extraction(e)
        if ex is not None and truth:
            t, how, call = ex
            self._note(out, call, how)
            if how == "int":
                out.decline = out.decline or INT_DECLINE
            return t  # the truth of a one-element tensor: nonzero (nan true), as Python's
        if isinstance(e, ast.Compare) and self._has(e):
            return self._compare(e, out)
        if self._has(e):
            raise _Fail  # arithmetic or a call on the extracted value: a Python number from here on
        return e

    def _compare(self, e: ast.Compare, out: Extracted) -> ast.expr:
        if len(e.ops) != 1 or not isinstance(e.ops[0], COMPARE_OPS):
            raise _Fail
        sides = [e.left, e.comparators[0]]
        exs = [self.extraction(s) for s in sides]
        new = []
        for s, ex, other in zip(sides, exs, reversed(sides)):
            if ex is None:
                if self._has(s) or self.kind(s) is not Kind.STATIC:
                    raise _Fail  # a Python number against a tensor, or arithmetic on the number
                new.append(s)
                continue
            t, how, call = ex
            if how == "bool":
                raise _Fail
            self._note(out, call, how)
            if how == "int":
                out.decline = out.decline or INT_DECLINE
            new.append(t)
        both = all(ex is not None for ex in exs)
        if both:
            out.caveat = out.caveat or DOUBLE_CAVEAT
            new = [_double(v) for v in new]
        else:
            i = 0 if exs[0] is not None else 1
            c = _number(sides[1 - i])
            if c is None or not _exact_everywhere(c, self.dtype_class(new[i])):
                out.caveat = out.caveat or DOUBLE_CAVEAT
                new[i] = _double(new[i])
        return ast.Compare(new[0], [e.ops[0]], [new[1]])

    def dtype_class(self, t: ast.expr) -> Optional[str]:
        """"float" / "bool" when the tensor is provably of such a dtype, else None."""
        if isinstance(t, ast.Name) and t.id in self.bound:
            t = self.bound[t.id][1]
        if isinstance(t, ast.Compare) or (isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Invert)
                                          and isinstance(t.operand, ast.Compare)):
            return "bool"
        if isinstance(t, ast.Call):
            name = t.func.attr if isinstance(t.func, ast.Attribute) else ""
            q = self.qualify(t.func) or ""
            if q.startswith("torch."):
                name = q.split(".")[-1]
            if name in BOOL_RESULTS:
                return "bool"
            if name in FLOAT_RESULTS:
                return "float"
        return None

    def _has(self, e: ast.expr) -> bool:
        return any(self.extraction(n) is not None for n in fast_walk(e)
                   if isinstance(n, ast.Call) or isinstance(n, ast.Name) and n.id in self.bound)

    def _note(self, out: Extracted, call: ast.Call, how: str) -> None:
        for name, (c, tensor, _) in self.bound.items():
            if c is call and (call, tensor) not in out.bindings:
                out.bindings.append((call, tensor))
        out.calls.add(id(call))
        d = "`.item()`" if how == "item" else f"`{how}()`"
        if d not in out.details:
            out.details.append(d)


def _double(t: ast.expr) -> ast.expr:
    return ast.Call(ast.Attribute(t, "double", ast.Load()), [], [])


def _number(e: ast.expr) -> Optional[float]:
    neg = False
    while isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        neg ^= isinstance(e.op, ast.USub)
        e = e.operand
    if isinstance(e, ast.Constant) and type(e.value) in (int, float, bool):
        v = e.value
        return -v if neg else v
    return None


def _fits(v: float, bits: int, min_exp: int) -> bool:
    """`v` is exactly a binary float with `bits` significant bits whose lowest bit is >= 2**min_exp."""
    if v == 0:
        return True
    if not math.isfinite(v):
        return False
    m, e = math.frexp(abs(v))  # v = m * 2**e, 0.5 <= m < 1
    scaled = m * 2 ** bits
    if scaled != int(scaled):
        return False
    return e - bits >= min_exp or (abs(v) * 2 ** -min_exp).is_integer()


def _exact_everywhere(c, cls: Optional[str]) -> bool:
    """Comparing a tensor of class `cls` ("float", "bool", None: any dtype) with the Python number
    `c` in torch gives what Python gives with the tensor's extracted value."""
    if isinstance(c, bool) or (isinstance(c, int) and cls == "bool"):
        return True  # bool tensor vs int: an int64 comparison; bools are exact everywhere
    if isinstance(c, int):
        if cls == "float":
            return abs(c) <= 256  # every integer up to 256 is exact in bfloat16 (and float16)
        return 0 <= c <= 127  # held by every integer dtype (uint8 wraps negatives) and every float
    if not isinstance(c, float) or not math.isfinite(c):
        return False
    # float16 (11 bits, subnormals down to 2**-24, max 65504) and bfloat16 (8 bits) both hold it
    in_both = abs(c) <= 65504 and _fits(c, 11, -24) and _fits(c, 8, -133)
    if cls in ("float", "bool"):
        return in_both
    # an integer tensor promotes with a float scalar to the default dtype: its integers round
    # monotonically, and below 256 exactly, so the order against such a scalar holds
    return in_both and abs(c) < 256


# --- conditions a break depends on ---------------------------------------------------------------
DTYPE_ALIASES = {"half": "float16", "float": "float32", "double": "float64", "float16": "float16",
                 "float32": "float32", "float64": "float64", "bfloat16": "bfloat16", "int64": "int64",
                 "long": "int64", "int32": "int32", "int": "int32", "int16": "int16", "int8": "int8",
                 "uint8": "uint8", "bool": "bool", "complex64": "complex64", "complex128": "complex128",
                 "float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8_e5m2"}
# module attributes that are switches of training (off in eval and by default)
TRAINING_SWITCHES = frozenset({"gradient_checkpointing"})


def name_condition(conjuncts: list[tuple[ast.expr, bool]], qualify,
                   values: Optional[list[tuple[ast.expr, bool]]] = None) -> Optional[Condition]:
    """The condition a site breaks under, when the analysis can name part of it: a dtype test
    (`x.dtype == torch.float16`), `self.training`, a config attribute (`self.config.use_x`). The
    conjuncts are the tests that hold on the path to the site (`(test, truth)`); None when none
    of them is nameable.

    `values`: static tests the site needs beyond the path, each named whatever it is (kind
    "value"): an earlier operand of `and` that is a comparison with a number (`layer_dropout >
    0.`), or the test under which the branch's name became a tensor (`if len(self.step_t):
    on_step_t = t0 < next_t`). They are not taken from every enclosing `if`: a site under `if
    mask is not None:` is not conditional in any sense a user would want shown."""
    atoms: list[tuple[ast.expr, bool]] = []
    for e, pol in conjuncts:
        _atoms(e, pol, atoms)
    value_atoms: list[tuple[ast.expr, bool]] = []
    for e, pol in values or ():
        if isinstance(e, ast.BoolOp) and isinstance(e.op, ast.Or) and pol:
            value_atoms.append((e, pol))  # one of several (`a is not None or b is not None`)
        else:
            _atoms(e, pol, value_atoms)
    named_values = {id(e) for e, _ in value_atoms}
    atoms += [(e, pol) for e, pol in value_atoms if all(e is not a for a, _ in atoms)]
    texts, kinds, training = [], [], None
    # per subject: [its place in texts, the dtypes it may have (None: any), those it may not]
    subjects: dict[str, list] = {}
    for e, pol in atoms:
        d = _dtype_test(e, pol, qualify)
        if d is not None:
            subject, names, positive = d
            held = subjects.setdefault(subject, [len(texts), None, []])
            if held[0] == len(texts):
                texts.append("")  # written below, once every test of the subject is known
            if positive:  # two tests on one path: both hold (`not in (f32, f64, u8)`, then `== u8`)
                held[1] = list(names) if held[1] is None else [n for n in held[1] if n in names]
            else:
                held[2] += [n for n in names if n not in held[2]]
            kinds.append("dtype")
            continue
        if _is_self_attr(e, "training"):
            training = pol
            texts.append("the module is training" if pol else "the module is in eval mode")
            kinds.append("training")
            continue
        if isinstance(e, ast.Attribute) and e.attr in TRAINING_SWITCHES and _is_self_attr(e, e.attr):
            texts.append(f"`{ast.unparse(e)}` is {'on' if pol else 'off'}")
            kinds.append("config")
            continue
        if _is_config(e):
            texts.append(f"`{ast.unparse(e)}` is {'true' if pol else 'false'}" if not isinstance(e, ast.Compare)
                         else _compare_text(e, pol))
            kinds.append("config")
            continue
        if id(e) in named_values:
            texts.append(_value_text(e, pol))
            kinds.append("value")
    dtypes, not_dtypes = set(), set()
    for subject, (at, may, may_not) in subjects.items():
        if may is not None:
            may = [n for n in may if n not in may_not]
            dtypes.update(may)
            texts[at] = f"{subject} is {' or '.join(may) or 'of no dtype'}"
        else:
            not_dtypes.update(may_not)
            texts[at] = f"{subject} is not {' or '.join(may_not)}"
    if not texts:
        return None
    seen = []
    for t in texts:
        if t not in seen:
            seen.append(t)
    return Condition(" and ".join(seen), tuple(dict.fromkeys(kinds)), tuple(sorted(dtypes)),
                     tuple(sorted(not_dtypes)), training)


NEGATED_OPS = {ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn,
               ast.NotIn: ast.In}


def _compare_text(e: ast.Compare, pol: bool) -> str:
    """`a is None`, or when the test is false: `a is not None` (`!=` for `==`, `not in` for
    `in`), else not `a < b` (an order comparison is not negated: nan compares false both ways)."""
    if pol:
        return f"`{ast.unparse(e)}`"
    if len(e.ops) == 1 and type(e.ops[0]) in NEGATED_OPS:
        return f"`{ast.unparse(ast.Compare(e.left, [NEGATED_OPS[type(e.ops[0])]()], e.comparators))}`"
    return f"not `{ast.unparse(e)}`"


def _value_text(e: ast.expr, pol: bool) -> str:
    """`len(self.step_t)` is nonzero, `layer_dropout > 0.`, not `use_x`, `t0` is a tensor."""
    if isinstance(e, ast.BoolOp) and isinstance(e.op, ast.Or) and all(_is_tensor_test(v) for v in e.values) and pol:
        return " or ".join(f"`{v.args[0].id}`" for v in e.values) + " is a tensor"
    if _is_tensor_test(e):
        return f"`{e.args[0].id}` is {'' if pol else 'not '}a tensor"
    if _is_number_test(e):
        return f"`{e.args[0].id}` is {'' if pol else 'not '}a number"
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "len" and len(e.args) == 1:
        return f"`{ast.unparse(e)}` is {'nonzero' if pol else '0'}"
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "isinstance" and len(e.args) == 2 \
            and isinstance(e.args[0], ast.Name):
        kinds = e.args[1].elts if isinstance(e.args[1], ast.Tuple) else [e.args[1]]
        what = " or ".join(f"`{ast.unparse(k)}`" for k in kinds)
        return f"`{e.args[0].id}` is {'' if pol else 'not '}{'an instance of' if len(kinds) == 1 else 'one of'} {what}"
    if isinstance(e, ast.Compare) and not pol and len(e.ops) == 1:
        neg = {ast.Gt: "<=", ast.GtE: "<", ast.Lt: ">=", ast.LtE: ">", ast.Eq: "!=", ast.NotEq: "==",
               ast.Is: "is not", ast.IsNot: "is", ast.In: "not in", ast.NotIn: "in"}[type(e.ops[0])]
        return f"`{ast.unparse(e.left)} {neg} {ast.unparse(e.comparators[0])}`"
    return f"`{ast.unparse(e)}`" if pol else f"not `{ast.unparse(e)}`"


def _is_number_test(e: ast.expr) -> bool:
    """`isinstance(x, (int, float))`."""
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "isinstance" \
        and len(e.args) == 2 and isinstance(e.args[0], ast.Name) and ast.unparse(e.args[1]) == "(int, float)"


def _is_tensor_test(e: ast.expr) -> bool:
    """`isinstance(x, torch.Tensor)`, `torch.is_tensor(x)`."""
    if isinstance(e, ast.Call) and len(e.args) == 1 and isinstance(e.args[0], ast.Name) \
            and ast.unparse(e.func) in ("torch.is_tensor", "is_tensor"):
        return True
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "isinstance" \
        and len(e.args) == 2 and isinstance(e.args[0], ast.Name) and ast.unparse(e.args[1]) in ("torch.Tensor", "Tensor")


def numeric_comparison(e: ast.expr) -> bool:
    """`p > 0.`, `rate != 0`, `zero_division == "warn"`: one comparison of something with a
    number or a string."""
    if not (isinstance(e, ast.Compare) and len(e.ops) == 1) or isinstance(e.ops[0], (ast.In, ast.NotIn)):
        return False
    sides = [e.left, e.comparators[0]]
    return any(isinstance(x, ast.Constant) and type(x.value) in (int, float, str) for x in sides) \
        and not all(isinstance(x, ast.Constant) for x in sides)


def _size_of(e: ast.expr) -> bool:
    """`len(x)`, `x.numel()`, `x.size(0)`, `x.shape[0]`: how many items something holds."""
    if isinstance(e, ast.Call):
        if isinstance(e.func, ast.Name):
            return e.func.id == "len"
        return isinstance(e.func, ast.Attribute) and e.func.attr in ("numel", "size", "nelement", "__len__")
    return isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute) and e.value.attr == "shape"


def nonempty_test(e: ast.expr, pol: bool = True) -> bool:
    """`len(x) > 0`, `x.numel() != 0`, `x.size(0) >= 1` (or `len(x) == 0` when it is false): a
    test that something is not empty. The branch it selects is the one every run with data
    takes; a break there is not conditional in any sense a user would want shown."""
    if not (isinstance(e, ast.Compare) and len(e.ops) == 1):
        return False
    left, op, right = e.left, type(e.ops[0]), e.comparators[0]
    if isinstance(left, ast.Constant):  # `0 < len(x)`
        mirror = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE, ast.NotEq: ast.NotEq,
                  ast.Eq: ast.Eq}
        if op not in mirror:
            return False
        left, op, right = right, mirror[op], left
    if not (_size_of(left) and isinstance(right, ast.Constant) and type(right.value) is int):
        return False
    if not pol:  # the test is false: `len(x) == 0` -> `len(x) != 0`
        negate = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.LtE: ast.Gt,
                  ast.Gt: ast.LtE}
        if op not in negate:
            return False
        op = negate[op]
    return (op in (ast.Gt, ast.NotEq) and right.value == 0) or (op is ast.GtE and right.value == 1)


def arm_value_test(e: ast.expr, pol: bool) -> bool:
    """The test of an IfExp whose arm holds a site, named as the site's condition: a comparison
    with a number (`len(metrics) <= 1`, `num_mem_kv > 0`, `offset < 0`), not a string key
    (`k == "params"`) nor a test that something is not empty (`index.numel() > 0`)."""
    if not numeric_comparison(e) or nonempty_test(e, pol):
        return False
    return not any(isinstance(x, ast.Constant) and isinstance(x.value, str) for x in (e.left, *e.comparators))


def _atoms(e: ast.expr, pol: bool, out: list) -> None:
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        _atoms(e.operand, not pol, out)
    elif isinstance(e, ast.BoolOp) and isinstance(e.op, ast.And) and pol:
        for v in e.values:
            _atoms(v, True, out)
    elif isinstance(e, ast.BoolOp) and isinstance(e.op, ast.Or) and not pol:
        for v in e.values:
            _atoms(v, False, out)
    elif not isinstance(e, ast.BoolOp):
        out.append((e, pol))


def _dtype_name(e: ast.expr, qualify) -> Optional[str]:
    q = qualify(e) or ""
    if q.startswith("torch.") and q.count(".") == 1:
        return DTYPE_ALIASES.get(q.split(".")[1])
    return None


def _dtype_test(e: ast.expr, pol: bool, qualify) -> Optional[tuple[str, list[str], bool]]:
    """(subject, dtype names, positive) for `x.dtype == torch.float16`, `x.dtype in (...)`, ..."""
    if not (isinstance(e, ast.Compare) and len(e.ops) == 1):
        return None
    left, op, right = e.left, e.ops[0], e.comparators[0]
    if not (isinstance(left, ast.Attribute) and left.attr == "dtype"):
        left, right = right, left
        if not (isinstance(left, ast.Attribute) and left.attr == "dtype") or isinstance(op, (ast.In, ast.NotIn)):
            return None
    if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
        names = [_dtype_name(right, qualify)]
    elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
        names = [_dtype_name(x, qualify) for x in right.elts]
    else:
        return None
    if not names or None in names:
        return None
    positive = isinstance(op, (ast.Eq, ast.Is, ast.In)) == pol
    return ast.unparse(left.value), list(dict.fromkeys(names)), positive


def _is_self_attr(e: ast.expr, attr: str) -> bool:
    return isinstance(e, ast.Attribute) and e.attr == attr and isinstance(e.value, ast.Name) \
        and e.value.id == "self"


#: names of objects that hold a run's settings: `self.cfg.time_limit_bootstrap` (skrl's agents,
#: realcode round 34), `self.hparams.x` (Lightning), `args.x` (argparse)
CONFIG_HOLDERS = frozenset({"config", "cfg", "conf", "hparams", "args", "opts"})


def _is_config(e: ast.expr) -> bool:
    """`self.config.x`, `config.x`, `self.cfg.x`, `self.config.x == "y"` (a constant on the other
    side): an attribute read through an object named for settings (CONFIG_HOLDERS, or `*_config`,
    `*_cfg`)."""
    if isinstance(e, ast.Compare) and len(e.ops) == 1:
        sides = [e.left, e.comparators[0]]
        return any(_is_config(s) for s in sides) and any(isinstance(s, ast.Constant) for s in sides)
    if not isinstance(e, ast.Attribute):
        return False
    parts = []
    node = e
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return False
    parts.append(node.id)
    return any(p in CONFIG_HOLDERS or p.endswith(("_config", "_cfg")) for p in parts[1:])
