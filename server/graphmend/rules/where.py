"""[Where] GM201: `if`/`else` (or `a if c else b`) on a tensor's value becomes `torch.where`.

Mended forms:
  if c: x = A            ->  x = torch.where(c, A, x)
  if c: x = A; else: x = B -> x = torch.where(c, A, B)      (several names: one where each)
  if c: return A; else/next: return B  ->  return torch.where(c, A, B)
  a if c else b          ->  torch.where(c, a, b)
  if c: print(...) / logger.x(...) / warnings.warn(...)   (only such effects, no else)
                         ->  graphmend.print_if(c, ...) / graphmend.log_if(c, logger, "x", ...) /
                             graphmend.warn_if(c, ...)   (deferred, gated at run time)
  if c: <set-up>; self.register_buffer(N, A) else: <set-up>; self.register_buffer(N, B)
                         ->  <both set-ups>; self.register_buffer(N, torch.where(c, A, B))
                             (unsafe: LongRoPE's switch; set-ups must be idempotent)
A condition that reads the tensor into Python (`h.mean().item() > 0.5`, `float(t) > c`,
`bool(t)`, `t.any().item()`) is mended as the tensor condition it stands for, under the same
legality; the comparison stays in the tensor's dtype only where the Python scalar is exact in
every dtype the tensor may have (else it moves to float64, and the fix is unsafe: see
analysis/conditions.py), and `int(t)` declines (it truncates, and raises on nan/inf).
A static `and` prefix stays a Python `if`; static temporaries a branch computes only for its
own use (`clamp_value = torch.finfo(h.dtype).max - 1000`) are computed before the where.

Legality (else the mend declines and says why):
  * the condition is a single-element tensor (a reduction, or a comparison of such), so the
    where does not broadcast where Python would have raised "ambiguous truth value"; and/or/not
    combine only tensors (a Python value inside them, or a chained comparison, declines); a
    condition that is not a bool tensor (`if x.sum():`) is passed as `(c).bool()`;
  * the if is not an `elif` (rewriting it alone would detach it from its chain), and a
    temporary computed before the where cannot raise (no indexing or division);
  * both sides are tensors, cheap, free of side effects and safe to evaluate on the path not
    taken (pure torch functions and non in-place tensor methods; no module calls, no
    indexing by tensor values); a side that may only run under its predicate becomes
    `torch.cond(c, lambda: A, lambda: B)` instead (always UNSAFE: torch.cond traces both
    branches, needs equal dtype and rank, and compiles on its first eager call; a branch
    that returns an input unchanged gets `.clone()`; in-place updates decline);
  * SAFE only when both sides provably have the same dtype and shape and cannot raise (one side
    is the other passed through a dtype- and shape-preserving op: `clone`, `type_as` itself,
    `masked_fill` with a mask of its own shape and a value any dtype holds, float ops when a
    static `x.dtype == torch.float*` / `x.is_floating_point()` prefix proves a float, clamp
    bounds the dtype holds); otherwise the fix is UNSAFE, because torch.where broadcasts and
    promotes where the original did not, and computes both sides, so a side that raises for
    some input (an index out of range, an op the dtype lacks) raises on the path not taken too.
"""

from __future__ import annotations

import ast
from typing import Optional

from graphmend.analysis.astwalk import walk as fast_walk  # ast.walk's nodes and order, without contexts/operators
from graphmend.analysis.dataflow import SCALAR_METHODS, TORCH_DATA_BOOL, Kind
from graphmend.analysis.detect import DYNAMIC_SHAPE_FUNCS, Site
from graphmend.analysis.masks import JOINS
from graphmend.findings import Applicability, TextEdit
from graphmend.rules.base import Context, Example, Verdict, uses_after

CODES = ("GM201",)
REDUCTIONS = frozenset({"any", "all", "sum", "mean", "max", "min", "prod", "amax", "amin", "norm",
                        "std", "var", "median", "count_nonzero", "equal"})
PURE_TORCH = frozenset({
    "where", "clamp", "clip", "abs", "neg", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu",
    "maximum", "minimum", "finfo", "iinfo", "zeros_like", "ones_like", "full_like", "isinf", "isnan",
    "isfinite", "any", "all", "sum", "mean", "max", "min", "nan_to_num", "masked_fill", "to", "float",
    "half", "bfloat16", "long", "int", "bool", "type_as", "add", "sub", "mul", "div", "pow", "sign",
    "floor", "ceil", "round", "logical_and", "logical_or", "logical_not", "softmax", "gelu", "silu",
    "tensor", "full", "zeros", "ones", "cat", "stack", "view", "reshape", "transpose", "permute",
    "unsqueeze", "squeeze", "expand", "expand_as", "contiguous", "clone", "detach", "matmul",
    "new_zeros", "new_ones", "new_full", "amax", "amin", "exp2", "log1p", "expm1", "reciprocal",
})
# f(v, <static>...) keeps v's dtype and shape when v is floating point
FLOAT_PRESERVING = frozenset({"clamp", "clip", "nan_to_num", "clamp_min", "clamp_max", "abs", "neg",
                              "relu", "tanh", "sigmoid", "exp", "sqrt", "rsqrt", "gelu", "silu"})
ALWAYS_PRESERVING = frozenset({"masked_fill", "clone", "detach", "contiguous", "type_as"})
FLOAT_DTYPES = frozenset({"float16", "float32", "float64", "bfloat16", "half", "float", "double"})
# clamp(v, min=, max=) / nan_to_num(v, nan=, posinf=, neginf=): bounds and fill values must fit v's dtype
BOUNDED = frozenset({"clamp", "clip", "clamp_min", "clamp_max", "nan_to_num"})
SMALLEST_MAX = 65504.0  # float16's largest finite value: a literal up to it fits every float dtype
UNSAFE_WHERE = ("cannot prove both branches have the same dtype and shape, nor that both can be computed "
                "on every input; torch.where broadcasts and promotes where the original did not, and "
                "computes both sides, so a side that raises for some input (an index out of range, an op "
                "the dtype lacks) raises on the path not taken too, and gradients flow through both: where "
                "the side not taken is inf or nan (a division by zero, the log or square root of a "
                "non-positive value) the gradient becomes nan")
# Ops that take finite values to inf or nan (sqrt and rsqrt of negatives or 0, exp overflowing):
# the value of the side not taken is masked, its gradient (0 * nan) is not, so a torch.where with
# them is not the same program under autograd (monai's `_safe_mean`, realcode round 7)
GRADIENT_HAZARDS = frozenset({"sqrt", "rsqrt", "exp"})


def message(site: Site) -> str:
    if site.extracted is not None and site.extracted.bindings:
        return (f"{' and '.join(site.extracted.details)} reads a tensor's value into Python for the branch "
                f"at line {site.node.lineno} alone: the graph breaks here")
    if site.extracted is not None:
        return (f"{' and '.join(site.extracted.details)} in the condition reads a tensor's value into "
                "Python: the data-dependent branch breaks the graph")
    if isinstance(site.node, ast.BoolOp):
        op = "and" if isinstance(site.node.op, ast.And) else "or"
        return f"`{op}` takes the truth of a tensor value: a data-dependent branch that breaks the graph"
    if isinstance(site.node, ast.UnaryOp):
        return "`not` takes the truth of a tensor value into a Python bool: the graph breaks here"
    return "data-dependent branch on a tensor value breaks the graph"


class _Plan:
    def __init__(self):
        self.hoisted: list[ast.stmt] = []
        self.assigns: list[tuple[str, ast.expr, ast.expr]] = []  # name, true value, false value
        self.ret: Optional[tuple[ast.expr, ast.expr]] = None
        self.remove_next: Optional[ast.stmt] = None  # the `return B` after an else-less if
        self.expr: Optional[tuple[ast.expr, ast.expr]] = None
        # both branches end in self.register_buffer(NAME, value, **kw): (call, true value, false value)
        self.buffer: Optional[tuple[ast.Call, ast.expr, ast.expr]] = None
        self.prelude: list[ast.stmt] = []  # module-state set-up of both branches, run on both paths
        self.gated: list[Site] = []  # `if c: print(...)/logger.x(...)/warnings.warn(...)` -> deferred, gated on c


def _next_stmt(site: Site) -> Optional[ast.stmt]:
    for parent in ast.walk(site.func.node):
        for field in ("body", "orelse", "finalbody"):
            seq = getattr(parent, field, None)
            if isinstance(seq, list) and site.node in seq:
                i = seq.index(site.node)
                return seq[i + 1] if i + 1 < len(seq) else None
    return None


def _plan(site: Site, env) -> tuple[Optional[_Plan], Optional[str]]:
    node = site.node
    plan = _Plan()
    if isinstance(node, ast.IfExp):
        plan.expr = (node.body, node.orelse)
        return plan, None
    if isinstance(node, ast.While):
        return None, "a loop condition cannot become dataflow"
    if isinstance(node, ast.BoolOp):
        return None, ("an `and` / `or` outside a condition gives one of its operands, not a bool; "
                      "no rewrite keeps what it gives (keep the value a tensor: `&`, `|`, torch.logical_and)")
    if isinstance(node, ast.UnaryOp):
        return None, ("`not` outside a condition gives a Python bool; no rewrite keeps it a bool (keep the value a "
                      "tensor: `~t`, torch.logical_not, if what uses it takes tensors)")
    if not isinstance(node, ast.If):
        return None, "not an if statement"
    if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        return None, "elif chains are not mended yet"
    if is_elif(site):
        return None, "the if is an `elif` of another if; mending it alone would detach it from the chain"
    body, orelse = node.body, node.orelse
    buf = _buffer_plan(site, env, body, orelse)
    if buf is not None:
        return buf
    gated = _gated_effects(site, env, body, orelse)
    if gated:
        plan.gated = gated
        return plan, None
    if len(body) == 1 and isinstance(body[0], ast.Return):
        if orelse:
            if len(orelse) == 1 and isinstance(orelse[0], ast.Return):
                plan.ret = (body[0].value, orelse[0].value)
                return plan, None
            return None, "one branch returns and the other does not"
        nxt = _next_stmt(site)
        if isinstance(nxt, ast.Return):
            plan.ret = (body[0].value, nxt.value)
            plan.remove_next = nxt
            return plan, None
        return None, "the branch returns early; the code after it would need torch.cond"
    true_vals: dict[str, ast.expr] = {}
    false_vals: dict[str, ast.expr] = {}
    temps: set[str] = set()
    for branch, vals in ((body, true_vals), (orelse, false_vals)):
        for s in branch:
            if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)):
                return None, (f"the branch contains {_describe(s)}; only assignments to local names "
                              "become torch.where")
            name = s.targets[0].id
            if name in vals:
                return None, (f"`{name}` is assigned twice in the same branch; the where would keep only "
                              "the last value and drop computing the first (which may raise)")
            if any(isinstance(n, ast.Name) and (n.id in vals) for n in ast.walk(s.value)):
                return None, f"`{name}` uses a value assigned earlier in the same branch"
            if env.kind(s.value) is Kind.STATIC and name not in site.kinds:
                if _may_raise(s.value):
                    return None, (f"`{name}` would be computed on both paths, and computing it may raise "
                                  "(indexing, division)")
                temps.add(name)
                env.kinds[name] = Kind.STATIC
                plan.hoisted.append(s)
                continue
            vals[name] = s.value
    if temps & (set(true_vals) | set(false_vals)):
        return None, "a temporary is also assigned a tensor"
    used = uses_after(site, temps)
    if used:
        return None, f"{', '.join(sorted(used))} is used after the if; computing it on both paths would be visible"
    hoisted_names = {s.targets[0].id for s in plan.hoisted}
    if len(hoisted_names) != len(plan.hoisted):
        return None, "a temporary is assigned twice"
    for name in sorted(set(true_vals) | set(false_vals)):
        if name not in site.kinds and (name not in true_vals or name not in false_vals):
            return None, f"`{name}` is not defined before the if, so the untaken path has no value for it"
        t = true_vals.get(name, ast.Name(name, ast.Load()))
        f = false_vals.get(name, ast.Name(name, ast.Load()))
        plan.assigns.append((name, t, f))
    if not plan.assigns:
        return None, "the branch assigns no tensor"
    return plan, None


def is_elif(site: Site) -> bool:
    """The if is an `elif` (the only statement of another if's else, at that if's column)."""
    node = site.node
    return isinstance(node, ast.If) and any(
        isinstance(p, ast.If) and len(p.orelse) == 1 and p.orelse[0] is node
        and node.lineno > p.lineno and node.col_offset == p.col_offset
        for p in fast_walk(site.func.node))


def _may_raise(e: ast.expr) -> bool:
    """A static expression that can fail at run time for some input (so not on both paths)."""
    for n in ast.walk(e):
        if isinstance(n, ast.Subscript):
            return True
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)):
            return True
    return False


def _gated_effects(site: Site, env, body, orelse) -> list[Site]:
    """The branch only prints, logs or warns (and has no else): each effect can be deferred
    with the condition as its gate, so nothing needs the condition's value while tracing."""
    from graphmend.analysis.detect import FunctionWalker

    if orelse or not body:
        return []
    walker = FunctionWalker(env.symbols, site.func)
    walker.env.kinds = dict(site.kinds)
    out = []
    for s in body:
        if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)):
            return []
        walker.sites = []
        walker._seen = set()
        walker.call(s.value)
        found = [x for x in walker.sites if x.node is s.value and x.code in ("GM101", "GM102", "GM103")]
        if not found:
            return []
        out.append(found[0])
    return out


def _register_buffer(s: ast.stmt) -> Optional[ast.Call]:
    if (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
            and isinstance(s.value.func, ast.Attribute) and s.value.func.attr == "register_buffer"
            and isinstance(s.value.func.value, ast.Name) and s.value.func.value.id == "self"
            and len(s.value.args) == 2 and isinstance(s.value.args[0], ast.Constant)):
        return s.value
    return None


def _idempotent_setup(s: ast.stmt, env) -> bool:
    """Module set-up that may run on both paths: `self.a = self.a.to(...)` (a move that is a
    no-op when repeated), or `if <static>: self.x, ... = <call>` filling a cache attribute."""
    if isinstance(s, ast.Assign) and len(s.targets) == 1:
        t, v = s.targets[0], s.value
        if (isinstance(t, ast.Attribute) and isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute)
                and v.func.attr == "to" and ast.unparse(v.func.value) == ast.unparse(t)):
            return True
    if isinstance(s, ast.If) and not s.orelse and env.kind(s.test) is Kind.STATIC:
        return all(isinstance(b, ast.Assign) and all(
            isinstance(x, ast.Attribute) or (isinstance(x, ast.Tuple) and all(
                isinstance(e, (ast.Attribute, ast.Name)) for e in x.elts)) for x in b.targets)
            for b in s.body)
    return False


def _buffer_plan(site: Site, env, body, orelse) -> Optional[tuple[Optional[_Plan], Optional[str]]]:
    """`if c: <setup>; self.register_buffer(N, A, ...) else: <setup>; self.register_buffer(N, B, ...)`
    -> both set-ups, then `self.register_buffer(N, torch.where(c, A, B), ...)`."""
    if not body or not orelse:
        return None
    ct, cf = _register_buffer(body[-1]), _register_buffer(orelse[-1])
    if ct is None or cf is None:
        return None
    if ct.args[0].value != cf.args[0].value or \
            [ast.dump(k) for k in ct.keywords] != [ast.dump(k) for k in cf.keywords]:
        return None, "the branches register different buffers"
    prelude = [*body[:-1], *orelse[:-1]]
    for s in prelude:
        if not _idempotent_setup(s, env):
            return None, f"the branch contains {_describe(s)} besides the buffer update"
    plan = _Plan()
    plan.buffer = (ct, ct.args[1], cf.args[1])
    plan.prelude = prelude
    return plan, None


def _describe(s: ast.stmt) -> str:
    if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
        return f"a call with effects (`{ast.unparse(s.value.func)}(...)`)"
    if isinstance(s, ast.Assign):
        return f"an assignment to `{ast.unparse(s.targets[0])}`"
    return f"a `{type(s).__name__.lower()}` statement"


def _side_ok(e: ast.expr, site: Site, ctx: Context, env) -> Optional[str]:
    """None if `e` is cheap, pure and safe to evaluate on the path not taken; else why not."""
    for n in ast.walk(e):
        if isinstance(n, ast.Call):
            q = ctx.symbols.qualify(n.func) or ""
            attr = n.func.attr if isinstance(n.func, ast.Attribute) else None
            if q.startswith("torch.") and q.split(".")[-1] in PURE_TORCH:
                continue
            if attr in PURE_TORCH and env.kind(n.func.value) is Kind.TENSOR:
                continue
            if q.startswith("torch.") and q.split(".")[-1] in ("finfo", "iinfo"):
                continue
            return f"`{ast.unparse(n.func)}(...)` may not be safe or cheap to run on the path not taken"
        if isinstance(n, ast.Subscript) and env.kind(n.slice) is Kind.TENSOR:
            return "indexing by a tensor may fail on the path not taken"
        if isinstance(n, (ast.Lambda, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)):
            return f"a `{type(n).__name__}` expression cannot be evaluated on both paths"
    return None


def _message_ok(e: ast.expr, ctx: Context, env) -> Optional[str]:
    """Arguments of a gated message: evaluating them when the gate is false must be harmless."""
    from graphmend.analysis.dataflow import PURE_BUILTINS
    for n in ast.walk(e):
        if isinstance(n, ast.Subscript):
            return f"`{ast.unparse(n)}` in a message argument may fail (an index out of range)"
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Div, ast.FloorDiv, ast.Mod)) and not (
                isinstance(n.left, (ast.Constant, ast.JoinedStr)) and isinstance(n.op, ast.Mod)):
            return f"`{ast.unparse(n)}` in a message argument may fail (a division by zero)"
        if isinstance(n, ast.Call):
            q = ctx.symbols.qualify(n.func) or ""
            if q in PURE_BUILTINS or q in ("str", "repr", "len", "type", "getattr", "isinstance"):
                continue
            if env.kind(n) is Kind.STATIC and isinstance(n.func, ast.Attribute) \
                    and n.func.attr in ("format", "join", "upper", "lower", "strip"):
                continue
            if _side_ok(n, None, ctx, env) is None:
                continue
            return f"`{ast.unparse(n.func)}(...)` in a message argument may have effects"
    return None


def _is_single_element(e: ast.expr, site: Site, ctx: Context, env, depth: int = 0) -> bool:
    if depth > 6:
        return False
    if env.kind(e) is Kind.STATIC or isinstance(e, ast.Constant):
        return True
    if isinstance(e, ast.UnaryOp):
        return _is_single_element(e.operand, site, ctx, env, depth + 1)
    if isinstance(e, ast.BoolOp):
        return all(_is_single_element(v, site, ctx, env, depth + 1) for v in e.values)
    if isinstance(e, ast.Compare):
        return all(_is_single_element(v, site, ctx, env, depth + 1) for v in [e.left, *e.comparators])
    if isinstance(e, ast.BinOp):
        return all(_is_single_element(v, site, ctx, env, depth + 1) for v in (e.left, e.right))
    if isinstance(e, ast.Call):
        name = e.func.attr if isinstance(e.func, ast.Attribute) else getattr(e.func, "id", "")
        q = ctx.symbols.qualify(e.func) or ""
        no_dim = not any(k.arg in ("dim", "axis") for k in e.keywords)
        if isinstance(e.func, ast.Attribute) and name in ELEMENTWISE_CASTS and not e.args and not e.keywords:
            return _is_single_element(e.func.value, site, ctx, env, depth + 1)  # `t.double()` keeps t's shape
        if site.extracted is not None and any(c is e for c, _ in site.extracted.bindings):
            t = next(t for c, t in site.extracted.bindings if c is e)  # `flag = t.item()`: t after the fix
            return _is_single_element(t, site, ctx, env, depth + 1)
        if q.startswith("torch.") and name in REDUCTIONS:
            return len(e.args) == 1 and no_dim
        if isinstance(e.func, ast.Attribute) and name in REDUCTIONS and env.kind(e.func.value) is Kind.TENSOR:
            return not e.args and no_dim
        return False
    if isinstance(e, ast.Name):
        last = None
        for n in ast.walk(site.func.node):
            if isinstance(n, ast.Assign) and n.lineno < site.node.lineno and any(
                    isinstance(t, ast.Name) and t.id == e.id for t in n.targets):
                if last is None or n.lineno > last.lineno:
                    last = n
        return last is not None and _is_single_element(last.value, site, ctx, env, depth + 1)
    return False


ELEMENTWISE_CASTS = frozenset({"double", "float", "half", "bfloat16", "bool", "long", "int"})


def _preserves(e: ast.expr, base: str, ctx: Context, env, float_known: bool,
               temps: Optional[dict] = None) -> bool:
    """`e` has the same dtype and shape as the tensor named `base`, and computing it cannot
    raise (it runs on the path not taken too). `temps`: the static temporaries computed before
    the where (name -> value)."""
    temps = temps or {}
    if isinstance(e, ast.Name):
        return e.id == base
    if isinstance(e, ast.Call):
        name = e.func.attr if isinstance(e.func, ast.Attribute) else ""
        q = ctx.symbols.qualify(e.func) or ""
        if name in GRADIENT_HAZARDS or q.rsplit(".", 1)[-1] in GRADIENT_HAZARDS and q.startswith("torch."):
            return False  # the masked side's gradient may be nan
        statics = lambda args: all(env.kind(a) is Kind.STATIC for a in args)  # noqa: E731
        fits = lambda args: all(_fits(a, base, ctx, float_known, temps) for a in args)  # noqa: E731
        kwvals = [k.value for k in e.keywords]
        again = lambda v: _preserves(v, base, ctx, env, float_known, temps)  # noqa: E731
        if q.startswith("torch.") and e.args:
            fname = q.split(".")[-1]
            first, rest = e.args[0], e.args[1:]
            if fname in FLOAT_PRESERVING and float_known and statics(rest + kwvals) \
                    and (fname not in BOUNDED or fits(rest + kwvals)):
                return again(first)
        elif isinstance(e.func, ast.Attribute):
            if name in FLOAT_PRESERVING and float_known and statics(e.args + kwvals) \
                    and (name not in BOUNDED or fits(e.args + kwvals)):
                return again(e.func.value)
            if name in ("clone", "detach", "contiguous"):
                return again(e.func.value)
            if name == "type_as" and len(e.args) == 1 and isinstance(e.args[0], ast.Name) \
                    and e.args[0].id == base:
                return again(e.func.value)
            if name == "masked_fill" and len(e.args) == 2 and not e.keywords \
                    and _mask_of(e.args[0], base, ctx, env, float_known) and fits(e.args[1:]):
                return again(e.func.value)
    return False


def _mask_of(m: ast.expr, base: str, ctx: Context, env, float_known: bool) -> bool:
    """`m` is a bool tensor of `base`'s shape (a comparison of it with a Python value, isnan(...)):
    masked_fill with it neither broadcasts nor fails."""
    same = lambda v: _preserves(v, base, ctx, env, float_known)  # noqa: E731
    if isinstance(m, ast.UnaryOp) and isinstance(m.op, ast.Invert):
        return _mask_of(m.operand, base, ctx, env, float_known)
    if isinstance(m, ast.Compare) and len(m.ops) == 1 and \
            isinstance(m.ops[0], (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
        sides = (m.left, m.comparators[0])
        scalar = lambda v: isinstance(v, (ast.Constant, ast.UnaryOp, ast.Name, ast.Attribute)) \
            and env.kind(v) is Kind.STATIC  # noqa: E731
        return any(same(v) for v in sides) and all(same(v) or scalar(v) for v in sides)
    if isinstance(m, ast.Call) and not m.keywords:
        name = m.func.attr if isinstance(m.func, ast.Attribute) else ""
        masks = ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "logical_not")
        q = ctx.symbols.qualify(m.func) or ""
        if q.startswith("torch.") and q.split(".")[-1] in masks and len(m.args) == 1:
            return same(m.args[0])
        if name in masks and not m.args and not q.startswith("torch."):
            return same(m.func.value)
    return False


def _fits(v: ast.expr, base: str, ctx: Context, float_known: bool, temps: dict, depth: int = 0) -> bool:
    """A Python number that `base`'s dtype holds (a clamp bound, a fill value): a literal up to
    float16's largest value (any number when it is a float: inf and nan too), or
    `torch.finfo(base.dtype).max - K` / `.min + K`."""
    if depth > 4:
        return False
    if isinstance(v, ast.Name) and v.id in temps:
        return _fits(temps[v.id], base, ctx, float_known, temps, depth + 1)
    if isinstance(v, ast.UnaryOp) and isinstance(v.op, (ast.USub, ast.UAdd)):
        return _fits(v.operand, base, ctx, float_known, temps, depth + 1)
    if isinstance(v, ast.Constant) and type(v.value) in (int, float, bool):
        x = abs(float(v.value))
        return x <= SMALLEST_MAX if x == x and x != float("inf") else float_known
    if isinstance(v, ast.Call) and (ctx.symbols.qualify(v.func) or "") == "float" and len(v.args) == 1 \
            and isinstance(v.args[0], ast.Constant) and isinstance(v.args[0].value, str):
        return float_known and v.args[0].value.strip().lower().lstrip("+-") in ("inf", "infinity", "nan")
    if not float_known:
        return False
    if isinstance(v, ast.BinOp) and isinstance(v.right, ast.Constant) and type(v.right.value) in (int, float) \
            and 0 <= v.right.value <= SMALLEST_MAX:
        want = "max" if isinstance(v.op, ast.Sub) else ("min" if isinstance(v.op, ast.Add) else None)
        return want is not None and _finfo_of(v.left, base, ctx) == want
    return _finfo_of(v, base, ctx) in ("max", "min")


def _finfo_of(v: ast.expr, base: str, ctx: Context) -> Optional[str]:
    """"max" / "min" for `torch.finfo(base.dtype).max` / `.min`, else None."""
    if isinstance(v, ast.Attribute) and isinstance(v.value, ast.Call) and len(v.value.args) == 1:
        call = v.value
        arg = call.args[0]
        if (ctx.symbols.qualify(call.func) or "") == "torch.finfo" and isinstance(arg, ast.Attribute) \
                and arg.attr == "dtype" and isinstance(arg.value, ast.Name) and arg.value.id == base:
            return v.attr
    return None


def _float_known(site: Site, base: str, ctx: Context) -> bool:
    """A static conjunct of the condition proves `base` a floating-point tensor:
    `base.dtype == torch.float16`, `base.dtype in (torch.float16, torch.bfloat16)`,
    `base.is_floating_point()`, `torch.is_floating_point(base)`."""
    return any(_proves_float(t, base, ctx) for t in site.static_test)


def _proves_float(t: ast.expr, base: str, ctx: Context) -> bool:
    is_base_dtype = lambda e: isinstance(e, ast.Attribute) and e.attr == "dtype" and \
        isinstance(e.value, ast.Name) and e.value.id == base  # noqa: E731
    is_float = lambda e: (ctx.symbols.qualify(e) or "").startswith("torch.") and \
        (ctx.symbols.qualify(e) or "").split(".")[-1] in FLOAT_DTYPES and \
        (ctx.symbols.qualify(e) or "").count(".") == 1  # noqa: E731
    if isinstance(t, ast.BoolOp) and isinstance(t.op, ast.And):
        return any(_proves_float(v, base, ctx) for v in t.values)
    if isinstance(t, ast.Compare) and len(t.ops) == 1:
        left, op, right = t.left, t.ops[0], t.comparators[0]
        if isinstance(op, ast.Eq):
            return (is_base_dtype(left) and is_float(right)) or (is_base_dtype(right) and is_float(left))
        if isinstance(op, ast.In) and is_base_dtype(left) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
            return bool(right.elts) and all(is_float(e) for e in right.elts)
        return False
    if isinstance(t, ast.Call) and not t.keywords:
        if isinstance(t.func, ast.Attribute) and t.func.attr == "is_floating_point" and not t.args \
                and isinstance(t.func.value, ast.Name) and t.func.value.id == base:
            return True
        if (ctx.symbols.qualify(t.func) or "") == "torch.is_floating_point" and len(t.args) == 1 \
                and isinstance(t.args[0], ast.Name) and t.args[0].id == base:
            return True
    return False


# Tensor calls that never raise, whatever the dtype and shape (empty and 0-dim included)
NEVER_RAISE = frozenset({"any", "all", "sum", "isnan", "isinf", "isfinite", "logical_not", "logical_and",
                         "logical_or", "bool", "float", "double", "count_nonzero", "isposinf", "isneginf"})


def _never_raises(e: ast.expr, env) -> bool:
    """Computing `e` cannot fail for any input (so it may run where `and`/`or` would have skipped
    it): comparisons and logical ops of names, constants and NEVER_RAISE calls; `mean` of a
    `.float()`."""
    if isinstance(e, (ast.Constant, ast.Name)) or env.kind(e) is Kind.STATIC and not _may_raise(e):
        return True
    if isinstance(e, ast.Compare):
        return all(_never_raises(v, env) for v in [e.left, *e.comparators])
    if isinstance(e, ast.BoolOp):
        return all(_never_raises(v, env) for v in e.values)
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.Not, ast.Invert)):
        return _never_raises(e.operand, env)
    if isinstance(e, ast.Call) and not e.keywords:
        name = e.func.attr if isinstance(e.func, ast.Attribute) else getattr(e.func, "id", "")
        if isinstance(e.func, ast.Attribute) and env.kind(e.func.value) is Kind.TENSOR:
            recv = e.func.value
            if name == "mean" and not e.args and isinstance(recv, ast.Call) \
                    and isinstance(recv.func, ast.Attribute) and recv.func.attr in ("float", "double"):
                return _never_raises(recv, env)
            if name in NEVER_RAISE and not e.args:
                return _never_raises(recv, env)
            return False
        q = env.symbols.qualify(e.func) or ""
        return q.startswith("torch.") and name in NEVER_RAISE and all(_never_raises(a, env) for a in e.args)
    return False


def condition_problem(e: ast.expr, env) -> Optional[str]:
    """Why the condition cannot become one tensor built with logical_and/or/not (None: it can)."""
    for n in ast.walk(e):
        if isinstance(n, ast.BoolOp):
            for v in n.values[1:]:
                if not _never_raises(v, env):
                    return (f"`{ast.unparse(v)}` runs only when the and/or before it lets it; as "
                            "torch.logical_and/or it would always run, and it may raise for some input "
                            "(e.g. max() of an empty tensor)")
        if isinstance(n, ast.Compare) and len(n.ops) > 1 and env.kind(n) is not Kind.STATIC:
            return ("a chained comparison of tensors (`a < b < c`) takes a tensor's truth in Python; "
                    "write `(a < b) & (b < c)`")
        if isinstance(n, ast.BoolOp) and env.kind(n) is not Kind.STATIC:
            for v in n.values:
                if env.kind(v) is not Kind.TENSOR:
                    return (f"`{ast.unparse(v)}` is not a tensor: and/or cannot combine it with tensors "
                            "into one tensor condition (a static test can come first, joined by `and`)")
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not) and env.kind(n) is not Kind.STATIC \
                and env.kind(n.operand) is not Kind.TENSOR:
            return f"`{ast.unparse(n)}` negates a value that is not provably a tensor"
    return None


def judge(site: Site, ctx: Context, env) -> Verdict:
    torch_name = ctx.torch_name()
    if torch_name is None:
        return Verdict.decline("`torch` is not imported under that name in this file")
    if site.extracted is not None and site.extracted.decline:
        return Verdict.decline(site.extracted.decline)
    verdict = _judge(site, ctx, env, torch_name)
    caveat = site.extracted.caveat if site.extracted is not None else None
    if caveat and verdict.applicability is Applicability.SAFE:
        return Verdict(Applicability.UNSAFE, verdict.title, caveat)
    if caveat and verdict.applicability is Applicability.UNSAFE:
        return Verdict(Applicability.UNSAFE, verdict.title, f"{verdict.reason}; and {caveat}")
    return verdict


def _judge(site: Site, ctx: Context, env, torch_name: str) -> Verdict:
    plan, why = _plan(site, env)
    if plan is None:
        return Verdict.decline(why)
    if plan.expr is None and not ctx.owns_lines(site.node):
        return Verdict.decline("the if statement shares its line with other code")
    if not plan.gated and plan.buffer is None:
        for name, t, f in (plan.assigns or [(None, *(plan.ret or plan.expr or (None, None)))]):
            if any(isinstance(v, ast.Constant) and v.value is None for v in (t, f)):
                what = f"`{name}`" if name else "the value"
                return Verdict.decline(
                    f"a branch makes {what} None and the other a tensor: whether it is None depends on "
                    "tensor values (later `is None` tests read that in Python); torch.where and "
                    "torch.cond need tensors on both sides")
    if not _is_single_element(site.test, site, ctx, env):
        if site.extracted is not None:  # `if epoch.item() <= 0:` (ema-pytorch, realcode round 10)
            return Verdict.decline(
                f"{' and '.join(site.extracted.details)} raises when the tensor holds several elements; "
                "nothing here proves it holds one, and torch.where would broadcast instead")
        return Verdict.decline("the condition may hold several elements; Python raises on that, "
                               "torch.where would broadcast instead")
    if env.kind(site.test) is not Kind.TENSOR or _has_python_bool(site.test, ctx):
        return Verdict.decline("the condition is a Python bool read from tensors (torch.equal/allclose)")
    why = condition_problem(site.test, env)
    if why:
        return Verdict.decline(why)
    if plan.gated:
        from graphmend.rules import defer
        for inner in plan.gated:
            v = defer.judge(inner, ctx, env)
            if v.applicability is not Applicability.SAFE:
                return Verdict.decline(f"the {inner.detail} in the branch cannot be deferred: {v.reason}")
            for a in [*inner.node.args, *(k.value for k in inner.node.keywords)]:
                why = _message_ok(a, ctx, env)
                if why:
                    return Verdict.decline(why + "; the arguments would be evaluated on both paths")
        return Verdict(Applicability.SAFE, "Defer the branch's messages, gated on the condition")
    if plan.buffer is not None:
        _, t, f = plan.buffer
        for side in (t, f):
            why = _side_ok(side, site, ctx, env)
            if why:
                return Verdict.decline(why)
        return Verdict(Applicability.UNSAFE, "Update the buffer with torch.where",
                       "both branches' module set-up now runs on every call (e.g. a cached table is "
                       "computed even when unused) and the buffer becomes a new tensor instead of an "
                       "alias of one of the two; the values match when both have the same shape")
    pairs = plan.assigns and [(t, f) for _, t, f in plan.assigns] or [plan.ret or plan.expr]
    for t, f in pairs:
        for side in (t, f):
            if side is None or env.kind(side) is not Kind.TENSOR:
                what = "None" if side is None or (isinstance(side, ast.Constant) and side.value is None) \
                    else "not provably a tensor"
                return Verdict.decline(f"a branch value is {what}; torch.where needs tensors on both sides")
    for t, f in pairs:
        why = _different_shapes(t, f, env) or _different_shapes(f, t, env)
        if why:
            return Verdict.decline(why)
    if _needs_cond(pairs, site, ctx, env):
        why = _cond_illegal(pairs, ctx, env)
        if why:
            return Verdict.decline(why)
        return Verdict(Applicability.UNSAFE, "Rewrite the branch as torch.cond", COND_CAVEATS)
    same = True
    temps = {s.targets[0].id: s.value for s in plan.hoisted}
    for name_t_f in (plan.assigns or [(None, *pairs[0])]):
        _, t, f = name_t_f
        base = t.id if isinstance(t, ast.Name) else (f.id if isinstance(f, ast.Name) else None)
        if base is None:
            same = False
            break
        fk = _float_known(site, base, ctx)
        if not (_preserves(t, base, ctx, env, fk, temps) and _preserves(f, base, ctx, env, fk, temps)):
            same = False
    if same:
        return Verdict(Applicability.SAFE, "Rewrite the branch as torch.where")
    return Verdict(Applicability.UNSAFE, "Rewrite the branch as torch.where", UNSAFE_WHERE)


# torch functions whose result is longer than, or of a higher rank than, each tensor they join


def _different_shapes(side: ast.expr, other: ast.expr, env) -> Optional[str]:
    """Why `side` provably has another shape than `other` (None: not proven): it joins `other`
    with more (`torch.cat([acc, row])`, botorch's `prune_candidates`, realcode round 8) or adds a
    dimension to it (`x.unsqueeze(0)`). torch.where would broadcast one into the other or raise,
    where the original gave a tensor of the other shape; the shape depends on the condition, so
    torch.cond cannot take it either."""
    if not isinstance(side, ast.Call):
        return None
    same = ast.dump(other)
    q = env.qualify(side.func) or ""
    if q.startswith("torch.") and q.rsplit(".", 1)[-1] in JOINS and side.args \
            and isinstance(side.args[0], (ast.List, ast.Tuple)) \
            and any(ast.dump(e) == same for e in side.args[0].elts):
        how = f"`{ast.unparse(side.func)}` joins `{ast.unparse(other)}` with more"
    elif isinstance(side.func, ast.Attribute) and side.func.attr == "unsqueeze" \
            and ast.dump(side.func.value) == same:
        how = f"`.unsqueeze` adds a dimension to `{ast.unparse(other)}`"
    else:
        return None
    return (f"the branches give tensors of different shapes ({how}): torch.where would broadcast one into "
            "the other or raise, and torch.cond needs both branches to have one shape; a shape that "
            "depends on a tensor's value cannot be in one graph")


COND_CAVEATS = ("a branch may only run under its predicate, so this uses torch.cond, which traces both "
                "branches (Python side effects in them run while tracing), needs both to return tensors "
                "of the same dtype and rank, and compiles on its first eager call")


def _needs_cond(pairs, site: Site, ctx: Context, env) -> bool:
    """A side is not safe or cheap to evaluate on the path not taken (a module call, indexing)."""
    return any(_side_ok(side, site, ctx, env) for t, f in pairs for side in (t, f))


def _cond_illegal(pairs, ctx: Context, env) -> Optional[str]:
    """What keeps torch.cond from taking these branches (None when it can)."""
    for t, f in pairs:
        for side in (t, f):
            for n in ast.walk(side):
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr.endswith("_") \
                        and not n.func.attr.startswith("_"):
                    return f"`{ast.unparse(n.func)}` updates a tensor in place, which torch.cond does not allow"
                if isinstance(n, (ast.Lambda, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)):
                    return f"a `{type(n).__name__}` expression cannot move into a torch.cond branch"
                if isinstance(n, ast.Call):
                    why = _cond_call_problem(n, ctx, env)
                    if why:
                        return why
    return None


def _made_here(e: ast.expr, env) -> bool:
    """`e` is made by the helper's own code, every call of which is checked: a local (its
    parameters are tensors there), a constant, or a call (itself checked), operation, item or
    attribute of such."""
    if isinstance(e, ast.Call):
        return True
    if isinstance(e, ast.BinOp):
        return _made_here(e.left, env) and _made_here(e.right, env)
    if isinstance(e, (ast.Subscript, ast.Attribute)):
        return _made_here(e.value, env)
    return isinstance(e, ast.Constant) or (isinstance(e, ast.Name) and e.id in env.locals)


def _helper_traces(fi, ctx: Context, depth: int) -> Optional[str]:
    """Why the function `fi` of this file might not trace in one graph (None: it does, as far as
    can be shown): its walk with every parameter a tensor finds a break, or it calls anything
    `_cond_call_problem` does not take, or it is a generator, decorated, raises or catches."""
    from graphmend.analysis.detect import FunctionWalker

    node = fi.node
    if depth >= 3:
        return "it calls too deep to follow"
    if node.decorator_list or isinstance(node, ast.AsyncFunctionDef):
        return f"`{fi.qualname}` is decorated"
    for n in fast_walk(node):
        if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await, ast.Raise, ast.Try, ast.Global, ast.Nonlocal)):
            return f"`{fi.qualname}` has a `{type(n).__name__.lower()}`"
    a = node.args
    params = [p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]]
    walker = FunctionWalker(ctx.symbols, fi, {p: ("torch.cond", "", p) for p in params})
    try:
        walker.run()
    except RecursionError:
        return f"`{fi.qualname}` is too deep to walk"
    if walker.sites:
        first = walker.sites[0]
        return f"`{fi.qualname}` breaks the graph at line {first.node.lineno} ({first.code})"
    for c in fi.calls:
        found = _call_cause(c, ctx, walker.env, depth + 1)
        if found:
            return found[0]
    return None


# Python builtins a torch.cond branch may call: they trace (on the Python values they are given)
_COND_BUILTINS = frozenset({"len", "min", "max", "abs", "tuple", "list", "range", "isinstance", "round"})
# Results read from tensor values or of a data-dependent shape: torch.cond cannot trace them
_COND_DATA = DYNAMIC_SHAPE_FUNCS | SCALAR_METHODS | TORCH_DATA_BOOL
_NN_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})  # they run the user's modules


_COND_ONE_GRAPH = ("torch.cond traces both branches in one graph even when called eagerly: a break there "
                   "would raise on every call")


def _cond_call_problem(call: ast.Call, ctx: Context, env) -> Optional[str]:
    """Why torch.cond cannot take `call` in a branch (None when it can): `_call_cause`, said
    with what it means for torch.cond."""
    found = _call_cause(call, ctx, env, 0)
    if found is None:
        return None
    cause, may_break = found
    return f"{cause}, and {_COND_ONE_GRAPH}" if may_break else cause


def _call_cause(call: ast.Call, ctx: Context, env, depth: int) -> Optional[tuple[str, bool]]:
    """Why torch.cond cannot trace `call` in a branch (None when it can): the cause, and whether
    it is code that may break the graph (else a value torch.cond cannot take). torch.cond traces both
    branches into one graph even when called eagerly, so a graph break in either raises on every
    call (torchcde's `if torch.isnan(x).any(): x = _fill(x)`, where `_fill` uses masked_select).
    Only what is known to trace is taken: torch's functions and a tensor's methods (not those
    with a data-dependent result), torch.nn's own modules held by the module, a few builtins,
    and this file's functions and methods whose bodies take only these (`_helper_traces`).
    Anything else, other modules' code and the user's own modules included, is code the
    analysis cannot show to trace without a break (it reports breaks; it does not prove their
    absence)."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else (func.id if isinstance(func, ast.Name) else "")
    text = ctx.src(func)
    if name in _COND_DATA:
        return (f"`{text}(...)` has a result read from tensor values or of a data-dependent shape; torch.cond "
                f"traces both branches in one graph and cannot take it", False)
    q = env.qualify(func) or ""
    if q in ("int", "float", "bool", "complex") and call.args and env.kind(call.args[0]) is not Kind.STATIC:
        return f"`{ctx.src(call)}` reads a tensor's value into Python, which torch.cond cannot trace", False
    if q.startswith("torch.") or q in _COND_BUILTINS or q.startswith("math."):
        return None
    local = None
    if isinstance(func, ast.Name) and func.id not in env.locals:
        local = ctx.symbols.functions.get(func.id)
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self" \
            and env.cls is not None:
        local = env.cls.methods.get(func.attr)
    if local is not None:
        why = _helper_traces(local, ctx, depth)
        return None if why is None else (f"`{text}(...)` may not trace without a graph break ({why})", True)
    if isinstance(func, ast.Attribute):
        if env.receiver_kind(func.value) is Kind.TENSOR:
            return None
        if depth > 0 and _made_here(func.value, env):
            return None  # in a helper: a method of a value its own (checked) code made
        cls = env.cls
        if isinstance(func.value, ast.Name) and func.value.id == "self" and cls is not None \
                and func.attr not in cls.methods:
            ctor = cls.attr_ctors.get(func.attr) or ""
            if ctor.startswith("torch.nn.") and ctor.rsplit(".", 1)[-1] not in _NN_CONTAINERS:
                return None  # `self.proj(x)` of an nn.Linear
    return f"`{text}(...)` is code the analysis cannot show to trace without a graph break", True


def _cond_branch(e: ast.expr, ctx: Context) -> str:
    """A torch.cond branch must not return its input itself: a bare name is cloned."""
    src = ctx.src(e)
    return f"{src}.clone()" if isinstance(e, (ast.Name, ast.Attribute)) else src


def _cond_expr(c: str, sides_t: list[ast.expr], sides_f: list[ast.expr], ctx: Context, torch_name: str) -> str:
    def pack(sides):
        parts = [_cond_branch(e, ctx) for e in sides]
        return parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ")"
    return f"{torch_name}.cond({c}, lambda: {pack(sides_t)}, lambda: {pack(sides_f)})"


def _has_python_bool(e: ast.expr, ctx: Context) -> bool:
    for n in ast.walk(e):
        if isinstance(n, ast.Call):
            q = ctx.symbols.qualify(n.func) or ""
            if q in ("torch.equal", "torch.allclose", "torch.is_nonzero"):
                return True
    return False


def _is_bool(e: ast.expr, ctx: Context, env) -> bool:
    """The condition is a bool tensor already (a comparison, logical op, any/all, isnan...)."""
    if isinstance(e, (ast.Compare, ast.BoolOp)) or (isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not)):
        return True
    if isinstance(e, ast.Call):
        name = e.func.attr if isinstance(e.func, ast.Attribute) else getattr(e.func, "id", "")
        if name in ("any", "all"):  # bool, except of a uint8 tensor (uint8 then)
            inner = e.func.value if isinstance(e.func, ast.Attribute) and \
                env.kind(e.func.value) is Kind.TENSOR else (e.args[0] if e.args else None)
            return inner is not None and _is_bool(inner, ctx, env)
        return name in ("isnan", "isinf", "isfinite", "logical_and", "logical_or",
                        "logical_not", "eq", "ne", "gt", "lt", "ge", "le", "bool")
    return False


def cond_src(e: ast.expr, ctx: Context, torch_name: str, site: Optional[Site] = None, env=None) -> str:
    """A tensor condition as a tensor expression: `and/or/not` become logical_* calls; a name
    that may hold a Python value instead (`maybe_python`) goes through torch.as_tensor."""
    if isinstance(e, ast.BoolOp):
        fn = "logical_and" if isinstance(e.op, ast.And) else "logical_or"
        vals = [cond_src(v, ctx, torch_name, site, env) for v in e.values]
        out = vals[0]
        for v in vals[1:]:
            out = f"{torch_name}.{fn}({out}, {v})"
        return out
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        return f"{torch_name}.logical_not({cond_src(e.operand, ctx, torch_name, site, env)})"
    s = ctx.src(e)
    if site is not None and env is not None and maybe_python(e, site, env):
        return f"{torch_name}.as_tensor({s})"
    return s


def maybe_python(e: ast.expr, site: Site, env) -> bool:
    """A name the walk types as a tensor that may hold a Python value: bound in the function to
    an and/or or a conditional expression that can give a value which is not a tensor
    (pytorch-crf's `no_empty_seq = not self.batch_first and mask[0].all()` is False when
    batch_first is set): `torch.logical_not` and `torch.where` take tensors only."""
    if not isinstance(e, ast.Name):
        return False
    for n in fast_walk(site.func.node):
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None and any(
                isinstance(t, ast.Name) and t.id == e.id for t in (n.targets if isinstance(n, ast.Assign) else [n.target])) \
                and _gives_python(n.value, env):
            return True
    return False


def _gives_python(v: ast.expr, env, depth: int = 0) -> bool:
    if depth > 8:
        return True
    if isinstance(v, ast.BoolOp):  # `a and b` is a when a is falsy (`or`: truthy)
        return any(env.kind(x) is not Kind.TENSOR for x in v.values[:-1]) or _gives_python(v.values[-1], env, depth + 1)
    if isinstance(v, ast.IfExp):
        return any(env.kind(x) is not Kind.TENSOR or _gives_python(x, env, depth + 1) for x in (v.body, v.orelse))
    return False


def fix(site: Site, ctx: Context, env, span_of) -> Optional[list[TextEdit]]:
    plan, _ = _plan(site, env)
    torch_name = ctx.torch_name()
    c = cond_src(site.test, ctx, torch_name, site, env)
    node = site.node
    pairs = plan.assigns and [(t, f) for _, t, f in plan.assigns] or [plan.ret or plan.expr]
    use_cond = not plan.gated and plan.buffer is None and _needs_cond(pairs, site, ctx, env)
    cb = c if _is_bool(site.test, ctx, env) else f"({c}).bool()"  # where/cond take a bool tensor

    def select(t, f):
        if use_cond:
            return _cond_expr(cb, [t], [f], ctx, torch_name)
        return f"{torch_name}.where({cb}, {ctx.src(t)}, {ctx.src(f)})"

    if plan.expr is not None:
        t, f = plan.expr
        if site.static_test:  # `A if S and c else B`: S false still gives B
            static = " and ".join(ctx.src(s) for s in site.static_test)
            return [*_undo_reads(site, ctx, span_of),
                    TextEdit(span_of(node), f"({select(t, f)} if {static} else {ctx.src(f)})")]
        return [*_undo_reads(site, ctx, span_of), TextEdit(span_of(node), select(t, f))]
    ind = ctx.indent_of(node)
    inner = ind + ("    " if site.static_test else "")
    lines = [f"{ind}{cm}" for cm in ctx.comments_in(node)]
    if site.static_test:
        lines.append(f"{ind}if {' and '.join(ctx.src(t) for t in site.static_test)}:")
    for s in plan.hoisted:
        lines.append(f"{inner}{ctx.src(s)}")
    if plan.gated:
        from graphmend.rules import defer
        for eff in plan.gated:
            new = defer.call_text(eff, ctx, env, when=c)
            if not new:
                return None
            lines.append(f"{inner}{new}")
    if plan.buffer is not None:
        for s in plan.prelude:
            lines += [inner + ln[len(ctx.indent_of(s)):] if ln.strip() else ln
                      for ln in ctx.src_lines(s)]
        call, t, f = plan.buffer
        args = [ctx.src(call.args[0]), f"{torch_name}.where({cb}, {ctx.src(t)}, {ctx.src(f)})"]
        args += [ctx.src(k) if k.arg is None else f"{k.arg}={ctx.src(k.value)}" for k in call.keywords]
        lines.append(f"{inner}self.register_buffer({', '.join(args)})")
    elif plan.ret is not None:
        t, f = plan.ret
        lines.append(f"{inner}return {select(t, f)}")
        if site.static_test:
            # `if S and c: return A` then `return B` (or `else: return B`): S false must still
            # return B
            lines.append(f"{ind}return {ctx.src(plan.ret[1])}")
    else:
        if use_cond and plan.assigns:  # one torch.cond for all the names: each branch runs once
            names = ", ".join(n for n, _, _ in plan.assigns)
            lines.append(f"{inner}{names} = " + _cond_expr(
                cb, [t for _, t, _ in plan.assigns], [f for _, _, f in plan.assigns], ctx, torch_name))
        elif _reads_assigned(site.test, plan.assigns):
            # the condition or a value reads a name another where assigns: one tuple assignment,
            # so that every where reads the values from before the if, as the branch did
            names = ", ".join(n for n, _, _ in plan.assigns)
            lines.append(f"{inner}{names} = (" + ", ".join(select(t, f) for _, t, f in plan.assigns) + ",)")
        else:
            for name, t, f in plan.assigns:
                lines.append(f"{inner}{name} = {select(t, f)}")
        if site.static_test and node.orelse:
            # `if S and c: X else: Y` -- when S is false the else branch ran: keep it
            lines.append(f"{ind}else:")
            for s in node.orelse:
                lines.append(f"{inner}{ctx.src(s)}")
    end_node = plan.remove_next if (plan.remove_next is not None and not site.static_test) else node
    if plan.remove_next is not None and site.static_test:
        end_node = plan.remove_next
    return [*_undo_reads(site, ctx, span_of),
            TextEdit(span_of(node, (node.lineno, 0), (end_node.end_lineno, None)), "\n".join(lines))]


def _reads_assigned(test: ast.expr, assigns: list) -> bool:
    """Assigned one after another, would a where read what an earlier one of them assigned: the
    condition reads an assigned name (`if x.max() > 0: x = x / 2; z = ...`), or a value reads a
    name assigned by another of them (`z = x + 1; x = x / 2`, emitted in name order)."""
    if len(assigns) < 2:
        return False
    names = {n for n, _, _ in assigns}
    if any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(test)):
        return True
    return any(isinstance(n, ast.Name) and n.id in names - {name}
               for name, t, f in assigns for side in (t, f) for n in ast.walk(side))


def _undo_reads(site: Site, ctx: Context, span_of) -> list[TextEdit]:
    """`flag = mask.any().item()` (read only by this branch) -> `flag = mask.any()`."""
    if site.extracted is None:
        return []
    return [TextEdit(span_of(call), ctx.src(tensor)) for call, tensor in site.extracted.bindings]


EXAMPLES = [
    Example(
        "the fp16 overflow clamp of BART-style models",
        "import torch\nfrom torch import nn\n\nclass Layer(nn.Module):\n    def forward(self, hidden_states):\n"
        "        hidden_states = hidden_states * 2\n"
        "        if hidden_states.dtype == torch.float16 and (\n"
        "            torch.isinf(hidden_states).any() or torch.isnan(hidden_states).any()\n        ):\n"
        "            clamp_value = torch.finfo(hidden_states.dtype).max - 1000\n"
        "            hidden_states = torch.clamp(hidden_states, min=-clamp_value, max=clamp_value)\n"
        "        return hidden_states\n",
        ["GM201"],
        "import torch\nfrom torch import nn\n\nclass Layer(nn.Module):\n    def forward(self, hidden_states):\n"
        "        hidden_states = hidden_states * 2\n"
        "        if hidden_states.dtype == torch.float16:\n"
        "            clamp_value = torch.finfo(hidden_states.dtype).max - 1000\n"
        "            hidden_states = torch.where(\n"
        "                torch.logical_or(\n"
        "                    torch.isinf(hidden_states).any(), torch.isnan(hidden_states).any()\n"
        "                ),\n"
        "                torch.clamp(hidden_states, min=-clamp_value, max=clamp_value),\n"
        "                hidden_states,\n"
        "            )\n"
        "        return hidden_states\n"),
    Example(
        "if/else assigning the same name: unsafe, shapes not proven equal",
        "import torch\n\n@torch.compile\ndef f(x, y: torch.Tensor):\n    if x.sum() > 0:\n        z = x * 2\n    else:\n"
        "        z = y - 1\n    return z\n",
        ["GM201"],
        "import torch\n\n@torch.compile\ndef f(x, y: torch.Tensor):\n    z = torch.where(x.sum() > 0, x * 2, y - 1)\n    return z\n",
        unsafe=True),
    Example(
        "a LongRoPE-style buffer switch (unsafe: both set-ups run, the buffer is a new tensor)",
        "import torch\nfrom torch import nn\n\nclass Rope(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.register_buffer('inv_freq', torch.ones(4), persistent=False)\n"
        "        self.original_inv_freq = self.inv_freq\n\n"
        "    def forward(self, x, position_ids: torch.Tensor):\n        seq_len = torch.max(position_ids) + 1\n"
        "        if seq_len > 8:\n            if not hasattr(self, 'long_inv_freq'):\n"
        "                self.long_inv_freq = torch.full((4,), 0.5)\n"
        "            self.register_buffer('inv_freq', self.long_inv_freq, persistent=False)\n        else:\n"
        "            self.original_inv_freq = self.original_inv_freq.to(x.device)\n"
        "            self.register_buffer('inv_freq', self.original_inv_freq, persistent=False)\n"
        "        return x * self.inv_freq\n",
        ["GM201"],
        "import torch\nfrom torch import nn\n\nclass Rope(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.register_buffer('inv_freq', torch.ones(4), persistent=False)\n"
        "        self.original_inv_freq = self.inv_freq\n\n"
        "    def forward(self, x, position_ids: torch.Tensor):\n        seq_len = torch.max(position_ids) + 1\n"
        "        if not hasattr(self, 'long_inv_freq'):\n"
        "            self.long_inv_freq = torch.full((4,), 0.5)\n"
        "        self.original_inv_freq = self.original_inv_freq.to(x.device)\n"
        "        self.register_buffer(\n"
        "            'inv_freq',\n"
        "            torch.where(seq_len > 8, self.long_inv_freq, self.original_inv_freq),\n"
        "            persistent=False,\n"
        "        )\n"
        "        return x * self.inv_freq\n",
        unsafe=True),
    Example(
        "a branch that only warns: the warning is deferred, gated on the condition",
        "import warnings\nimport torch\n\n@torch.compile\ndef f(x: torch.Tensor):\n    if x.abs().max() > 1e4:\n"
        "        warnings.warn(f'large activations in {x.shape}', RuntimeWarning)\n    return x * 2\n",
        ["GM201", "GM103"],
        "import warnings\nimport torch\nimport _graphmend_runtime as graphmend\n\n@torch.compile\ndef f(x: torch.Tensor):\n"
        "    graphmend.warn_if(\n"
        "        x.abs().max() > 1e4, f'large activations in {x.shape}', RuntimeWarning\n"
        "    )\n"
        "    return x * 2\n"),
    Example(
        "declined: the condition may have several elements",
        "import torch\n\n@torch.compile\ndef f(x: torch.Tensor):\n    if x > 0:\n        x = x + 1\n    return x\n",
        ["GM201"], None),
    Example(
        "declined: an `and` outside a condition takes the truth of its tensor operand (POT)",
        "import torch\n\n@torch.compile\ndef f(x: torch.Tensor, a: torch.Tensor):\n"
        "    is_perm = (x.shape[0] == a.shape[0]) and (a == a.mean()).all() and (a > 0).all()\n"
        "    return x * 2, is_perm\n",
        ["GM201"], None),
    Example(
        "declined: `not` outside a condition reads the tensor's truth into a Python bool (xitorch's RK45)",
        "import torch\n\n@torch.compile\ndef f(x: torch.Tensor):\n"
        "    accepted = x.norm() < 1\n    rejected = not accepted\n    y = x * 2\n    if rejected:\n"
        "        y = y + 1\n    return y\n",
        ["GM201"], None),
    Example(
        "declined: a branch makes the value None (its None-ness depends on tensor values)",
        "import torch\n\n@torch.compile\ndef f(x: torch.Tensor, pos: torch.Tensor, mask: torch.Tensor):\n"
        "    keep = mask\n    if pos[0] > 0:\n        keep = None\n    if keep is not None:\n"
        "        x = x * keep\n    return x\n",
        ["GM201"], None),
    Example(
        "a branch calls a submodule: torch.cond runs only the taken branch (unsafe)",
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.proj = nn.Linear(4, 4)\n\n    def forward(self, x):\n"
        "        if x.abs().max() > 1:\n            x = self.proj(x)\n        return x\n",
        ["GM201"],
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.proj = nn.Linear(4, 4)\n\n    def forward(self, x):\n"
        "        x = torch.cond(x.abs().max() > 1, lambda: self.proj(x), lambda: x.clone())\n        return x\n",
        unsafe=True),
    Example(
        "declined: a branch updates a tensor in place (torch.cond forbids it)",
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.proj = nn.Linear(4, 4)\n\n    def forward(self, x):\n"
        "        if x.abs().max() > 1:\n            x = self.proj(x).clamp_(0, 1)\n        return x\n",
        ["GM201"], None),
    Example(
        "not flagged: conditions Dynamo decides while tracing",
        "import torch\n\n@torch.compile\ndef f(x, mask=None):\n    if mask is not None and x.shape[0] > 1:\n"
        "        x = x * mask\n    if x.dtype == torch.float16:\n        x = x.float()\n    return x\n",
        [], None),
    Example(
        "the condition reads the tensor into Python (`.item()`): mended as the tensor condition",
        "import torch\n\n@torch.compile\ndef f(h: torch.Tensor):\n    if h.mean().item() > 0.5:\n"
        "        h = h * 0.5\n    return h\n",
        ["GM201"],
        "import torch\n\n@torch.compile\ndef f(h: torch.Tensor):\n    h = torch.where(h.mean() > 0.5, h * 0.5, h)\n"
        "    return h\n",
        unsafe=True),
    Example(
        "declined: `int()` in the condition truncates (and raises on nan/inf)",
        "import torch\n\n@torch.compile\ndef f(h: torch.Tensor):\n    if int(h.sum()) > 2:\n"
        "        h = h * 0.5\n    return h\n",
        ["GM201"], None),
]
