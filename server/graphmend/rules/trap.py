"""[Trap] GM301: `if <tensor condition>: raise E(msg)` (and `assert <tensor condition>, msg`).

Not reported: an assert Dynamo traces itself. torch 2.13 turns `assert t` and `assert t, "text"`
(one test expression, no message or a constant one) into `torch._assert` in the graph: no break,
and the compiled check raises RuntimeError with the message. `assert not t`, `assert a and b`
and a computed message (an f-string, a name) still break, and are reported and mended.

The guard becomes one call of the runtime, `graphmend.raise_if(cond, E, msg)` (`if not cond`
and `assert cond, msg`: `graphmend.raise_unless(cond, E, msg)`): in eager mode it is the
original `if cond: raise E(msg)`; under torch.compile the check runs inside the
graph as an ORDERED effectful custom op that raises `E(msg)` when the condition holds, so the
user sees the same exception type and message and the graph does not break. (One graph is
traced whole before it runs: code after the check that cannot be traced for the inputs, e.g. a
shape mismatch the guard exists to report, fails to compile with Dynamo's error first.)

Legality: the raise must be `raise E`, `raise E()` or `raise E(msg)` with one positional
argument whose value is known when Dynamo traces (a string, an f-string of static values) and
that cannot fail to compute (no indexing or division: the helper computes it on every call);
`raise ... from ...`, messages built from tensor values, guards with an `else`, and a guard
that is itself an `elif` are declined. A static `and` prefix (`x.dtype == torch.float16 and
torch.isinf(x).any()`) stays a Python `if` around the check (`assert S and T, m` becomes `assert S, m` and the check). Tensors combined with `and`/`or`
become `torch.logical_and`/`logical_or` when each is a single element (else Python would take
their truth, which breaks the graph: declined), as do chained comparisons of tensors.
"""

from __future__ import annotations

import ast
from typing import Optional

from graphmend.analysis.dataflow import Kind
from graphmend.analysis.detect import Site
from graphmend.findings import Applicability, TextEdit
from graphmend.rules import where
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
    if where.is_elif(site):
        return Verdict.decline("the guard is an `elif` of another if; mending it alone would detach it "
                               "from the chain")
    if not ctx.owns_lines(site.node):
        return Verdict.decline("the guard shares its line with other code; put it on its own line")
    exc, msg, why = _parts(site)
    if why:
        return Verdict.decline(why)
    why = _condition_problem(site, ctx, env)
    if why:
        return Verdict.decline(why)
    if msg is not None and env.kind(msg) is not Kind.STATIC:
        return Verdict.decline("the message is computed from tensor values, which exist only when the "
                               "graph runs")
    if msg is not None and where._may_raise(msg):
        return Verdict.decline("the message would be computed even when the check passes, and computing it "
                               "may raise (indexing, division)")
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
    while isinstance(cond, ast.UnaryOp) and isinstance(cond.op, ast.Not):  # `not (not c)`: all of them,
        negate = not negate  # as _needs_logical strips them (one left is a Python `not` of a tensor)
        cond = cond.operand
    if _needs_logical(site, env):  # and/or/not of tensors: one tensor condition
        cond_src = where.cond_src(cond, ctx, ctx.torch_name(), site, env)
    else:
        cond_src = _src_or_boolop(ctx, cond)
    args = [cond_src, exc_src] + ([ctx.src(msg)] if msg is not None else [])
    call = f"graphmend.{'raise_unless' if negate else 'raise_if'}({', '.join(args)})"
    comments = ctx.comments_in(node)
    lines = [f"{ind}{c}" for c in comments]
    if site.static_test:
        static = " and ".join(ctx.src(t) for t in site.static_test)
        if isinstance(node, ast.Assert):  # `assert S and T, m`: `assert S, m`, then T in the graph
            lines += [f"{ind}assert {static}" + (f", {ctx.src(msg)}" if msg is not None else ""),
                      f"{ind}{call}"]
        else:
            lines += [f"{ind}if {static}:", f"{ind}    {call}"]
    else:
        lines.append(f"{ind}{call}")
    start = (node.lineno, 0)
    end = (node.end_lineno, None)
    return [TextEdit(span_of(node, start, end), "\n".join(lines))]


def _strip_not(e: ast.expr) -> tuple[ast.expr, bool]:
    negate = False
    while isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        negate, e = not negate, e.operand
    return e, negate


def _python_truth_ok(e: ast.expr, env) -> bool:
    """Evaluated as written, the condition takes no tensor's truth in Python (only static values
    before the last operand of an and/or): Dynamo traces it without a break."""
    e, _ = _strip_not(e)
    if isinstance(e, ast.BoolOp):
        return all(env.kind(v) is Kind.STATIC for v in e.values[:-1]) and _python_truth_ok(e.values[-1], env)
    if isinstance(e, ast.Compare) and len(e.ops) > 1:
        return env.kind(e) is Kind.STATIC
    return not any(isinstance(n, ast.BoolOp) or (isinstance(n, ast.Compare) and len(n.ops) > 1)
                   or (isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not))
                   for n in ast.walk(e)) or env.kind(e) is Kind.STATIC


def _needs_logical(site: Site, env) -> bool:
    cond, _ = _strip_not(site.test)
    return not _python_truth_ok(cond, env)


def _condition_problem(site: Site, ctx: Context, env) -> Optional[str]:
    """Why the condition, which combines tensors with and/or/not, cannot become one tensor."""
    if not _needs_logical(site, env):
        return None
    cond, _ = _strip_not(site.test)
    if ctx.torch_name() is None:
        return "`torch` is not imported under that name in this file"
    why = where.condition_problem(cond, env)
    if why:
        return why
    for n in ast.walk(cond):
        if isinstance(n, ast.BoolOp):
            for v in n.values:
                if not where._is_single_element(v, site, ctx, env):
                    return (f"`{ast.unparse(v)}` may hold several elements; combined by and/or it stays "
                            "a Python truth test, which breaks the graph")
    return None


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
        "import torch\nimport _graphmend_runtime as graphmend\n\n@torch.compile\ndef f(x):\n"
        "    graphmend.raise_if(torch.isnan(x).any(), ValueError, 'input has NaN')\n    return x.relu()\n"),
    Example(
        "`if not` and a static prefix",
        "import torch\n\n@torch.compile\ndef f(x):\n"
        "    if x.dtype == torch.float16 and not torch.isfinite(x).all():  # overflow\n"
        "        raise OverflowError(f'non-finite values in {x.shape}')\n    return x * 2\n",
        ["GM301"],
        "import torch\nimport _graphmend_runtime as graphmend\n\n@torch.compile\ndef f(x):\n    # overflow\n"
        "    if x.dtype == torch.float16:\n"
        "        graphmend.raise_unless(\n"
        "            torch.isfinite(x).all(), OverflowError, f'non-finite values in {x.shape}'\n"
        "        )\n    return x * 2\n"),
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
