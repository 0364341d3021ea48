"""The deprecated scalar-first overloads of the in-place arithmetic (GM406), written as torch's
current signature.

    exp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)   ->   ....addcmul_(grad, grad, value=1 - beta2)
    exp_avg.add_(1 - beta1, grad)                            ->   exp_avg.add_(grad, alpha=1 - beta1)

`Tensor.add_(Number alpha, Tensor other)`, `addcmul_(Number value, Tensor t1, Tensor t2)` and
`addcdiv_(Number value, Tensor t1, Tensor t2)` are the signatures torch deprecated (a UserWarning,
"This overload of add_ is deprecated"); eager mode still runs them, but Dynamo does not match them
("Unhandled args for method", GB0117, measured on torch 2.13), so the step breaks there. Optimizers
written for older torch use them in every parameter's update (pytorch-ranger's Ranger, RangerQH,
Ranger913A: realcode round 25). The current signatures take the number by keyword (`alpha=`,
`value=`) and compute the same: `self + alpha * other`, `self + value * t1 * t2`, `self + value
* t1 / t2`, the same kernels; measured with Dynamo, they trace. (`add`, `addcmul` and `sub_` with
the number first trace as they are: only these three in-place methods are reported.)

Legality: a method call `.add_`, `.addcmul_` or `.addcdiv_` with exactly two (add_) or three
positional arguments, none starred (of a receiver the analysis does not know to be a tensor,
`add_` only with its first argument written as a number), and no `alpha=` / `value=` keyword (the current
signatures take one, respectively two, positional tensors: more positional arguments are the
deprecated form). SAFE: the arguments are evaluated in the same order, once each; the only
difference is torch's deprecation warning, which the mended line no longer gives.
"""

from __future__ import annotations

import ast
from typing import Optional

from graphmend.analysis.detect import Site
from graphmend.findings import Applicability, Span, TextEdit
from graphmend.rules.base import Context, Example, Verdict

CODES = ("GM406",)
# method -> (positional arguments of the deprecated form, the keyword the number becomes)
DEPRECATED = {"add_": (2, "alpha"), "addcmul_": (3, "value"), "addcdiv_": (3, "value")}


def scalar_first(call: ast.Call, known_tensor: bool = True) -> bool:
    """`t.add_(n, x)`, `t.addcmul_(n, a, b)`, `t.addcdiv_(n, a, b)`: the deprecated form (by the
    count of positional arguments, which the current signatures cannot take). Of a receiver not
    known to be a tensor (`known_tensor` False), `add_` only with a first argument written as a
    number (`1.0 - beta`, `-lr`): another class' two-argument `add_` is no tensor's."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in DEPRECATED:
        return False
    n, _ = DEPRECATED[func.attr]
    if len(call.args) != n or any(isinstance(a, ast.Starred) for a in call.args):
        return False
    return known_tensor or func.attr != "add_" or _written_as_a_number(call.args[0])


def _written_as_a_number(e: ast.expr) -> bool:
    """A number literal, its negation, or arithmetic with one (`1.0 - beta2`, `-group['lr']`)."""
    if isinstance(e, ast.Constant):
        return isinstance(e.value, (int, float)) and not isinstance(e.value, bool)
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        return True
    return isinstance(e, ast.BinOp) and (_written_as_a_number(e.left) or _written_as_a_number(e.right))


def message(site: Site) -> str:
    return (f"`.{site.node.func.attr}()` with the number first (a deprecated overload) is a signature Dynamo "
            f"does not handle, and breaks the graph")


def _problem(call: ast.Call) -> Optional[str]:
    keyword = DEPRECATED[call.func.attr][1]
    if any(k.arg == keyword or k.arg is None for k in call.keywords):
        return f"`{keyword}=` (or a `**mapping`) is given too: torch raises on that call, nothing to keep"
    return None


def judge(site: Site, ctx: Context, env) -> Verdict:
    why = _problem(site.node)
    if why:
        return Verdict.decline(why)
    keyword = DEPRECATED[site.node.func.attr][1]
    return Verdict(Applicability.SAFE, f"Pass the number as `{keyword}=` (torch's current signature)")


def fix(site: Site, ctx: Context, env, span_of) -> Optional[list[TextEdit]]:
    call = site.node
    if _problem(call) is not None:
        return None
    keyword = DEPRECATED[call.func.attr][1]
    number, *tensors = call.args
    start, end = span_of(number), span_of(call.args[-1])
    text = ", ".join(ctx.src(t) for t in tensors) + f", {keyword}={ctx.src(number)}"
    return [TextEdit(Span(start.start, end.end), text)]


_H = "import torch\n"
EXAMPLES = [
    Example("GM406: Adam's second moment, the number first (pytorch-ranger's Ranger)",
            _H + "\n\n@torch.compile\ndef update(exp_avg, exp_avg_sq, grad, beta1: float, beta2: float):\n"
            "    exp_avg.mul_(beta1).add_(1 - beta1, grad)\n"
            "    exp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)\n"
            "    return exp_avg / (exp_avg_sq.sqrt() + 1e-8)\n",
            ["GM406", "GM406"],
            _H + "\n\n@torch.compile\ndef update(exp_avg, exp_avg_sq, grad, beta1: float, beta2: float):\n"
            "    exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)\n"
            "    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)\n"
            "    return exp_avg / (exp_avg_sq.sqrt() + 1e-8)\n"),
    Example("GM406: a step divided by the denominator, over two lines",
            _H + "\n\n@torch.compile\ndef step(p: torch.Tensor, exp_avg, denom, lr: float):\n"
            "    p.addcdiv_(\n        -lr, exp_avg, denom\n    )\n    return p\n",
            ["GM406"],
            _H + "\n\n@torch.compile\ndef step(p: torch.Tensor, exp_avg, denom, lr: float):\n"
            "    p.addcdiv_(\n        exp_avg, denom, value=-lr\n    )\n    return p\n"),
    Example("GM406 declined: the keyword given as well (torch raises on it)",
            _H + "\n\n@torch.compile\ndef update(p, grad):\n"
            "    p.add_(0.5, grad, alpha=2)\n    return p\n",
            ["GM406"], None),
]
