"""[Trap] GM301: `if <tensor condition>: raise E(msg)` (and `assert <tensor condition>, msg`).

The guard becomes one call of the runtime helper `_graphmend_raise_if(cond, E, msg)`: in eager
mode it is the original `if cond: raise E(msg)`; under torch.compile the check runs inside the
graph as an ORDERED effectful custom op that raises `E(msg)` when the condition holds, so the
user sees the same exception type and message and the graph does not break.

Legality: the raise must be `raise E`, `raise E()` or `raise E(msg)` with one positional
argument whose value is known when Dynamo traces (a string, an f-string of static values);
`raise ... from ...`, messages built from tensor values, and guards with an `else`/`elif`
are declined. A static `and` prefix (`x.dtype == torch.float16 and torch.isinf(x).any()`)
stays a Python `if` around the check.
"""

from __future__ import annotations

import ast
from typing import Optional

from graphmend.analysis.dataflow import Kind
from graphmend.analysis.detect import Site
from graphmend.findings import Applicability, TextEdit
from graphmend.rules.base import Context, Example, Verdict

CODES = ("GM301",)


def message(site: Site) -> str:
    kind = "assert" if isinstance(site.node, ast.Assert) else "validation guard"
    return f"data-dependent {kind} on a tensor condition breaks the graph"


def _parts(site: Site) -> tuple[Optional[ast.expr], Optional[ast.expr], Optional[str]]:
    """(exception class expr, message expr, reason-if-declined)."""
    node = site.node
    if isinstance(node, ast.Assert):
        return None, node.msg, None
    r: ast.Raise = node.body[0]
    if r.cause is not None:
        return None, None, "the raise has a `from` clause"
    exc = r.exc
    if exc is None:
        return None, None, "a bare `raise` re-raises the active exception"
    if isinstance(exc, (ast.Name, ast.Attribute)):
        return exc, None, None
    if isinstance(exc, ast.Call) and isinstance(exc.func, (ast.Name, ast.Attribute)):
        if exc.keywords or len(exc.args) > 1 or any(isinstance(a, ast.Starred) for a in exc.args):
            return None, None, "the exception is built with several or keyword arguments"
        return exc.func, (exc.args[0] if exc.args else None), None
    return None, None, "the raised expression is not an exception class or call"


def judge(site: Site, ctx: Context, env) -> Verdict:
    if not ctx.owns_lines(site.node):
        return Verdict.decline("the guard shares its line with other code; put it on its own line")
    exc, msg, why = _parts(site)
    if why:
        return Verdict.decline(why)
    if msg is not None and env.kind(msg) is not Kind.STATIC:
        return Verdict.decline("the message is computed from tensor values, which exist only when the "
                               "graph runs")
    if exc is not None:
        q = ctx.symbols.qualify(exc) or ""
        if isinstance(exc, ast.Name) and exc.id in site.kinds:
            return Verdict.decline("the exception class is a local variable")
        _ = q
    return Verdict(Applicability.SAFE, "Turn the guard into an in-graph check")


def fix(site: Site, ctx: Context, env, span_of) -> Optional[list[TextEdit]]:
    node = site.node
    exc, msg, _ = _parts(site)
    ind = ctx.indent_of(node)
    test = site.test
    negate = False
    if isinstance(node, ast.Assert):
        negate = True  # assert C, msg  ==  if not C: raise AssertionError(msg)
        exc_src = "AssertionError"
    else:
        exc_src = ctx.src(exc)
    cond = test
    if isinstance(cond, ast.UnaryOp) and isinstance(cond.op, ast.Not):
        negate = not negate
        cond = cond.operand
    cond_src = _src_or_boolop(ctx, cond)
    args = [cond_src, exc_src] + ([ctx.src(msg)] if msg is not None else [])
    if negate:
        args.append("negate=True")
    call = f"_graphmend_raise_if({', '.join(args)})"
    comments = ctx.comments_in(node)
    lines = [f"{ind}{c}" for c in comments]
    if site.static_test:
        static = " and ".join(ctx.src(t) for t in site.static_test)
        if isinstance(node, ast.Assert):
            return None  # `assert S and T`: a failing S must raise too; keep it simple: decline
        lines += [f"{ind}if {static}:", f"{ind}    {call}"]
    else:
        lines.append(f"{ind}{call}")
    start = (node.lineno, 0)
    end = (node.end_lineno, None)
    return [TextEdit(span_of(node, start, end), "\n".join(lines))]


def _src_or_boolop(ctx: Context, e: ast.expr) -> str:
    if isinstance(e, ast.BoolOp) and not ctx.segment(e):
        return " and ".join(f"({ctx.src(v)})" for v in e.values)
    return ctx.src(e)


EXAMPLES = [
    Example(
        "a validation guard on tensor values",
        "import torch\n\n@torch.compile\ndef f(x):\n    if torch.isnan(x).any():\n"
        "        raise ValueError('input has NaN')\n    return x.relu()\n",
        ["GM301"],
        "import torch\n@@HELPERS@@\n\n@torch.compile\ndef f(x):\n"
        "    _graphmend_raise_if(torch.isnan(x).any(), ValueError, 'input has NaN')\n    return x.relu()\n"),
    Example(
        "`if not` and a static prefix",
        "import torch\n\n@torch.compile\ndef f(x):\n"
        "    if x.dtype == torch.float16 and not torch.isfinite(x).all():  # overflow\n"
        "        raise OverflowError(f'non-finite values in {x.shape}')\n    return x * 2\n",
        ["GM301"],
        "import torch\n@@HELPERS@@\n\n@torch.compile\ndef f(x):\n    # overflow\n"
        "    if x.dtype == torch.float16:\n"
        "        _graphmend_raise_if(torch.isfinite(x).all(), OverflowError, f'non-finite values in {x.shape}', "
        "negate=True)\n    return x * 2\n"),
    Example(
        "declined: the message formats a tensor value",
        "import torch\n\n@torch.compile\ndef f(x):\n    m = x.max()\n    if m > 10:\n"
        "        raise ValueError(f'max is {m}')\n    return x\n",
        ["GM301"], None),
    Example(
        "not flagged: a static condition",
        "import torch\n\n@torch.compile\ndef f(x):\n    if x.dim() != 2:\n"
        "        raise ValueError('expected a matrix')\n    return x\n",
        [], None),
]
