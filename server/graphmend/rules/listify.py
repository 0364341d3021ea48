"""A generator expression passed to `math.prod` or `math.fsum` (GM407), written as a list
comprehension.

    N = prod((series.shape[d] for d in batch_dim))   ->   N = prod([series.shape[d] for d in batch_dim])

Dynamo hands `math.prod` and `math.fsum` their arguments as graph values, and a generator is none
("Failed to convert args/kwargs to proxy", GB0055); it cannot rebuild the generator it started
either (GB8335), so it gives up on the whole function and runs it eagerly (measured on torch 2.13:
0 graphs for a function whose only other work is tensor ops; `sum`, `min`, `max`, `sorted`, `all`,
`any`, `tuple`, `list`, `set`, `dict`, `"".join`, `functools.reduce` and `itertools.chain` of the
same generator trace). Given a list, or a tuple, they trace: Dynamo computes the product of the
shape ints at trace time. torchcast's `_shaping.py` takes the product of the batch and channel
sizes this way (realcode round 36), and every forecast's reshape runs eagerly.

Legality: the call's one positional argument is a generator expression, with no keyword. The
list holds the same items in the same order, and `math.prod`/`math.fsum` consume every item of
what they are given, so they give the same result. The one difference is when the items are
computed: all before the call, not one at a time as the product goes. SAFE where computing an
item runs no code of the program's (no call but `len`, `int`, `float`, `abs`, `min`, `max`, and
no `await`/`yield`): then only an error path differs (an item that is not a number raises
TypeError in the product either way; an item whose subscript fails now raises before the product
would have). UNSAFE otherwise: a call in the items runs for every item first.
"""

from __future__ import annotations

import ast
from typing import Optional

from graphmend.analysis.astwalk import walk as fast_walk
from graphmend.analysis.detect import Site
from graphmend.findings import Applicability, Pos, Span, TextEdit
from graphmend.rules.base import Context, Example, Verdict

CODES = ("GM407",)
# functions of math that Dynamo cannot call with a generator (measured on torch 2.13)
GENERATOR_TAKERS = frozenset({"math.prod", "math.fsum"})
_PURE_CALLS = frozenset({"len", "int", "float", "abs", "min", "max"})


def generator_argument(call: ast.Call, qualified: str) -> Optional[ast.GeneratorExp]:
    """The generator expression `call` (of `qualified`, one of GENERATOR_TAKERS) is given as its
    only argument, or None."""
    if qualified not in GENERATOR_TAKERS or call.keywords or len(call.args) != 1:
        return None
    arg = call.args[0]
    return arg if isinstance(arg, ast.GeneratorExp) else None


def message(site: Site) -> str:
    return (f"{site.detail} of a generator is a call Dynamo cannot trace: it gives up on the function, "
            f"which runs eagerly")


def _runs_code(gen: ast.GeneratorExp) -> Optional[str]:
    """The first call (or await/yield) in the generator's items or conditions that may run code
    of the program's; None when there is none. The outermost iterable is evaluated once, before
    the call, either way."""
    parts = [gen.elt, *(x for comp in gen.generators for x in comp.ifs),
             *(comp.iter for comp in gen.generators[1:])]
    for part in parts:
        for n in fast_walk(part):
            if isinstance(n, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)):
                return ast.unparse(n)
            if isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id in _PURE_CALLS):
                return ast.unparse(n)
    return None


def judge(site: Site, ctx: Context, env) -> Verdict:
    call = site.node
    gen = call.args[0]
    if any(comp.is_async for comp in gen.generators):
        return Verdict.decline("an async generator: a list comprehension of it needs an enclosing async function")
    title = "Pass a list comprehension (the same items, computed before the call)"
    runs = _runs_code(gen)
    if runs is not None:
        return Verdict(Applicability.UNSAFE, title,
                       f"`{runs}` runs for every item before the product instead of one at a time as it goes: "
                       f"where an item fails, the calls after it run first")
    return Verdict(Applicability.SAFE, title)


def fix(site: Site, ctx: Context, env, span_of) -> Optional[list[TextEdit]]:
    call = site.node
    gen = call.args[0]
    span = span_of(gen)  # the generator's parentheses: its own, or the call's when it is the bare argument
    s, e = span.start, span.end
    if (gen.end_lineno, gen.end_col_offset) == (call.end_lineno, call.end_col_offset):
        # `prod(x for x in y)`: the parentheses are the call's; the brackets go inside them
        return [TextEdit(Span(Pos(s.line, s.col + 1), Pos(s.line, s.col + 1)), "["),
                TextEdit(Span(Pos(e.line, e.col - 1), Pos(e.line, e.col - 1)), "]")]
    # `prod((x for x in y))`: its own parentheses become brackets
    return [TextEdit(Span(s, Pos(s.line, s.col + 1)), "["), TextEdit(Span(Pos(e.line, e.col - 1), e), "]")]


_H = "import math\n\nimport torch\n"
EXAMPLES = [
    Example("GM407: the product of the batch sizes, for a reshape (torchcast's _shaping.py)",
            _H + "\n\n@torch.compile\ndef flatten_batch(series, batch_dim=(0,)):\n"
            "    n = math.prod((series.shape[d] for d in batch_dim))\n"
            "    return series.reshape(n, -1) * 2\n",
            ["GM407"],
            _H + "\n\n@torch.compile\ndef flatten_batch(series, batch_dim=(0,)):\n"
            "    n = math.prod([series.shape[d] for d in batch_dim])\n"
            "    return series.reshape(n, -1) * 2\n"),
    Example("GM407: a bare generator argument, over two lines",
            _H + "\n\n@torch.compile\ndef scale(x):\n"
            "    total = math.fsum(\n        x.shape[d] / 2 for d in range(x.dim()) if d > 0\n    )\n"
            "    return x / total\n",
            ["GM407"],
            _H + "\n\n@torch.compile\ndef scale(x):\n"
            "    total = math.fsum([\n        x.shape[d] / 2 for d in range(x.dim()) if d > 0\n    ])\n"
            "    return x / total\n"),
    Example("GM407 unsafe: a call of the program's in the items",
            _H + "\n\ndef size(x, d):\n    return x.shape[d]\n\n\n@torch.compile\ndef flatten(x):\n"
            "    n = math.prod(size(x, d) for d in range(x.dim()))\n    return x.reshape(n) + 1\n",
            ["GM407"],
            _H + "\n\ndef size(x, d):\n    return x.shape[d]\n\n\n@torch.compile\ndef flatten(x):\n"
            "    n = math.prod([size(x, d) for d in range(x.dim())])\n    return x.reshape(n) + 1\n",
            unsafe=True),
]
