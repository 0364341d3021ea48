"""A one-hot encoding cut to a fixed width (GM606), as mixture-of-experts code writes it.

    F.one_hot(i, max(i.max() + 1, n))[..., :n]   ->   (i.unsqueeze(-1) == torch.arange(n, device=i.device)).long()

lucidrains' st-moe-pytorch and mixture-of-experts carry this `safe_one_hot` helper ("pytorch one
hot throws an error if there are out of bound indices"): the number of classes is read from the
tensor (`i.max()`), so Dynamo breaks at `one_hot` ("Data dependent operator", GB0033, measured,
torch 2.13), in every layer. Cut to `n` columns, the result does not depend on that number:
column c is 1 exactly where i == c, for c < n. The comparison with `arange(n)` computes the same
int64 tensor with a shape known while tracing.

Legality: the classes are `max(..., n, ...)`, so they are at least `n`, with `n` the slice's upper
bound, the same expression, not a tensor (a Python int while tracing); the slice is `[..., :n]`
(last dimension, from 0, no step); `i` is a plain expression (a name or an attribute: it is read
twice). UNSAFE: for indexes one_hot accepts (non-negative int64, below the number of classes) the
result is bitwise equal; where one_hot raises (a negative index, an index tensor that is not
int64) the mended line returns zeros instead of raising.
"""

from __future__ import annotations

import ast
from typing import Optional

from graphmend.analysis.astwalk import walk as fast_walk  # ast.walk's nodes and order, without contexts/operators
from graphmend.analysis.dataflow import Kind
from graphmend.analysis.detect import Site
from graphmend.findings import Applicability, TextEdit
from graphmend.rules.base import Context, Example, Verdict, claim_safely

CODES = ("GM606",)
ONE_HOT = ("torch.nn.functional.one_hot",)
UNSAFE_WHY = ("for indexes one_hot accepts (non-negative int64 below the number of classes) the result "
              "is bitwise equal; where one_hot raises (a negative index, an index tensor that is not "
              "int64), the mended expression returns zeros instead")


class Decline(Exception):
    pass


def message(site: Site) -> str:
    return ("`one_hot()` with a number of classes read from a tensor, cut to a fixed width, breaks the "
            "graph (its classes are a data-dependent size)")


def _parts(sub: ast.Subscript, symbols) -> Optional[tuple[ast.Call, ast.expr, ast.expr, ast.expr]]:
    """(the one_hot call, the indexes, the classes, the width n) of `one_hot(i, C)[..., :n]`."""
    call = sub.value
    if not (isinstance(call, ast.Call) and (symbols.qualify(call.func) or "") in ONE_HOT):
        return None
    sl = sub.slice
    if not (isinstance(sl, ast.Tuple) and len(sl.elts) == 2 and isinstance(sl.elts[0], ast.Constant)
            and sl.elts[0].value is Ellipsis and isinstance(sl.elts[1], ast.Slice)):
        return None
    cut = sl.elts[1]
    if cut.lower is not None or cut.step is not None or cut.upper is None:
        return None
    classes = call.args[1] if len(call.args) > 1 else \
        next((k.value for k in call.keywords if k.arg == "num_classes"), None)
    if not call.args or classes is None:
        return None
    return call, call.args[0], classes, cut.upper


def _rebound(fn: ast.AST, name: str) -> bool:
    """Whether the function assigns `name` (a parameter or a global stays as it came in)."""
    for b in fast_walk(fn):
        targets = b.targets if isinstance(b, ast.Assign) else [b.target] if isinstance(
            b, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr, ast.comprehension)) else []
        if any(isinstance(t, ast.Name) and t.id == name for x in targets for t in fast_walk(x)):
            return True
    return False


def claim_sites(sites: list[Site], fi, symbols) -> list[Site]:
    return claim_safely(_claim, sites, fi, symbols)


def _claim(sites: list[Site], fi, symbols) -> list[Site]:
    """The GM401 of a one_hot whose result is cut to `[..., :n]` becomes a GM606 on the cut."""
    calls = {id(s.node): s for s in sites if s.code == "GM401" and isinstance(s.node, ast.Call)}
    if not calls:
        return sites
    out = list(sites)
    for node in fast_walk(fi.node):
        if isinstance(node, ast.Subscript) and id(node.value) in calls:
            parts = _parts(node, symbols)
            if parts is None:
                continue
            old = calls[id(node.value)]
            new = Site("GM606", node, fi, dict(old.kinds), test=old.node, detail="truncated one_hot",
                       gb_id="GB0033", condition=old.condition)
            out[out.index(old)] = new
    return out


def _plan(site: Site, ctx: Context, env) -> tuple[str, str]:
    parts = _parts(site.node, ctx.symbols)
    if parts is None:
        raise Decline("not a `one_hot(i, C)[..., :n]`")
    _, idx, classes, n = parts
    tn = ctx.torch_name()
    if tn is None:
        raise Decline("the file does not `import torch`")
    if isinstance(classes, ast.Name):  # `c = max(...)` once in the function (st-moe-pytorch)
        binds = [b for b in fast_walk(site.func.node) if isinstance(b, ast.Assign) and len(b.targets) == 1
                 and isinstance(b.targets[0], ast.Name) and b.targets[0].id == classes.id]
        others = [b for b in fast_walk(site.func.node) if isinstance(b, (ast.AugAssign, ast.AnnAssign, ast.For,
                                                                      ast.NamedExpr))
                  and any(isinstance(t, ast.Name) and t.id == classes.id for t in fast_walk(b.target))]
        if len(binds) == 1 and not others:
            classes = binds[0].value
    if not (isinstance(classes, ast.Call) and isinstance(classes.func, ast.Name)
            and classes.func.id == "max" and not classes.keywords
            and any(ast.dump(a) == ast.dump(n) for a in classes.args)):
        raise Decline(f"cannot prove the number of classes `{ctx.src(classes)}` is at least the width "
                      f"`{ctx.src(n)}` (write it as `max(..., {ctx.src(n)})`)")
    if not (isinstance(n, ast.Constant) and type(n.value) is int) and not (
            isinstance(n, ast.Name) and not _rebound(site.func.node, n.id)):
        raise Decline(f"the width `{ctx.src(n)}` is not a number or a name bound once (the classes must "
                      "be at least the width the slice reads)")
    if env.kind(n) is Kind.TENSOR:
        raise Decline(f"the width `{ctx.src(n)}` is a tensor: `arange` of it would break as well")
    if not isinstance(idx, (ast.Name, ast.Attribute)) or \
            (isinstance(idx, ast.Attribute) and not isinstance(idx.value, ast.Name)):
        raise Decline(f"`{ctx.src(idx)}` is not a name or an attribute (the mend reads it twice)")
    i = ctx.src(idx)
    text = f"({i}.unsqueeze(-1) == {tn}.arange({ctx.src(n)}, device={i}.device)).long()"
    return text, "Compare with arange(n) instead of one_hot (a fixed width)"


def judge(site: Site, ctx: Context, env) -> Verdict:
    try:
        _, title = _plan(site, ctx, env)
    except Decline as d:
        return Verdict.decline(str(d))
    except (AttributeError, IndexError, KeyError, TypeError, ValueError) as e:
        return Verdict.decline(f"could not analyse this site ({type(e).__name__}: {e})")
    return Verdict(Applicability.UNSAFE, title, UNSAFE_WHY)


def fix(site: Site, ctx: Context, env, span_of) -> Optional[list[TextEdit]]:
    try:
        text, _ = _plan(site, ctx, env)
    except (Decline, AttributeError, IndexError, KeyError, TypeError, ValueError):
        return None
    return [TextEdit(span_of(site.node), text)]


_H = "import torch\nimport torch.nn.functional as F\n\n\n"
EXAMPLES = [
    Example("GM606: lucidrains' safe_one_hot (st-moe-pytorch, mixture-of-experts)",
            _H + "def safe_one_hot(indexes, max_length):\n    max_index = indexes.max() + 1\n"
            "    return F.one_hot(indexes, max(max_index + 1, max_length))[..., :max_length]\n\n\n"
            "@torch.compile\ndef route(scores, capacity: int):\n"
            "    position = scores.argsort(dim=-1)\n    return safe_one_hot(position, capacity).float() * 2\n",
            ["GM606"],
            _H + "def safe_one_hot(indexes, max_length):\n    max_index = indexes.max() + 1\n"
            "    return (\n        indexes.unsqueeze(-1) == torch.arange(max_length, device=indexes.device)\n"
            "    ).long()\n\n\n"
            "@torch.compile\ndef route(scores, capacity: int):\n"
            "    position = scores.argsort(dim=-1)\n    return safe_one_hot(position, capacity).float() * 2\n",
            unsafe=True),
    Example("GM606 declined: the classes may be fewer than the width",
            _H + "@torch.compile\ndef f(indexes, n: int):\n"
            "    return F.one_hot(indexes, indexes.max() + 1)[..., :n]\n", ["GM606"], None),
]
