"""GM401 tensor-to-Python, GM402 data-dependent shapes, GM403 untraceable calls, GM405
`requires_grad` changed in the graph: reported with Dynamo's own explanation, never mended (no
rewrite keeps the meaning in general).

Dynamo can capture some of these with settings instead of a rewrite:
`torch._dynamo.config.capture_scalar_outputs = True` (GM401) and
`torch._dynamo.config.capture_dynamic_output_shape_ops = True` (GM402); both change what the
whole program traces, so GraphMend suggests them and does not apply them.

Only what Dynamo must read as a Python value counts (each measured on torch 2.13 with a counting
backend; tests/test_shape_static.py keeps the repros): `repeat_interleave` is GM402 only with
tensor repeats and no `output_size=` (Python-int or shape-derived repeats, or an `output_size`,
give a static shape); a factory is GM401 only for a tensor in a size or bound parameter
(`arange`'s start/end/step, `linspace`'s steps, `zeros`' size, not `linspace`'s start/end nor
`full`'s fill value), not for a name an enclosing `if isinstance(name, int)` proves a number; a
boolean mask is GM402 when read (`x[m]`), not when assigned through (`y[m] = v`, an index_put).
A 0-dim tensor the frame computed (a reduction with no dim: `y.argmax()`, `t.sum() > 0`) as an
index, read or assigned through, is GM401 (GB0033); an index tensor of any other rank traces, and
so does a 0-dim one that became an input of the frame Dynamo resumes in after a break
(tests/test_value_facts.py).

A numpy array is a tensor to Dynamo (it traces numpy with torch._numpy), so reading one into
Python is GM401 (GB0033): `int()`, `float()`, `map(int, ...)` or a `slice()` bound of an array a
numpy builder made in the frame (`np.asarray`, `np.prod`, ...), of its transpose, rows and items
(an index, a loop or comprehension over it, arithmetic with it: monai's
`slice(s, s + patch_size[d]) for d, s in enumerate(x)`), and of an attribute that the class an
enclosing `isinstance()` names stores only as such an array (gymnasium's `MultiDiscrete.nvec`,
read by stable-baselines3). Measured on torch 2.13: tests/test_numpy_items.py,
tests/test_numpy_attrs.py.

GM405 counts only a tensor the frame computed: any operator's result, even `x.float()` of a float
tensor (measured on torch 2.13, tests/test_autograd_in_graph.py). Changing the flag of an input
or a parameter traces, and so does `requires_grad_(False)`; a factory's `requires_grad=True`
breaks only when Dynamo inlines the frame (a helper, a submodule's forward), which the finding
says. `requires_grad_()` breaks when the tensor, or one computed from it, leaves the graph
(returned, or live at a later break such as the `backward()` that usually follows); it is
reported wherever it runs on an intermediate.

A scalar read from a tensor that SIZES a tensor (`n = cache_position[-1] + 1; torch.arange(n)`,
`torch.full((s, n), v)`, the rotary and causal-mask code of many decoders) is declined with that
reason: the shape depends on the tensor's value, so neither torch.where nor torch.cond (whose
branches need shapes known when tracing) can stand for it. Measured (torch 2.13, counting
backend): with `capture_scalar_outputs = True` Dynamo traces such a size as an unbacked symbol,
one graph under `fullgraph=True`; that is a program-wide setting, named in the reason, not applied.
"""

from __future__ import annotations

import ast

from graphmend.analysis.detect import LSTSQ, Site
from graphmend.rules.base import Example, Verdict

CODES = ("GM401", "GM402", "GM403", "GM405")
HINTS = {
    "GM401": "keep the value a tensor (tensor ops instead of Python numbers)",
    "GM402": "use a fixed-shape formulation (three-argument torch.where, masked ops)",
    "GM403": "move the call outside the compiled region, or wrap it in a function decorated with "
             "torch.compiler.disable (that still breaks, but explicitly)",
    "GM405": "make the tensor a leaf outside the compiled region (an input), or run the code that takes its "
             "gradient (reversible layers' recomputation, a gradient penalty, an input attack) outside "
             "torch.compile",
}


def message(site: Site) -> str:
    if site.code == "GM401":
        return f"{site.detail} reads a tensor's value into Python and breaks the graph"
    if site.code == "GM402":
        return f"{site.detail} has an output shape that depends on tensor values and breaks the graph"
    if site.code == "GM405":
        return (f"{site.detail} breaks the graph: a tensor that starts requiring gradients in the middle "
                "of the graph is a new autograd leaf, which Dynamo does not trace")
    return f"{site.detail} cannot be traced by Dynamo and breaks the graph"


SIZED = "as a size or bound"
SIZED_WHY = ("a value read from a tensor sizes a tensor ({what}): the result's shape depends on tensor "
             "values, so no fixed-shape rewrite keeps the meaning (torch.where and torch.cond both need "
             "the shapes when tracing); keep the size a Python int (from a `.shape` or a config value) "
             "where the program allows, or let Dynamo trace it as an unbacked size with "
             "`torch._dynamo.config.capture_scalar_outputs = True` (a setting for the whole program, "
             "suggested, not applied)")

# F.pad with a tensor width: with capture_scalar_outputs Dynamo 2.13 failed with an internal error
# (PendingUnbackedSymbolNotFound, measured), so that setting is not suggested there
PAD_WHY = ("a value read from a tensor sizes a tensor ({what}): the result's shape depends on tensor "
           "values, so no fixed-shape rewrite keeps the meaning (torch.where and torch.cond both need "
           "the shapes when tracing); keep the pad widths Python ints (from a `.shape` or a config value) "
           "where the program allows (`capture_scalar_outputs = True` does not help here: Dynamo failed "
           "with an internal error on torch 2.13)")


LSTSQ_WHY = ("`torch.linalg.lstsq` also returns residuals, a rank and singular values whose shapes depend "
             "on the data, so Dynamo cannot trace it, whichever output is used; `torch.linalg.pinv(A) @ b` "
             "(or `torch.linalg.solve` of the normal equations, for a full-rank A) traces into the graph, "
             "but its result differs from lstsq's in the last bits and its cutoff is not rcond's: a "
             "change to make by hand, not a rewrite that keeps the meaning")

SCALAR_ARG = "(a Python number there)"
SCALAR_ARG_WHY = ("the operator takes its multiplier as a Python number, so Dynamo reads the tensor's value "
                  "({what}); writing the product out (`a + alpha * b`) keeps it in the graph but is not the "
                  "same computation: the fused operator rounds once, the written-out form twice, and the "
                  "results differ in the last bits. Write it out by hand where that is acceptable, or pass "
                  "a Python number where the value is known when tracing")


def judge(site: Site, ctx, env) -> Verdict:
    if site.code == "GM401" and SIZED in (site.detail or ""):
        why = PAD_WHY if "torch.nn.functional.pad()" in site.detail else SIZED_WHY
        return Verdict.decline(why.format(what=site.detail))
    if site.code == "GM401" and SCALAR_ARG in (site.detail or ""):
        return Verdict.decline(SCALAR_ARG_WHY.format(what=site.detail.replace(" " + SCALAR_ARG, "")))
    if site.code == "GM402" and site.detail == LSTSQ:
        return Verdict.decline(LSTSQ_WHY)
    if site.code == "GM402":
        why = row_loop(site)
        if why is not None:
            return Verdict.decline(why)
    return Verdict.decline("no rewrite keeps the meaning; " + HINTS[site.code])


ROW_FUNCS = ("nonzero", "argwhere")


def row_loop(site: Site) -> str | None:
    """The reason for `idx = torch.nonzero(c)` whose rows drive a Python loop that GM604 does not
    mend (`for i in range(idx.shape[0]): row, col = idx[i] ...`, grounding-dino's text masks):
    what in the loop has no fixed-shape form the analysis can prove; None for another GM402."""
    call = site.node
    f = getattr(call, "func", None)
    if not isinstance(f, ast.Attribute) or f.attr not in ROW_FUNCS:
        return None
    fn = site.func.node
    name = next((st.targets[0].id for st in ast.walk(fn) if isinstance(st, ast.Assign) and st.value is call
                 and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)), None)
    if name is None:
        return None
    loop = next((st for st in ast.walk(fn) if isinstance(st, ast.For) and st.lineno > call.lineno
                 and _iterates_rows(st.iter, name)), None)
    if loop is None:
        return None
    stored = {n.id for b in loop.body for n in ast.walk(b) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    before = {n.id for st in fn.body if st.lineno < loop.lineno for n in ast.walk(st)
              if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    loaded = {n.id for b in loop.body for n in ast.walk(b) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    carried = sorted((stored & before & loaded) - {name})
    sliced = [ast.unparse(t) for b in loop.body for t in ast.walk(b)
              if isinstance(t, ast.Subscript) and isinstance(t.ctx, ast.Store)
              and any(isinstance(e, ast.Slice) for e in (t.slice.elts if isinstance(t.slice, ast.Tuple) else [t.slice]))]
    what = []
    if carried:
        what.append("carries " + ", ".join(f"`{c}`" for c in carried) + " from one row to the next")
    if sliced:
        what.append(f"writes slices bounded by a row's values (`{sliced[0][:50]}`)")
    if any(isinstance(b, ast.If) for b in ast.walk(loop) if b is not loop):
        what.append("branches on each row's values")
    if not what:
        what.append("does more than set entries at each row's own coordinates")
    return (f"the rows of `{name}` drive a Python loop (line {loop.lineno}) that " + ", ".join(what) +
            "; the number of iterations is data-dependent, so Dynamo breaks at the nonzero, and only a loop "
            "that sets `z[tuple(i)] = v` at each row's coordinates has a proven fixed-shape form (GM604). "
            "A fixed-shape rewrite of this loop would be specific to what it computes (e.g. segments between "
            "marked positions via cumulative sums); write it by hand, or let Dynamo trace the nonzero with "
            "`torch._dynamo.config.capture_dynamic_output_shape_ops = True` (the loop over its rows still breaks)")


def _iterates_rows(it: ast.expr, name: str) -> bool:
    """`name`, `range(name.shape[0])`, `range(len(name))`, `range(name.size(0))`, `enumerate(name)`."""
    if isinstance(it, ast.Name):
        return it.id == name
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in ("range", "enumerate") \
            and len(it.args) == 1:
        a = it.args[0]
        return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(a))
    return False


def dynamo_says(gb_id) -> str | None:
    """Dynamo's own type and hint for the id, as one line (from the user's torch if found)."""
    from graphmend.dynamo_registry import explain
    e = explain(gb_id)
    if e is None:
        return None
    hint = " ".join(e["hints"])
    return f"dynamo {gb_id}: {e['type']}" + (f"; hint: {hint}" if hint else "") + f" ({e['link']})"


EXAMPLES = [
    Example("`.item()` on a tensor", "import torch\n\n@torch.compile\ndef f(x):\n    n = x.sum().item()\n"
            "    return x / n\n", ["GM401"], None),
    Example("nonzero has a data-dependent shape", "import torch\n\n@torch.compile\ndef f(x):\n"
            "    idx = torch.nonzero(x > 0)\n    return idx\n", ["GM402"], None),
    Example("boolean-mask indexing", "import torch\n\n@torch.compile\ndef f(x: torch.Tensor):\n    return x[x > 0]\n",
            ["GM402"], None),
    Example("declined: a value read from a tensor sizes a tensor (no fixed-shape form exists)",
            "import torch\n\n@torch.compile\ndef f(x: torch.Tensor, cache_position: torch.Tensor):\n"
            "    n = cache_position[-1] + 1\n    return x[:, None] * torch.arange(n)\n", ["GM401"], None),
    Example("declined: a nonzero whose rows drive a loop with carried state (grounding-dino's text masks)",
            "import torch\n\n@torch.compile\ndef f(ids: torch.Tensor, n: int):\n"
            "    idxs = torch.nonzero(ids == 101)\n    mask = torch.eye(n, dtype=torch.bool)\n"
            "    prev = 0\n    for i in range(idxs.shape[0]):\n        row, col = idxs[i]\n"
            "        mask[prev + 1: col + 1, prev + 1: col + 1] = True\n        prev = col\n"
            "    return mask\n", ["GM402", "GM401"], None),
    Example("declined: `torch.linalg.lstsq` (its residuals' and rank's shapes depend on the data; torchimize's solvers)",
            "import torch\n\n@torch.compile\ndef f(H: torch.Tensor, g: torch.Tensor):\n"
            "    h = -torch.linalg.lstsq(H, g, rcond=None, driver=None)[0]\n    return h * 2\n", ["GM402"], None),
    Example("time.time() in compiled code", "import time\nimport torch\n\n@torch.compile\ndef f(x):\n"
            "    t0 = time.time()\n    return x + t0\n", ["GM403"], None),
    Example("`requires_grad` set on a tensor the graph computed (reversible layers' recomputation)",
            "import torch\n\n@torch.compile\ndef f(x: torch.Tensor):\n    y = x * 2\n"
            "    y.requires_grad = True\n    return y.sum()\n", ["GM405"], None),
    Example("`requires_grad_()` on a detached copy (a gradient penalty, an input attack)",
            "import torch\n\n@torch.compile\ndef f(x: torch.Tensor):\n"
            "    y = x.detach().requires_grad_()\n    return (y * y).sum()\n", ["GM405"], None),
    Example("not flagged: `requires_grad_()` on an input (a leaf Dynamo traces)",
            "import torch\n\n@torch.compile\ndef f(x: torch.Tensor):\n    x.requires_grad_()\n"
            "    return (x * 2).sum()\n", [], None),
    Example("not flagged: `requires_grad_(False)`",
            "import torch\n\n@torch.compile\ndef f(x: torch.Tensor):\n    y = x * 2\n"
            "    y.requires_grad_(False)\n    return y.sum()\n", [], None),
    Example("not flagged: `repeat_interleave` with Python-int repeats (a static output shape)",
            "import torch\n\n@torch.compile\ndef f(x: torch.Tensor):\n"
            "    return x.repeat_interleave(2, dim=1, output_size=x.shape[1] * 2)\n", [], None),
    Example("`repeat_interleave` with tensor repeats and no `output_size`",
            "import torch\n\n@torch.compile\ndef f(x: torch.Tensor, counts: torch.Tensor):\n"
            "    return x.repeat_interleave(counts, dim=0)\n", ["GM402"], None),
    Example("not flagged: assigning through a boolean mask (an index_put Dynamo traces)",
            "import torch\n\n@torch.compile\ndef f(x: torch.Tensor):\n    y = x.clone()\n"
            "    y[x > 0] = 0.0\n    return y\n", [], None),
    Example("not flagged: `.item()` outside compiled code", "import torch\n\ndef f(x):\n"
            "    return x.sum().item()\n", [], None),
]
