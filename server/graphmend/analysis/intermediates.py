"""Tensors a traced frame computes itself (intermediates), as opposed to its inputs.

Dynamo breaks on changing `requires_grad` of an intermediate, never of an input (measured on
torch 2.13 with a counting backend; tests/test_autograd_in_graph.py keeps the repros):
- `t.requires_grad = v` on an intermediate: "setattr() on Tensor.requires_grad" (GB0206), for
  True and False alike; on an input or a parameter it traces.
- `t.requires_grad_()` / `requires_grad_(True)` on an intermediate (`x.detach().requires_grad_()`,
  `torch.zeros(n).requires_grad_()`): "requires_grad_() intermediate leaked as output" (GB8985),
  when the tensor, or one computed from it, leaves the graph (returned, or live at a later break:
  the gradient code that follows it, `backward()` or `torch.autograd.grad`, is one); with False,
  or on an input, it traces.
"""

from __future__ import annotations

import ast
from typing import Optional

from graphmend.analysis.symbols import bound_only_to

# Every operator's result is a new tensor to Dynamo, even where eager gives back the same one
# (`x.float()` of a float tensor, `x.mul_(1)`: measured, the flag change breaks there).


def computed(e: ast.expr) -> bool:
    """`e` computes a value (a call, arithmetic) rather than naming one that exists (a name, an
    attribute, a subscript)."""
    return isinstance(e, (ast.Call, ast.BinOp, ast.UnaryOp))


def computed_names(fn: ast.AST) -> frozenset[str]:
    """Names of `fn` every binding of which is an assignment of a computed value (`y = x * 2`,
    `y1, y2 = torch.chunk(y, 2)`) or an augmented assignment: never a parameter, a loop or `with`
    target, nor a plain alias."""
    return frozenset(bound_only_to(fn, lambda v: True if computed(v) else None, unpack=True, augmented=True))


def is_intermediate(e: ast.expr, names: frozenset[str]) -> bool:
    return computed(e) or (isinstance(e, ast.Name) and e.id in names)


def requires_grad_flag(c: ast.Call, method: bool = True) -> tuple[bool, Optional[ast.expr]]:
    """Whether a call may set the flag, and the argument it depends on (None: it sets it whatever
    runs). `method`: `t.requires_grad_(...)`, whose `()` and `(True)` do and `(False)` does not;
    else a factory's `requires_grad=` keyword, which sets it only when given and not False."""
    arg = c.args[0] if method and c.args else next((k.value for k in c.keywords if k.arg == "requires_grad"), None)
    if arg is None:
        return method, None
    if isinstance(arg, ast.Constant):
        return bool(arg.value), None
    return True, arg
