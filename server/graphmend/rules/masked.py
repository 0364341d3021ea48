"""Boolean-mask code with a fixed-shape equivalent (GM602-GM604): data-dependent shapes that
need no data-dependent shape.

Dynamo (torch 2.13) breaks at every boolean-mask READ, `x[m]` (it lowers to `nonzero`, GB0036),
and at a loop over `nonzero` rows; a masked WRITE of a Python number, `x[m] = 0.0`, is already
one graph (index_put with a boolean mask keeps x's shape), so it is not reported.

GM602 masked reduction
    x[m].sum()            ->  torch.where(m, x, 0).sum()
    x[m].mean()           ->  (torch.where(m, x, 0).sum() / m.sum())
  (also `torch.sum(x[m])`, `torch.mean(x[m])`). Legality: the mask has x's shape (a comparison of
  x with a number or name, `torch.isnan/isinf/isfinite(x)`, `~`, `&`, `|` of such; a name bound to
  one); the reduction is over everything (no `dim`). UNSAFE: a float sum adds the same terms plus
  exact zeros, but in another grouping, so its last bits can differ (integers: exact); `mean` of
  an empty selection is nan in both.

GM603 masked copy / update
    z[m] = y[m]           ->  z.copy_(torch.where(<m over z's leading dims>, y.to(z.dtype), z))
    z[m] += v             ->  z.copy_(torch.where(<m ...>, (z + v).to(z.dtype), z))   (v a number or y[m])
  Legality: z is a name or `self.<attr>` (updated in place, so aliases see the change as before),
  m is a pure mask expression (evaluated once, before the write), v/y free of side effects. The
  values written are cast to z's dtype first, so z's unmasked entries never pass through a
  promoted dtype (an int64 above 2**24 through float32 would lose bits). UNSAFE: on inputs the
  original accepts the result is bitwise equal; where the original raises, the mended write may
  run: a value of another dtype (index_put refuses it: "Index put requires the source and
  destination dtypes match"; the mend casts it) or a mask or value shape that does not match z
  (torch.where may broadcast).

GM604 a loop over nonzero rows that sets entries
    for i in torch.nonzero(c):  z[tuple(i)] = v      ->  z[c] = v
    for i, j in c.nonzero():    z[i, j] = v          ->  z[c] = v
  Legality: the body is that one assignment, v a constant or a name the loop does not assign.
  SAFE when z provably has c's shape (`z = torch.zeros_like(x, ...)` (or ones/full/empty_like)
  and c a comparison of x); otherwise UNSAFE: the loop accepts a c smaller than z, `z[c]` does not.

Everything else declines with the reason (a reduction over a dimension, a mask whose shape is
not provably x's, a value that depends on the row).
"""

from __future__ import annotations

import ast
from typing import Optional

from graphmend.analysis.astwalk import walk as fast_walk  # ast.walk's nodes and order, without contexts/operators
from graphmend.analysis.detect import Site
from graphmend.analysis.symbols import single_assignments
from graphmend.findings import Applicability, TextEdit
from graphmend.rules.base import claim_safely, Context, Example, Verdict

CODES = ("GM602", "GM603", "GM604")
MASK_FUNCS = frozenset({"isnan", "isinf", "isfinite", "isneginf", "isposinf", "logical_not"})
LIKE = frozenset({"zeros_like", "ones_like", "full_like", "empty_like"})
UNSAFE_SUM = ("sums the same terms plus exact zeros in another grouping: a float result can differ in its "
              "last bits (integers are exact)")
UNSAFE_COPY = ("bitwise equal wherever the original runs; where the original raises (a value of another "
               "dtype, which the mend casts; a mask or value shape that does not match the target, which "
               "torch.where may broadcast), the mended write runs instead")
UNSAFE_LOOP = ("the loop accepts a condition smaller than the target; `z[c]` needs c to have z's leading "
               "shape (cannot prove it here)")


class Decline(Exception):
    pass


def message(site: Site) -> str:
    what = {"GM602": "a reduction of a boolean-mask selection",
            "GM603": "a masked copy that reads a boolean-mask selection",
            "GM604": "a loop over `nonzero` rows"}[site.code]
    return f"{what} has a data-dependent shape and breaks the graph (GB0036); a fixed-shape form exists"


# --- detection ---------------------------------------------------------------------------------
def _stmts(fn):
    stack = list(reversed(fn.body))
    while stack:
        s = stack.pop()
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        yield s
        for f in ("body", "orelse", "finalbody"):
            stack.extend(reversed([c for c in getattr(s, f, []) if isinstance(c, ast.stmt)]))
        for h in getattr(s, "handlers", []):
            stack.extend(reversed(h.body))


def _reduction(n: ast.AST) -> Optional[tuple[str, ast.Subscript]]:
    """("sum"|"mean", x[m]) for `x[m].sum()`, `torch.sum(x[m])`, ..."""
    if not isinstance(n, ast.Call):
        return None
    f = n.func
    if isinstance(f, ast.Attribute) and f.attr in ("sum", "mean") and isinstance(f.value, ast.Subscript):
        return f.attr, f.value
    if isinstance(f, ast.Attribute) and f.attr in ("sum", "mean") and isinstance(f.value, ast.Name) \
            and f.value.id == "torch" and n.args and isinstance(n.args[0], ast.Subscript):
        return f.attr, n.args[0]
    return None


def _nonzero_iter(e: ast.expr) -> Optional[ast.expr]:
    """c in `torch.nonzero(c)`, `c.nonzero()`, `torch.argwhere(c)`."""
    if not isinstance(e, ast.Call) or e.keywords:
        return None
    f = e.func
    if isinstance(f, ast.Attribute) and f.attr in ("nonzero", "argwhere"):
        if isinstance(f.value, ast.Name) and f.value.id == "torch":
            return e.args[0] if len(e.args) == 1 else None
        return f.value if not e.args else None
    return None


def find(fi, symbols) -> list[tuple[str, ast.AST]]:
    """(code, node) of each pattern in the function (node: the reduction call, the assignment,
    the loop)."""
    out = []
    if not _candidate(fi):
        return out
    masks = _mask_names(fi.node)
    for s in _stmts(fi.node):
        if isinstance(s, ast.For) and _nonzero_iter(s.iter) is not None:
            out.append(("GM604", s))
            continue
        if isinstance(s, (ast.Assign, ast.AugAssign)):
            t = s.targets[0] if isinstance(s, ast.Assign) and len(s.targets) == 1 else getattr(s, "target", None)
            if isinstance(t, ast.Subscript) and _is_mask(t.slice, masks):
                v = s.value
                reads = isinstance(v, ast.Subscript) and ast.dump(v.slice) == ast.dump(t.slice)
                if reads or (isinstance(s, ast.AugAssign) and _breaks_aug(s)):
                    out.append(("GM603", s))
                    continue
        for n in _walk_exprs(s):
            red = _reduction(n)
            if red is not None and _is_mask(red[1].slice, masks):
                out.append(("GM602", n))
    return out


def _candidate(fi) -> bool:
    """Cheap: does the function have a reduction of a subscript or a nonzero call (from the calls
    the module's one traversal collected), or a subscript write (statements only)? Most have none."""
    for n in fi.calls:
        f = n.func
        if isinstance(f, ast.Attribute) and (f.attr in ("nonzero", "argwhere") or (
                f.attr in ("sum", "mean") and (isinstance(f.value, ast.Subscript)
                                               or (n.args and isinstance(n.args[0], ast.Subscript))))):
            return True
    for st in _stmts(fi.node):
        if isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Subscript):
            return True
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Subscript) \
                and isinstance(st.value, ast.Subscript):
            return True
    return False


def _breaks_aug(s: ast.AugAssign) -> bool:
    return True  # `x[m] += v` reads x[m]: a dynamic shape (measured: GB0036)


def _walk_exprs(s: ast.stmt):
    for f in ("value", "test", "iter", "targets", "target", "exc", "msg"):
        v = getattr(s, f, None)
        for e in (v if isinstance(v, list) else [v]):
            if isinstance(e, ast.expr):
                yield from fast_walk(e)


def _mask_names(fn) -> dict[str, ast.expr]:
    """Local names bound once to a mask expression."""
    return {name: v for name, v in single_assignments(fn).items() if _mask_expr(v, {}) is not None}


def _mask_expr(e: ast.expr, masks: dict) -> Optional[list[ast.expr]]:
    """The tensors whose shape the mask has (None: not a pure mask expression)."""
    if isinstance(e, ast.Name) and e.id in masks:
        return _mask_expr(masks[e.id], masks)
    if isinstance(e, ast.Compare) and len(e.ops) == 1 and not isinstance(e.ops[0], (ast.Is, ast.IsNot, ast.In,
                                                                                  ast.NotIn)):
        sides = [e.left, e.comparators[0]]
        if not all(_pure(x) for x in sides):
            return None
        return [x for x in sides if not isinstance(x, (ast.Constant, ast.UnaryOp))]
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in MASK_FUNCS \
            and isinstance(e.func.value, ast.Name) and e.func.value.id == "torch" and len(e.args) == 1 \
            and not e.keywords and _pure(e.args[0]):
        return [e.args[0]]
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Invert):
        return _mask_expr(e.operand, masks)
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.BitAnd, ast.BitOr)):
        a, b = _mask_expr(e.left, masks), _mask_expr(e.right, masks)
        return None if a is None or b is None else a + b
    return None


def _is_mask(e: ast.expr, masks: dict) -> bool:
    return _mask_expr(e, masks) is not None


def _pure(e: ast.expr) -> bool:
    """Names, attributes, constants, arithmetic: evaluating twice is the same as once."""
    for n in ast.walk(e):
        if isinstance(n, (ast.Call, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.Lambda,
                          ast.Subscript)):
            return False
    return True


def claim_sites(sites: list[Site], fi, symbols) -> list[Site]:
    return claim_safely(_claim, sites, fi, symbols)


def _claim(sites: list[Site], fi, symbols) -> list[Site]:
    """Turn the GM402 sites (and the unreported masked reads) of these patterns into GM602-604."""
    out = list(sites)
    for code, node in find(fi, symbols):
        inner = {id(n) for n in ast.walk(node)}
        claimed = [s for s in out if s.code in ("GM401", "GM402") and id(s.node) in inner]
        if any(s.code == "GM601" and s.node is node for s in out):
            continue
        if any(s.code.startswith("GM6") and id(s.node) in inner and s.node is not node for s in out):
            continue  # inside an expert loop [Route] handles
        kinds = dict(claimed[0].kinds) if claimed else {}
        anchor = next((s.node for s in claimed), node.iter if isinstance(node, ast.For) else None)
        new = Site(code, node, fi, kinds, test=anchor, detail=code)
        pos = min((out.index(s) for s in claimed), default=len(out))
        ids = {id(s) for s in claimed}
        out = [s for s in out if id(s) not in ids]
        out.insert(min(pos, len(out)), new)
    return out


# --- legality and the edit ---------------------------------------------------------------------
def _plan(site: Site, ctx: Context):
    node = site.node
    masks = _mask_names(site.func.node)
    tn = ctx.torch_name()
    if tn is None:
        raise Decline("the file does not `import torch`")
    if site.code == "GM602":
        kind, sub = _reduction(node)
        if node.args[1 if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
                     and node.func.value.id == "torch" else 0:] or node.keywords:
            raise Decline("the reduction has arguments (a `dim`, a dtype); only a full `.sum()`/`.mean()` "
                          "of the selection has a fixed-shape form here")
        shapes = _mask_expr(sub.slice, masks)
        x = sub.value
        if not _pure(x):
            raise Decline(f"`{ctx.src(x)}` is not a plain tensor expression (it would be evaluated again)")
        if not any(ast.dump(s) == ast.dump(x) for s in shapes):
            raise Decline(f"cannot prove the mask `{ctx.src(sub.slice)}` has the shape of `{ctx.src(x)}` "
                          "(make it a comparison of that tensor)")
        m = ctx.src(sub.slice)
        text = f"{tn}.where({m}, {ctx.src(x)}, 0).sum()"
        if kind == "mean":
            text = f"({text} / ({m}).sum())"
        return Applicability.UNSAFE, UNSAFE_SUM, [(node, text)], "Sum the masked tensor with torch.where"
    if site.code == "GM603":
        s = node
        t = s.targets[0] if isinstance(s, ast.Assign) else s.target
        z = t.value
        if not (isinstance(z, ast.Name) or (isinstance(z, ast.Attribute) and isinstance(z.value, ast.Name)
                                            and z.value.id == "self")):
            raise Decline(f"the target `{ctx.src(z)}` is not a name or `self.<attr>`")
        if not ctx.owns_lines(s):
            raise Decline("the assignment shares its line with another statement")
        m, zs = ctx.src(t.slice), ctx.src(z)
        pre = ""
        if not isinstance(t.slice, ast.Name):  # evaluate the mask once, before the write
            pre, m = f"gm_mask = {m}\n{ctx.indent_of(s)}", "gm_mask"
        mr = f"{m}.reshape({m}.shape + (1,) * ({zs}.dim() - {m}.dim()))"
        if isinstance(s, ast.Assign):
            y = s.value.value
            if not _pure(y):
                raise Decline(f"`{ctx.src(y)}` is not a plain tensor expression")
            new = f"{ctx.src(y)}.to({zs}.dtype)" if isinstance(y, (ast.Name, ast.Attribute)) else \
                f"({ctx.src(y)}).to({zs}.dtype)"
        else:
            v = s.value
            if isinstance(v, ast.Subscript) and ast.dump(v.slice) == ast.dump(t.slice) and _pure(v.value):
                vv = ctx.src(v.value)
            elif isinstance(v, ast.Constant) or (isinstance(v, ast.UnaryOp) and isinstance(v.operand, ast.Constant)):
                vv = ctx.src(v)
            else:
                raise Decline(f"the update `{ctx.src(v)}` is not a number or a selection with the same mask")
            op = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}.get(type(s.op))
            if op is None:
                raise Decline(f"the update operator `{ast.unparse(s).split()[1]}` is not handled")
            new = f"({zs} {op} {vv}).to({zs}.dtype)"
        text = f"{pre}{zs}.copy_({tn}.where({mr}, {new}, {zs}))"
        return Applicability.UNSAFE, UNSAFE_COPY, [(s, text)], "Write through torch.where (fixed shape)"
    # GM604
    loop: ast.For = node
    c = _nonzero_iter(loop.iter)
    if loop.orelse or len(loop.body) != 1 or not isinstance(loop.body[0], ast.Assign) \
            or len(loop.body[0].targets) != 1 or not isinstance(loop.body[0].targets[0], ast.Subscript):
        raise Decline("the loop body is not one assignment `z[row coordinates] = value`")
    a = loop.body[0]
    t = a.targets[0]
    coords = _coords(loop.target, t.slice)
    if coords is None:
        raise Decline(f"`{ctx.src(t)}` does not index with exactly the row's coordinates")
    v = a.value
    assigned = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    if not (isinstance(v, ast.Constant) or (isinstance(v, ast.Name) and v.id not in assigned)):
        raise Decline(f"the value `{ctx.src(v)}` is not a constant or a name the loop does not assign")
    if not _pure(c):
        raise Decline(f"`{ctx.src(c)}` is not a plain tensor expression")
    if not ctx.owns_lines(loop):
        raise Decline("the loop shares its lines with other statements")
    z = t.value
    text = f"{ctx.src(z)}[{ctx.src(c)}] = {ctx.src(v)}  # every entry of the nonzero rows at once"
    safe = _same_shape(site, z, c, masks)
    return (Applicability.SAFE if safe else Applicability.UNSAFE, None if safe else UNSAFE_LOOP,
            [(loop, text)], "Set the entries with one boolean-mask write")


def _coords(target: ast.expr, sl: ast.expr) -> Optional[bool]:
    if isinstance(target, ast.Name):  # z[tuple(i)]
        if isinstance(sl, ast.Call) and isinstance(sl.func, ast.Name) and sl.func.id == "tuple" \
                and len(sl.args) == 1 and isinstance(sl.args[0], ast.Name) and sl.args[0].id == target.id:
            return True
        return None
    if isinstance(target, ast.Tuple) and all(isinstance(x, ast.Name) for x in target.elts):
        idx = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        if [getattr(i, "id", None) for i in idx] == [x.id for x in target.elts]:
            return True
    return None


def _same_shape(site: Site, z: ast.expr, c: ast.expr, masks) -> bool:
    """z = torch.<zeros|ones|full|empty>_like(x, ...) and c a comparison of x (or a mask of x)."""
    if not isinstance(z, ast.Name):
        return False
    shapes = _mask_expr(c, masks) or []
    binds = [n for n in ast.walk(site.func.node) if isinstance(n, ast.Assign)
             and any(isinstance(t, ast.Name) and t.id == z.id for t in n.targets)]
    if len(binds) != 1:
        return False
    v = binds[0].value
    return (isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr in LIKE
            and v.args and any(ast.dump(v.args[0]) == ast.dump(s) for s in shapes))


def judge(site: Site, ctx: Context, env) -> Verdict:
    try:
        app, why, _, title = _plan(site, ctx)
    except Decline as d:
        return Verdict.decline(str(d))
    except (AttributeError, IndexError, KeyError, TypeError, ValueError) as e:
        return Verdict.decline(f"could not analyse this site ({type(e).__name__}: {e})")
    return Verdict(app, title, why)


def fix(site: Site, ctx: Context, env, span_of) -> Optional[list[TextEdit]]:
    try:
        _, _, repl, _ = _plan(site, ctx)
    except (Decline, AttributeError, IndexError, KeyError, TypeError, ValueError):
        return None
    return [TextEdit(span_of(n), text) for n, text in repl]


_H = "import torch\n\n\n@torch.compile\n"
EXAMPLES = [
    Example("GM602: the sum of the positive entries",
            _H + "def f(x):\n    return x[x > 0].sum()\n", ["GM602"],
            _H + "def f(x):\n    return torch.where(x > 0, x, 0).sum()\n", unsafe=True),
    Example("GM602: the mean over a named mask",
            _H + "def f(x):\n    valid = ~torch.isnan(x)\n    return x[valid].mean()\n", ["GM602"],
            _H + "def f(x):\n    valid = ~torch.isnan(x)\n    return (torch.where(valid, x, 0).sum() / (valid).sum())\n",
            unsafe=True),
    Example("GM602 declined: a mask of another tensor may have another shape",
            _H + "def f(x, y):\n    return x[y > 0].sum()\n", ["GM602"], None),
    Example("GM603: copy the selected entries of another tensor",
            _H + "def f(x, y):\n    x = x.clone()\n    m = y > 0\n    x[m] = y[m]\n    return x\n", ["GM603"],
            _H + "def f(x, y):\n    x = x.clone()\n    m = y > 0\n"
            "    x.copy_(\n"
            "        torch.where(m.reshape(m.shape + (1,) * (x.dim() - m.dim())), y.to(x.dtype), x)\n"
            "    )\n"
            "    return x\n", unsafe=True),
    Example("GM603: a masked in-place update",
            _H + "def f(x):\n    x = x.clone()\n    x[x > 0] += 1.0\n    return x\n", ["GM603"],
            _H + "def f(x):\n    x = x.clone()\n    gm_mask = x > 0\n"
            "    x.copy_(\n"
            "        torch.where(\n"
            "            gm_mask.reshape(gm_mask.shape + (1,) * (x.dim() - gm_mask.dim())),\n"
            "            (x + 1.0).to(x.dtype),\n"
            "            x,\n"
            "        ),\n"
            "    )\n    return x\n", unsafe=True),
    Example("GM604: set mask entries row by row from nonzero (safe: the target has the condition's shape)",
            _H + "def f(x):\n    m = torch.zeros_like(x, dtype=torch.bool)\n"
            "    for i in torch.nonzero(x > 1):\n        m[tuple(i)] = True\n    return m\n", ["GM604"],
            _H + "def f(x):\n    m = torch.zeros_like(x, dtype=torch.bool)\n"
            "    m[x > 1] = True  # every entry of the nonzero rows at once\n    return m\n"),
    Example("GM604 declined: the value depends on the row",
            _H + "def f(x):\n    m = torch.zeros_like(x)\n"
            "    for i in torch.nonzero(x > 1):\n        m[tuple(i)] = i.sum()\n    return m\n", ["GM604"], None),
]
