"""Tensors a traced frame computes itself (intermediates), as opposed to its inputs.

Dynamo breaks on changing `requires_grad` of an intermediate, never of an input (measured on
torch 2.13 with a counting backend; tests/test_requires_grad.py keeps the repros):
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

from graphmend.analysis.astwalk import walk as fast_walk

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
    stores: dict[str, int] = {}
    ok: dict[str, int] = {}
    for n in fast_walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            stores[n.id] = stores.get(n.id, 0) + 1
        elif isinstance(n, ast.arg):
            stores[n.arg] = stores.get(n.arg, 0) + 1
        elif isinstance(n, ast.Assign) and len(n.targets) == 1 and computed(n.value):
            t = n.targets[0]
            names = [t] if isinstance(t, ast.Name) else \
                t.elts if isinstance(t, ast.Tuple) and isinstance(n.value, ast.Call) else []
            for x in names:
                if isinstance(x, ast.Name):
                    ok[x.id] = ok.get(x.id, 0) + 1
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            ok[n.target.id] = ok.get(n.target.id, 0) + 1
    return frozenset(k for k, v in ok.items() if stores.get(k) == v)


def is_intermediate(e: ast.expr, names: frozenset[str]) -> bool:
    return computed(e) or (isinstance(e, ast.Name) and e.id in names)


def requires_grad_flag(c: ast.Call) -> tuple[bool, Optional[ast.expr]]:
    """Whether `t.requires_grad_(...)` may set the flag, and the argument it depends on (None: it
    sets it whatever runs): `()` and `(True)` do, `(False)` does not."""
    arg = c.args[0] if c.args else next((k.value for k in c.keywords if k.arg == "requires_grad"), None)
    if arg is None:
        return True, None
    if isinstance(arg, ast.Constant):
        return bool(arg.value), None
    return True, arg
