"""[Route] GM601: a mixture-of-experts dispatch loop becomes fixed-shape, so Dynamo captures it
as one graph.

The pattern (every transformers MoE family has a variant of it): a Python loop over the experts
that selects the tokens routed to each expert with an operator whose output size depends on the
routing (one-argument `torch.where(mask)`, `nonzero`, a boolean mask index), runs the expert on
those tokens only, and adds the weighted result back (`index_add_`, a masked assignment); often
the loop visits only the experts that were hit, read into Python with `.nonzero().tolist()`.
Each of these breaks the graph (GB0036 / GB0124), once per expert and layer.

Mended forms (plain torch code, no runtime helper):

  hit = (mask.sum(dim=(-1, -2)) > 0).nonzero(as_tuple=True)[0].tolist()
      ->  hit = range((mask.sum(dim=(-1, -2)) > 0).shape[0])        # every expert position
  idx, top_x = torch.where(expert_mask[e])                          # the routed (choice, token) pairs
      ->  gm_routed = expert_mask[e] != 0
          idx, top_x = [g.reshape(-1) for g in torch.meshgrid(
              *[torch.arange(n, device=gm_routed.device) for n in gm_routed.shape], indexing="ij")]
          gm_routed = gm_routed.reshape(-1)                       # ALL pairs, and which are routed
  out.index_add_(0, top_x, y)
      ->  out.index_add_(0, top_x, torch.where(gm_routed, (y).movedim(0, -1), 0).movedim(-1, 0))
  next_states[m] = expert(hidden_states[m])                        # m: a boolean token mask
      ->  next_states.copy_(torch.where(m.reshape(m.shape + (1,) * (next_states.dim() - m.dim())),
                                        expert(hidden_states), next_states))

So every expert runs on every (choice, token) position of its mask (K x T rows for top-K routing
over T tokens, E x K x T in all; a boolean token mask: T rows per expert, E x T in all) instead of
on the routed ones only, and the rows that were not routed to it are dropped by `torch.where`
(not multiplied by a zero weight: an expert's output on a token it was not meant for may be inf
or nan, and inf * 0 is nan).

Legality, checked statically (else the mend declines and says why):
  * the experts act per token: the expert called on the routed block is a module of this file
    (`self.experts[i]`, `getattr(self.experts, ...)`, a sub-module attribute) whose `forward` only
    applies per-token layers (nn.Linear, dropout, activations, LayerNorm, a module of this file
    that passes the same check), elementwise ops, reductions and `chunk`/`split` over the last
    dimension, and products with weights that are not routed values; no attention, no batch
    statistics, no op over the token dimension;
  * the routed values (gathered with the selection, and what is computed from them) are used
    only per token: no `.shape`/`len()`/`numel()` of them, no reduction over rows, no Python
    branch on their values; reshapes keep the last dimension (`.reshape(-1, d)`);
  * the combine is a weighted sum: the only effect of the loop body is `F.index_add_(0, idx, y)`
    (or `F = F.index_add(0, idx, y)`) with idx from the selection, or a masked assignment
    `F[m] = y`; nothing else is written (no attribute, no list, no other in-place op), and no
    name the loop assigns is read after it;
  * the selection variables are used only to gather, in the combine, and in emptiness tests
    (`if top_x.shape[0] == 0: continue`, `if idx.numel() > 0:`), which then see the full block:
    an expert with no tokens adds zeros instead of being skipped;
  * assumed, not checked: the mask's dimensions are the extents of the tensors its positions
    index (a one_hot of the top-k choices over the tokens, as in every family above), so every
    position, routed or not, is a valid index where the routed ones were;
  * a hit list (`H = V.nonzero(as_tuple=True)[0].tolist()`) is used only as the loop's iterable,
    and V is a per-expert reduction (a `.sum`/`.any`/`.amax` over dimensions), so visiting every
    position of V visits every expert once, and the loop body adds nothing for an expert not hit.

Always UNSAFE: it changes the arithmetic. Each expert runs on all rows, which costs E times the
expert FLOPs and memory of the routed version (E: the number of experts) and can change the
last bits of a row's result (a matrix product over a different block of rows may be blocked
differently); the combine adds the same terms in the same order (plus exact zeros), so on the CPU
outputs are usually bitwise equal, and otherwise within a few ulps. In training, a dropout
inside an expert draws other random numbers (it now sees more rows).
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field
from typing import Optional

from graphmend.analysis.astwalk import walk as fast_walk  # ast.walk's nodes and order, without contexts/operators
from graphmend.analysis.detect import Site, _bound_names
from graphmend.findings import Applicability, TextEdit
from graphmend.rules.base import claim_safely, Context, Example, Verdict

CODES = ("GM601",)
UNSAFE_WHY = ("changes the arithmetic: every expert runs on all {rows} of its mask ({total} expert "
              "rows in all for E experts, instead of the routed ones), about E times the expert "
              "FLOPs and memory; rows not routed to an expert are dropped with torch.where, so "
              "inf/nan there do not leak; outputs match within a few ulps (often bitwise on the "
              "CPU); a dropout inside an expert draws other random numbers in training")
ROUTED = "gm_routed"
MAX_DEPTH = 3

# per-token layers: a call applies to each row on its own
PER_TOKEN_MODULES = frozenset({
    "Linear", "Dropout", "LayerNorm", "Identity", "GELU", "SiLU", "ReLU", "Tanh", "Sigmoid",
    "GELUActivation", "NewGELUActivation", "FastGELUActivation", "QuickGELUActivation", "SiLUActivation",
    "ReLU6", "LeakyReLU", "Mish", "Softplus", "ELU", "Hardswish", "Hardsigmoid", "Dropout1d",
})
ACTIVATION_TABLES = frozenset({"ACT2FN", "ACT2CLS"})
ACTIVATION_FACTORIES = frozenset({"get_activation"})
# torch.<f>(row, ...) / F.<f>(row, ...) that act elementwise or over the last dimension only
ELEMENTWISE = frozenset({
    "relu", "gelu", "silu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "abs", "neg", "square",
    "mul", "add", "sub", "div", "pow", "clamp", "clip", "maximum", "minimum", "where", "erf", "softplus",
    "mish", "leaky_relu", "relu6", "hardswish", "hardsigmoid", "elu", "celu", "selu", "glu", "dropout",
    "nan_to_num", "reciprocal", "sign", "log1p", "expm1", "logaddexp", "lerp",
})
ROW_METHODS = frozenset({
    "to", "type", "type_as", "float", "half", "bfloat16", "double", "contiguous", "clone", "detach",
    "abs", "exp", "sigmoid", "tanh", "relu", "neg", "sqrt", "rsqrt", "pow", "mul", "add", "sub", "div",
    "clamp", "clamp_min", "clamp_max", "square", "nan_to_num", "reciprocal", "masked_fill", "mul_",
    "add_", "div_", "sub_", "clamp_", "log", "erf", "sign",
})
LAST_DIM_METHODS = frozenset({"sum", "mean", "softmax", "log_softmax", "amax", "amin", "norm",
                              "chunk", "split", "unsqueeze", "var", "std", "cumsum"})
MATMUL = frozenset({"matmul", "mm", "linear"})
EMPTY_TESTS = frozenset({"numel", "nelement"})
REDUCERS = frozenset({"sum", "any", "amax", "max", "count_nonzero"})


class Decline(Exception):
    pass


def message(site: Site) -> str:
    return ("expert dispatch selects each expert's tokens with a data-dependent shape "
            f"({site.detail}) and breaks the graph per expert and layer")


# --- detection ---------------------------------------------------------------------------------
def _call_name(c: ast.AST) -> str:
    if isinstance(c, ast.Call):
        f = c.func
        if isinstance(f, ast.Attribute):
            return f.attr
        if isinstance(f, ast.Name):
            return f.id
    return ""


def _loops(fn: ast.AST):
    """For loops of the function body (not inside nested definitions)."""
    stack = list(getattr(fn, "body", []))
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(n, ast.For):
            yield n
        stack.extend(c for c in ast.iter_child_nodes(n) if isinstance(c, ast.stmt))


def _is_combine(s: ast.stmt) -> bool:
    if isinstance(s, ast.Expr) and _call_name(s.value) in ("index_add_", "index_add"):
        return True
    if isinstance(s, ast.Assign) and isinstance(s.value, ast.Call) and _call_name(s.value) == "index_add":
        return True
    return isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Subscript)


def _walk_body(body):
    for s in body:
        for n in fast_walk(s):
            if isinstance(n, ast.stmt):
                yield n


def _hit_list(func: ast.AST, loop: ast.For) -> Optional[ast.Assign]:
    """`H = <V>.nonzero(...)[0].tolist()` (or `torch.nonzero(V, ...)` / `torch.where(V)`) bound
    before the loop that iterates H."""
    if not isinstance(loop.iter, ast.Name):
        return None
    name = loop.iter.id
    found = None
    for n in fast_walk(func):
        if isinstance(n, ast.Assign) and n.lineno < loop.lineno and any(
                isinstance(t, ast.Name) and t.id == name for t in n.targets):
            found = n
    if found is not None and _hit_source(found.value) is not None:
        return found
    return None


def _hit_source(e: ast.expr) -> Optional[ast.expr]:
    """V in `V.nonzero(as_tuple=True)[0].tolist()`, `torch.nonzero(V, as_tuple=True)[0].tolist()`,
    `torch.where(V)[0].tolist()`."""
    if not (isinstance(e, ast.Call) and _call_name(e) == "tolist" and not e.args):
        return None
    sub = e.func.value
    if not (isinstance(sub, ast.Subscript) and isinstance(sub.slice, ast.Constant) and sub.slice.value == 0):
        return None
    c = sub.value
    if not isinstance(c, ast.Call):
        return None
    name = _call_name(c)
    if name == "nonzero":
        if not any(k.arg == "as_tuple" and isinstance(k.value, ast.Constant) and k.value.value is True
                   for k in c.keywords):
            return None
        if isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name) \
                and c.func.value.id == "torch":
            return c.args[0] if len(c.args) == 1 else None
        return c.func.value if not c.args else None
    if name == "where" and len(c.args) == 1 and not c.keywords:
        return c.args[0]
    return None


def _selector(s: ast.stmt) -> Optional[ast.Call]:
    """`a, b = torch.where(M)` / `M.nonzero(as_tuple=True)` unpacked into names."""
    if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Tuple)
            and all(isinstance(t, ast.Name) for t in s.targets[0].elts) and isinstance(s.value, ast.Call)):
        return None
    c = s.value
    if _call_name(c) == "where" and len(c.args) == 1 and not c.keywords:
        return c
    if _call_name(c) == "nonzero" and any(k.arg == "as_tuple" for k in c.keywords):
        return c
    return None


def claim_sites(sites: list[Site], fi, symbols) -> list[Site]:
    from graphmend.rules import grouped  # its sibling: sorted tokens cut by `.tolist()` counts (GM605)
    return grouped.claim_sites(claim_safely(_claim, sites, fi, symbols), fi, symbols)


def _claim(sites: list[Site], fi, symbols) -> list[Site]:
    """Hand the break sites of an expert dispatch loop (its selection, and the hit list before
    it) to GM601: one site per break location, all carrying the loop, mended together."""
    func = fi.node
    out = list(sites)
    for loop in _loops(func):
        body = list(_walk_body(loop.body))
        if not any(_is_combine(s) for s in body):
            continue
        hit = _hit_list(func, loop)
        lo, hi = loop.lineno, loop.end_lineno or loop.lineno
        inside = [s for s in out if s.code in ("GM401", "GM402") and lo <= getattr(s.node, "lineno", 0) <= hi]
        at_hit = [s for s in out if hit is not None and s.code in ("GM401", "GM402")
                  and hit.lineno <= getattr(s.node, "lineno", 0) <= (hit.end_lineno or hit.lineno)]
        selectors = [c for c in map(_selector, body) if c is not None]
        bools = _bool_names(func)
        masks = _mask_assigns(body, bools)
        routing = {id(n) for x in [*selectors, *masks] for n in ast.walk(x)}
        inside = [s for s in inside if id(s.node) in routing]  # other breaks in the loop stay theirs
        if not (selectors or hit is not None or masks):
            continue
        if hit is None and not _per_iteration(loop, body, [*selectors, *(m.targets[0].slice for m in masks)]):
            # the same selection on every pass (pyro's `field[key][idx] = new_field[key][idx]` over
            # a dataclass's fields, realcode round 8): a masked copy in a loop, no expert dispatch
            continue
        if hit is None and not _calls_on_selection(body, bools, {n for c in selectors for n in _targets(c, body)}):
            # no expert takes the selected tokens: a masked update in a loop over parameters
            # (pytorch-optimizer's SPAM, `grad[mask] = grad[mask].sign() * ...`, realcode round 11)
            continue
        # a masked store alone (`logits[logits < v[:, [-1]]] = -inf`, monai's top-k sampling loop)
        # is an index_put Dynamo traces: no dispatch breaks without a masked read
        if not (inside or at_hit or any(_reads_masked(m.value, bools) for m in masks)):
            continue
        anchors: list[tuple[ast.AST, str]] = []
        for s in at_hit:
            anchors.append((s.node, s.detail))
        for s in inside:
            anchors.append((s.node, s.detail))
        if not inside and masks:
            anchors.append((masks[0].targets[0], "boolean-mask indexing"))
        claimed = {id(s) for s in inside + at_hit}
        first = (inside + at_hit)[0] if (inside or at_hit) else None
        kinds = dict(first.kinds) if first is not None else {}
        seen_nodes = set()
        new = []
        for node, detail in anchors:
            if id(node) in seen_nodes:
                continue
            seen_nodes.add(id(node))
            new.append(Site("GM601", loop, fi, kinds, test=node, detail=detail or "routing",
                            note=f"the expert loop at line {loop.lineno}"))
        pos = min((out.index(s) for s in inside + at_hit), default=len(out))
        out = [s for s in out if id(s) not in claimed]
        out[pos:pos] = new
    return out


def _targets(selector: ast.Call, body) -> set[str]:
    """The names a selector call is unpacked into (`idx, top_x = torch.where(...)`)."""
    for s in body:
        if isinstance(s, ast.Assign) and s.value is selector:
            return _bound_names(s, stored_only=True)
    return set()


def _calls_on_selection(body, bools: set[str], chosen: set[str]) -> bool:
    """Some call in the loop that is no tensor method and no torch function takes the tokens the
    pass selects (read through a boolean mask or the selector's indices, or a name bound from
    such a read): the expert (`expert_layer(current_state)`, `self.experts[i](x[m])`)."""
    picked: set[str] = set()

    def selected(e: ast.expr) -> bool:
        for n in fast_walk(e):
            if isinstance(n, ast.Name) and n.id in picked:
                return True
            if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load):
                parts = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
                if any(_is_bool_mask(p, bools) or any(isinstance(m, ast.Name) and m.id in chosen for m in fast_walk(p))
                       for p in parts):
                    return True
        return False

    chosen = set(chosen)
    for _ in range(2):
        for s in body:
            if isinstance(s, ast.Assign) and isinstance(s.value, ast.Name) and s.value.id in chosen:
                chosen |= _bound_names(s, stored_only=True)  # DBRX's `token_list = token_idx`
            elif isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None and selected(s.value):
                picked |= _bound_names(s, stored_only=True)
    for s in body:
        for n in fast_walk(s):
            if not isinstance(n, ast.Call) or not any(selected(a) for a in n.args):
                continue
            f = n.func
            if isinstance(f, (ast.Subscript, ast.Name)) or (isinstance(f, ast.Attribute) and (
                    f.attr == "forward" or isinstance(f.value, ast.Subscript)
                    or (isinstance(f.value, ast.Name) and f.value.id == "self"))):
                if not (isinstance(f, ast.Name) and f.id in _BUILTIN_CALLS):
                    return True
    return False


_BUILTIN_CALLS = frozenset({"len", "int", "float", "bool", "list", "tuple", "sum", "max", "min", "abs", "print",
                            "isinstance", "range", "enumerate", "zip", "getattr"})


def _per_iteration(loop: ast.For, body, routing: list[ast.expr]) -> bool:
    """Some routing expression reads the loop's variables, or a name the loop body binds from
    them (`mask = routing == i`, `torch.where(expert_mask[e])`): each expert selects its own."""
    varying = _bound_names(loop, stored_only=True)
    for _ in range(2):
        for s in body:
            if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and s.value is not None \
                    and any(isinstance(n, ast.Name) and n.id in varying for n in fast_walk(s.value)):
                varying |= _bound_names(s, stored_only=True)
    return any(isinstance(n, ast.Name) and n.id in varying for e in routing for n in fast_walk(e))


def _mask_assigns(body, bools: set[str]) -> list[ast.Assign]:
    """`Z[m] = ...` in the loop with m a boolean mask (a name in `bools`, bound to a `.bool()`
    value, a comparison, or a subscript of one)."""
    out = []
    for s in body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Subscript) \
                and _is_bool_mask(s.targets[0].slice, bools):
            out.append(s)
    return out


def _reads_masked(e: ast.expr, bools: set[str]) -> bool:
    """`e` reads a value with a boolean mask (`hidden[mask]`, `x[m, :]`)."""
    for n in fast_walk(e):
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load):
            parts = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
            if any(_is_bool_mask(p, bools) for p in parts):
                return True
    return False


def _bool_names(func) -> set[str]:
    names: set[str] = set()
    for _ in range(2):
        for n in fast_walk(func):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                    and _is_bool_mask(n.value, names):
                names.add(n.targets[0].id)
    return names


def _is_bool_mask(e: ast.expr, bools: set[str]) -> bool:
    if isinstance(e, ast.Name):
        return e.id in bools
    if isinstance(e, ast.Compare):
        return True
    if isinstance(e, ast.Call) and _call_name(e) == "bool" and not e.args:
        return True
    if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name) and e.value.id in bools:
        idx = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
        return all(isinstance(i, (ast.Slice, ast.Name, ast.Constant)) for i in idx) and not any(
            isinstance(i, ast.Name) and i.id in bools for i in idx)
    return False


# --- legality ----------------------------------------------------------------------------------
@dataclass
class Plan:
    loop: ast.For
    hit: Optional[ast.Assign] = None
    hit_source: Optional[ast.expr] = None
    selector: Optional[ast.Assign] = None  # a, b = torch.where(M)
    combines: list[ast.stmt] = field(default_factory=list)  # index_add into F
    masked: list[ast.Assign] = field(default_factory=list)  # F[m] = y
    mask_gathers: list[ast.Subscript] = field(default_factory=list)  # X[m] reads
    rows_word: str = "K x T (choice, token) positions"
    total: str = "E x K x T"


class RowFlow:
    """Which values are routed rows (one per selected token), and whether they are used per token only."""

    def __init__(self, ctx: Context, cls, rows: set[str], depth: int = 0, index_vars=frozenset(),
                 masks=frozenset(), experts=None):
        self.ctx = ctx
        self.cls = cls
        self.rows = set(rows)
        self.tuples: set[str] = set()  # names holding a tuple of row blocks (chunk/split)
        self.depth = depth
        self.index_vars = set(index_vars)
        self.masks = set(masks)
        self.experts: dict[str, list] = dict(experts or {})  # local name -> expert classes
        self.gathers: list[ast.Subscript] = []
        self.mask_dumps: set[str] = set()  # the boolean token masks of a masked combine

    # expressions: True when the value is a routed block
    def row(self, e: ast.expr) -> bool:  # noqa: C901 - one case per node type
        if isinstance(e, ast.Name):
            if e.id in self.index_vars:
                raise Decline(f"the selection `{e.id}` is used outside an index, a combine or an emptiness test")
            return e.id in self.rows or e.id in self.tuples
        if isinstance(e, ast.Constant):
            return False
        if isinstance(e, ast.Subscript):
            return self._subscript(e)
        if isinstance(e, ast.BinOp):
            left, right = self.row(e.left), self.row(e.right)
            if isinstance(e.op, ast.MatMult) and right:
                raise Decline(f"`{ast.unparse(e)}` contracts over the routed rows")
            return left or right
        if isinstance(e, ast.UnaryOp):
            return self.row(e.operand)
        if isinstance(e, ast.BoolOp):
            return any([self.row(v) for v in e.values])
        if isinstance(e, ast.Compare):
            return any([self.row(v) for v in [e.left, *e.comparators]])
        if isinstance(e, ast.Call):
            return self._call(e)
        if isinstance(e, ast.Attribute):
            if isinstance(e.value, ast.Name) and e.value.id in self.index_vars:
                raise Decline(f"`{ast.unparse(e)}` reads the selection's {e.attr} (which experts were hit, "
                              "how many tokens each got); the mended selection has every position")
            if isinstance(e.value, ast.Name) and (e.value.id in self.rows or e.value.id in self.tuples):
                if e.attr in ("dtype", "device", "is_cuda"):
                    return False
                raise Decline(f"`{ast.unparse(e)}` reads the routed block's {e.attr}, which the mended "
                              "block (all rows) does not share")
            return self.row(e.value) if not isinstance(e.value, ast.Name) else False
        if isinstance(e, (ast.Tuple, ast.List)):
            return any([self.row(x) for x in e.elts])
        if isinstance(e, ast.Starred):
            return self.row(e.value)
        if isinstance(e, ast.JoinedStr):
            for v in ast.walk(e):
                if isinstance(v, ast.Name) and (v.id in self.rows or v.id in self.index_vars):
                    raise Decline("a routed value is formatted into a string")
            return False
        for n in ast.walk(e):
            if isinstance(n, ast.Name) and (n.id in self.rows or n.id in self.index_vars or n.id in self.tuples):
                raise Decline(f"`{ast.unparse(e)}` uses a routed value in a way not known to act per token")
        return False

    def _subscript(self, e: ast.Subscript) -> bool:
        idx = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
        sel = [i for i in idx if isinstance(i, ast.Name) and i.id in self.index_vars]
        mask = ast.dump(e.slice) in self.mask_dumps
        if mask:
            if self.row(e.value):
                raise Decline(f"`{ast.unparse(e)}` selects from a routed block")
            self.gathers.append(e)
            return True
        if sel:
            if self.row(e.value):
                raise Decline(f"`{ast.unparse(e)}` selects from a routed block")
            for i in idx:
                if i in sel or (isinstance(i, ast.Constant) and i.value is None):
                    continue
                if isinstance(i, ast.Slice) and i.lower is None and i.upper is None and i.step is None:
                    continue
                raise Decline(f"`{ast.unparse(e)}` mixes the selection with another index")
            self.gathers.append(e)
            return True
        for i in idx:
            for n in ast.walk(i):
                if isinstance(n, ast.Name) and n.id in self.rows:
                    raise Decline(f"`{ast.unparse(e)}` indexes with a routed value")
        if isinstance(e.value, ast.Name) and e.value.id in self.tuples:
            if isinstance(e.slice, ast.Constant) and isinstance(e.slice.value, int):
                return True
            raise Decline(f"`{ast.unparse(e)}` picks from routed chunks with a non-constant index")
        if self.row(e.value):
            if all(isinstance(i, ast.Slice) for i in idx) and isinstance(idx[0], ast.Slice) and \
                    idx[0].lower is None and idx[0].upper is None and idx[0].step is None:
                return True
            if idx and isinstance(idx[0], ast.Constant) and idx[0].value is Ellipsis:
                return True
            raise Decline(f"`{ast.unparse(e)}` indexes the routed rows themselves")
        return False

    def _last_dim(self, c: ast.Call, name: str) -> bool:
        if name == "unsqueeze":
            a = c.args[0] if c.args else next((k.value for k in c.keywords if k.arg == "dim"), None)
            return isinstance(a, ast.UnaryOp) and isinstance(a.op, ast.USub)
        dim = next((k.value for k in c.keywords if k.arg in ("dim", "axis")), None)
        if dim is None and name in ("chunk", "split") and len(c.args) >= 2:
            dim = c.args[1]
        if dim is None and name in ("sum", "mean", "softmax", "log_softmax", "amax", "amin", "cumsum") and c.args:
            dim = c.args[0]
        return isinstance(dim, ast.UnaryOp) and isinstance(dim.op, ast.USub) and \
            isinstance(dim.operand, ast.Constant) and dim.operand.value == 1

    def _call(self, c: ast.Call) -> bool:  # noqa: C901
        f = c.func
        args = [*c.args, *[k.value for k in c.keywords]]
        arg_rows = [self.row(a) for a in args]
        any_row = any(arg_rows)
        q = self.ctx.symbols.qualify(f) or ""
        if isinstance(f, ast.Attribute) and not q.startswith(("torch.", "transformers.")):
            recv = f.value
            if isinstance(recv, ast.Name) and recv.id == "self" and self.cls is not None:
                if not any_row:
                    return False
                self._check_module_attr(f.attr, c, arg_rows)
                return True
            if self.row(recv):
                name = f.attr
                if name in ROW_METHODS:
                    return True
                if name in ("reshape", "view"):
                    first = c.args[0] if c.args else None
                    if isinstance(first, ast.UnaryOp) and isinstance(first.op, ast.USub) and len(c.args) >= 2:
                        return True
                    raise Decline(f"`{ast.unparse(c)}` reshapes the routed block (only `.reshape(-1, d)` "
                                  "keeps its rows)")
                if name in MATMUL:
                    if any_row:
                        raise Decline(f"`{ast.unparse(c)}` multiplies two routed blocks")
                    return True
                if name in LAST_DIM_METHODS and self._last_dim(c, name):
                    return True
                raise Decline(f"`{ast.unparse(c)}` on a routed block may act across tokens")
            if any_row:
                raise Decline(f"`{ast.unparse(c)}` receives a routed block; cannot prove it acts per token")
            return False
        inline = _container_of(f.args[0]) if (isinstance(f, ast.Call) and isinstance(f.func, ast.Name)
                                              and f.func.id == "getattr" and f.args) else (
            _container_of(f.value) if isinstance(f, ast.Subscript) else None)
        if inline is not None:
            if not any_row:
                raise Decline("an expert is called on something other than the routed block")
            for cls in _classes_of(self.cls, inline, self.ctx):
                self._check_class(cls, c, arg_rows)
            return True
        if isinstance(f, ast.Name) and f.id in self.experts:
            if not any_row:
                raise Decline(f"the expert `{f.id}` is called on something other than the routed block")
            for cls in self.experts[f.id]:
                self._check_class(cls, c, arg_rows)
            return True
        if not any_row:
            return False
        name = q.rsplit(".", 1)[-1]
        if q.startswith("torch.") and name in ELEMENTWISE:
            return True
        if q.startswith("torch.") and name in MATMUL:
            if any(arg_rows[1:]) or not arg_rows[0]:
                raise Decline(f"`{ast.unparse(c)}` multiplies over the routed rows")
            return True
        if q.startswith("torch.") and name in LAST_DIM_METHODS and self._last_dim(c, name):
            return True
        raise Decline(f"`{ast.unparse(c)}` receives a routed block; cannot prove it acts per token")

    # modules
    def _check_module_attr(self, attr: str, c: ast.Call, arg_rows: list[bool]) -> None:
        kind = _attr_kind(self.cls, attr, self.ctx)
        if kind is None:
            raise Decline(f"cannot see what `self.{attr}` is (not assigned in __init__ of "
                          f"{self.cls.name})")
        if kind[0] == "per-token":
            return
        for cls in kind[1]:
            self._check_class(cls, c, arg_rows)

    def _check_class(self, cls, c: ast.Call, arg_rows: list[bool]) -> None:
        if self.depth >= MAX_DEPTH:
            raise Decline(f"{cls.name} nests modules too deeply to check")
        fwd = cls.methods.get("forward")
        if fwd is None:
            raise Decline(f"{cls.name} has no forward of its own to check")
        a = fwd.node.args
        params = [x.arg for x in [*a.posonlyargs, *a.args]][1:]
        if c.keywords or a.vararg or a.kwarg:
            rows = set(params) if any(arg_rows) else set()
            rows &= {p for p, r in zip(params, arg_rows) if r} if not c.keywords else rows
        else:
            rows = {p for p, r in zip(params, arg_rows) if r}
        sub = RowFlow(self.ctx, cls, rows, self.depth + 1)
        try:
            sub.block(fwd.node.body)
        except Decline as d:
            raise Decline(f"the expert {cls.name} may not act per token: {d}") from None

    # statements
    def block(self, body: list[ast.stmt]) -> None:
        for s in body:
            self.stmt(s)

    def stmt(self, s: ast.stmt) -> None:
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            return
        if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            value = s.value
            if value is None:
                return
            is_row = self.row(value)
            if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
                is_row = is_row or s.target.id in self.rows
            for t in targets:
                if isinstance(t, ast.Name):
                    chunked = is_row and isinstance(value, ast.Call) and _call_name(value) in ("chunk", "split")
                    (self.tuples if chunked else self.rows).add(t.id) if is_row else None
                    if not is_row:
                        self.rows.discard(t.id)
                        self.tuples.discard(t.id)
                elif isinstance(t, ast.Tuple) and all(isinstance(x, ast.Name) for x in t.elts):
                    for x in t.elts:
                        (self.rows.add(x.id) if is_row else self.rows.discard(x.id))
                else:
                    raise Decline(f"`{ast.unparse(s).splitlines()[0]}` writes to "
                                  f"`{ast.unparse(t)}`; only the combine may write")
            return
        if isinstance(s, ast.Return):
            if s.value is not None:
                self.row(s.value)
            return
        if isinstance(s, ast.If):
            if self.row(s.test):
                raise Decline(f"`if {ast.unparse(s.test)}:` branches on routed values")
            self.block(s.body)
            self.block(s.orelse)
            return
        if isinstance(s, ast.Pass):
            return
        raise Decline(f"`{ast.unparse(s).splitlines()[0]}` is not a statement known to act per token")


def _attr_kind(cls, attr: str, ctx: Context):
    """("per-token", None) | ("classes", [ClassInfo]) | None for `self.<attr>` of `cls`."""
    values = []
    for fi in cls.methods.values():
        for n in ast.walk(fi.node):
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    base = t.value if isinstance(t, ast.Subscript) else t
                    if isinstance(base, ast.Attribute) and base.attr == attr and \
                            isinstance(base.value, ast.Name) and base.value.id == "self":
                        values.append((fi, n.value))
    if not values:
        return None
    classes = []
    for fi, v in values:
        got = _value_classes(fi, v, ctx)
        if got is None:
            return None
        if got == "per-token":
            continue
        classes += got
    return ("classes", classes) if classes else ("per-token", None)


def _value_classes(fi, v: ast.expr, ctx: Context):
    """What a module-valued expression builds: "per-token", a list of this file's classes, or None."""
    if isinstance(v, ast.Subscript) and isinstance(v.value, ast.Name) and v.value.id in ACTIVATION_TABLES:
        return "per-token"
    if isinstance(v, ast.Call):
        q = ctx.symbols.qualify(v.func) or ""
        last = q.rsplit(".", 1)[-1]
        if last in ("ModuleList", "ModuleDict", "Sequential"):
            out = []
            for a in v.args:
                got = _container_classes(fi, a, ctx)
                if got is None:
                    return None
                out += got
            return out or "per-token"
        if last in PER_TOKEN_MODULES or last in ACTIVATION_FACTORIES:
            return "per-token"
        if isinstance(v.func, ast.Name) and v.func.id in ctx.symbols.classes:
            return [ctx.symbols.classes[v.func.id]]
        if isinstance(v.func, ast.Name):  # a parameter of __init__ with a class of this file as default
            a = fi.node.args
            params = [*a.posonlyargs, *a.args]
            defaults = dict(zip([p.arg for p in params][len(params) - len(a.defaults):], a.defaults))
            d = defaults.get(v.func.id)
            if isinstance(d, ast.Name) and d.id in ctx.symbols.classes:
                return [ctx.symbols.classes[d.id]]
    return None


def _container_classes(fi, e: ast.expr, ctx: Context):
    if isinstance(e, (ast.ListComp, ast.GeneratorExp)):
        return _container_classes(fi, e.elt, ctx)
    if isinstance(e, (ast.List, ast.Tuple)):
        out = []
        for x in e.elts:
            got = _container_classes(fi, x, ctx)
            if got is None:
                return None
            out += got
        return out
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mult):
        return _container_classes(fi, e.left, ctx)
    got = _value_classes(fi, e, ctx)
    if got == "per-token":
        return []
    return got


def _container_of(e: ast.expr) -> Optional[str]:
    """"experts" for `self.experts` / `self.experts.values()`."""
    if isinstance(e, ast.Call) and _call_name(e) in ("values",) and isinstance(e.func, ast.Attribute):
        e = e.func.value
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
        return e.attr
    return None


def _classes_of(cls, attr: str, ctx: Context) -> list:
    kind = _attr_kind(cls, attr, ctx) if cls is not None else None
    if kind is None:
        raise Decline(f"cannot see what `self.{attr}` holds (its experts' class must be in this file "
                      "to prove they act per token)")
    return kind[1] or []


def _expert_bindings(loop: ast.For, cls, ctx: Context) -> dict[str, list]:
    """Local names bound to one expert of `self.<container>`: `e = self.experts[i]`,
    `getattr(self.experts, ...)`, `for i, e in enumerate(self.experts.values())`."""
    out: dict[str, list] = {}
    container = _container_of

    def classes(attr: str):
        return _classes_of(cls, attr, ctx)

    t = loop.target
    if isinstance(t, ast.Tuple) and len(t.elts) == 2 and isinstance(loop.iter, ast.Call) and \
            _call_name(loop.iter) == "enumerate" and loop.iter.args:
        attr = container(loop.iter.args[0])
        if attr and isinstance(t.elts[1], ast.Name):
            out[t.elts[1].id] = classes(attr)
    for s in _walk_body(loop.body):
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            v = s.value
            attr = None
            if isinstance(v, ast.Subscript):
                attr = container(v.value)
            elif isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "getattr" and v.args:
                attr = container(v.args[0])
            if attr:
                out[s.targets[0].id] = classes(attr)
    return out


def analyse(site: Site, ctx: Context) -> Plan:
    loop: ast.For = site.node
    func = site.func.node
    cls = site.func.cls
    plan = Plan(loop)
    if loop.orelse:
        raise Decline("the loop has an `else:` clause")
    hit = _hit_list(func, loop)
    if hit is not None:
        plan.hit, plan.hit_source = hit, _hit_source(hit.value)
        name = loop.iter.id
        uses = [n for n in ast.walk(func) if isinstance(n, ast.Name) and n.id == name and n is not loop.iter
                and n.lineno > (hit.end_lineno or hit.lineno)]
        if uses:
            raise Decline(f"the hit list `{name}` is also used at line {uses[0].lineno}; only the loop may "
                          "read which experts were hit")
        if len(hit.targets) != 1 or not ctx.owns_lines(hit):
            raise Decline("the hit list's statement shares its line or has several targets")
        if not any(_call_name(n) in REDUCERS and any(k.arg in ("dim", "axis") for k in n.keywords)
                   or (_call_name(n) in REDUCERS and n.args)
                   for n in _reachable_exprs(func, plan.hit_source, hit) if isinstance(n, ast.Call)):
            raise Decline("cannot prove the hit list indexes a per-expert vector (a reduction of the "
                          "expert mask over its other dimensions)")
    elif isinstance(loop.iter, ast.Name):
        raise Decline(f"the loop iterates `{loop.iter.id}`, whose expert indices are not known statically")
    body = list(_walk_body(loop.body))
    selectors = [s for s in body if _selector(s) is not None]
    if len(selectors) > 1:
        raise Decline("the loop selects tokens more than once")
    index_vars: set[str] = set()
    if selectors:
        sel = selectors[0]
        if sel not in loop.body:
            raise Decline("the selection is nested under another statement of the loop")
        plan.selector = sel
        index_vars = {t.id for t in sel.targets[0].elts}
        if not ctx.owns_lines(sel):
            raise Decline("the selection shares its line with another statement")
    bools = _bool_names(func)
    masks = {n for n in bools}
    experts = _expert_bindings(loop, cls, ctx)
    rf = RowFlow(ctx, cls, set(), 0, index_vars, masks if not selectors else set(), experts)
    if not selectors:
        rf.mask_dumps = {ast.dump(s.targets[0].slice) for s in _mask_assigns(loop.body, bools)}
    assigned: set[str] = set()
    _loop_block(rf, plan, loop.body, index_vars, bools, assigned, top=True)
    if not plan.combines and not plan.masked:
        raise Decline("the loop has no weighted-sum combine (`out.index_add_(0, idx, y)` or `out[mask] = y`)")
    if plan.combines and plan.masked:
        raise Decline("the loop combines both with index_add and with a masked assignment")
    if plan.masked and selectors:
        raise Decline("the loop mixes a selection by index with a masked assignment")
    if plan.masked:
        plan.rows_word, plan.total = "T tokens", "E x T"
    after = {n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
             and n.lineno > (loop.end_lineno or loop.lineno)}
    leaked = (assigned | index_vars) & after
    if isinstance(loop.target, ast.Name):
        leaked.discard(loop.target.id)  # the index itself is the same after the loop only if...
        if loop.target.id in after:
            leaked.add(loop.target.id)
    if leaked:
        raise Decline(f"`{sorted(leaked)[0]}`, assigned in the loop, is read after it; its value would change")
    if ctx.torch_name() is None:
        raise Decline("the file does not `import torch`")
    return plan


def _reachable_exprs(func, e: ast.expr, before: ast.stmt):
    """Nodes of `e` and of the last assignment (before `before`) of each name it reads, twice over."""
    seen = []
    frontier = [e]
    for _ in range(3):
        nxt = []
        for x in frontier:
            for n in ast.walk(x):
                seen.append(n)
                if isinstance(n, ast.Name):
                    last = None
                    for s in ast.walk(func):
                        if isinstance(s, ast.Assign) and s.lineno < before.lineno and any(
                                isinstance(t, ast.Name) and t.id == n.id for t in s.targets):
                            last = s
                    if last is not None:
                        nxt.append(last.value)
        frontier = nxt
    return seen


def _empty_test(e: ast.expr, index_vars: set[str], rows: set[str]) -> bool:
    """`v.shape[0] == 0`, `v.numel() > 0`, `len(v) == 0` (and `not ...`) on a selection or routed block."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        return _empty_test(e.operand, index_vars, rows)
    if not (isinstance(e, ast.Compare) and len(e.ops) == 1 and isinstance(e.comparators[0], ast.Constant)
            and e.comparators[0].value == 0):
        return False
    x = e.left
    names = index_vars | rows
    if isinstance(x, ast.Subscript) and isinstance(x.value, ast.Attribute) and x.value.attr == "shape" \
            and isinstance(x.value.value, ast.Name) and x.value.value.id in names:
        return True
    if isinstance(x, ast.Call) and _call_name(x) in EMPTY_TESTS and isinstance(x.func, ast.Attribute) \
            and isinstance(x.func.value, ast.Name) and x.func.value.id in names:
        return True
    return isinstance(x, ast.Call) and isinstance(x.func, ast.Name) and x.func.id == "len" and \
        len(x.args) == 1 and isinstance(x.args[0], ast.Name) and x.args[0].id in names


def _loop_block(rf: RowFlow, plan: Plan, body, index_vars, bools, assigned, top=False) -> None:
    for s in body:
        if s is plan.selector:
            c = s.value
            m = c.args[0] if c.args else c.func.value
            if rf.row(m):
                raise Decline("the selection is taken on routed values")
            assigned |= index_vars
            continue
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                and isinstance(s.value, ast.Name) and s.value.id in index_vars:
            index_vars.add(s.targets[0].id)  # an alias of the selection (`token_list = token_idx`)
            rf.index_vars.add(s.targets[0].id)
            assigned.add(s.targets[0].id)
            continue
        if isinstance(s, ast.If) and _empty_test(s.test, index_vars, rf.rows):
            if len(s.body) == 1 and isinstance(s.body[0], ast.Continue) and not s.orelse:
                continue
            if s.orelse:
                raise Decline("an emptiness test with an `else:` branch")
            _loop_block(rf, plan, s.body, index_vars, bools, assigned)
            continue
        if isinstance(s, (ast.Continue, ast.Break)):
            raise Decline(f"`{ast.unparse(s)}` outside an emptiness test changes which experts run")
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and _call_name(s.value) == "index_add_":
            _combine(rf, plan, s, s.value, index_vars)
            continue
        if isinstance(s, ast.Assign) and isinstance(s.value, ast.Call) and _call_name(s.value) == "index_add" \
                and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                and isinstance(s.value.func, ast.Attribute) and isinstance(s.value.func.value, ast.Name) \
                and s.value.func.value.id == s.targets[0].id:
            _combine(rf, plan, s, s.value, index_vars)
            continue
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Subscript) \
                and ast.dump(s.targets[0].slice) in rf.mask_dumps \
                and isinstance(s.targets[0].value, ast.Name) and not index_vars:
            if not rf.row(s.value):
                raise Decline(f"`{ast.unparse(s)}` assigns a value that is not computed from the routed tokens")
            if not top or not rf.ctx.owns_lines(s):
                raise Decline("the masked assignment is nested or shares its line")
            plan.masked.append(s)
            continue
        if isinstance(s, ast.For):
            raise Decline("a nested loop inside the expert loop")
        if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in (s.targets if isinstance(s, ast.Assign) else [s.target]):
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        assigned.add(n.id)
        if isinstance(s, ast.If):
            if rf.row(s.test):
                raise Decline(f"`if {ast.unparse(s.test)}:` branches on routed values")
            _loop_block(rf, plan, s.body, index_vars, bools, assigned)
            _loop_block(rf, plan, s.orelse, index_vars, bools, assigned)
            continue
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            if rf.row(s.value):
                raise Decline(f"`{ast.unparse(s)}` is called for its effect on routed values")
            if _call_name(s.value).endswith("_") or _call_name(s.value) in ("append", "extend", "update"):
                raise Decline(f"`{ast.unparse(s)}` changes state in the loop; only the combine may write")
            continue
        rf.stmt(s)
    plan.mask_gathers = [g for g in rf.gathers if ast.dump(g.slice) in rf.mask_dumps]


def _combine(rf: RowFlow, plan: Plan, s: ast.stmt, c: ast.Call, index_vars: set[str]) -> None:
    args = list(c.args)
    kw = {k.arg: k.value for k in c.keywords}
    names = ["dim", "index", "source"]
    for i, a in enumerate(args[:3]):
        kw.setdefault(names[i], a)
    if set(kw) - {"dim", "index", "source", "alpha"} or len(args) > 3 or "alpha" in kw:
        raise Decline(f"`{ast.unparse(c)}` has arguments the mend does not handle")
    dim, index, src = kw.get("dim"), kw.get("index"), kw.get("source")
    if not (isinstance(dim, ast.Constant) and dim.value == 0):
        raise Decline("the combine adds along a dimension other than 0")
    if not (isinstance(index, ast.Name) and index.id in index_vars):
        raise Decline("the combine's index is not the token selection")
    if src is None or not rf.row(src):
        raise Decline("the combine adds a value not computed from the routed tokens")
    recv = c.func.value if isinstance(c.func, ast.Attribute) else None
    if recv is None or rf.row(recv):
        raise Decline("the combine adds into a routed block")
    if not rf.ctx.owns_lines(s):
        raise Decline("the combine shares its line with another statement")
    plan.combines.append(src)


def judge(site: Site, ctx: Context, env) -> Verdict:
    try:
        plan = analyse(site, ctx)
    except Decline as d:
        return Verdict.decline(f"[Route] declines: {d}")
    except (AttributeError, IndexError, KeyError, TypeError, ValueError) as e:  # never lose the check
        return Verdict.decline(f"[Route] could not analyse this loop ({type(e).__name__}: {e})")
    return Verdict(Applicability.UNSAFE,
                   f"Route every expert over all {plan.rows_word}, kept by torch.where "
                   f"({plan.total} expert rows instead of the routed ones)",
                   UNSAFE_WHY.format(rows=plan.rows_word, total=plan.total))


# --- the edit ----------------------------------------------------------------------------------
def fix(site: Site, ctx: Context, env, span_of) -> Optional[list[TextEdit]]:
    try:
        plan = analyse(site, ctx)
    except (Decline, AttributeError, IndexError, KeyError, TypeError, ValueError):
        return None
    tn = ctx.torch_name()
    edits: list[TextEdit] = []
    if plan.hit is not None:
        v = plan.hit_source
        vs = ctx.src(v) if isinstance(v, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)) else f"({ctx.src(v)})"
        edits.append(TextEdit(span_of(plan.hit.value), f"range({vs}.shape[0])"))
    if plan.selector is not None:
        sel = plan.selector
        c = sel.value
        m = c.args[0] if c.args else c.func.value
        ind = ctx.indent_of(sel)
        targets = ctx.src(sel.targets[0])
        ms = ctx.src(m) if isinstance(m, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)) else f"({ctx.src(m)})"
        # short statements (the wrapper splits a long one-line statement, not a multi-line one)
        lines = ["# [Route] every position, and which are routed",
                 f"{ind}{ROUTED} = {ms} != 0",
                 f"{ind}gm_grid = [{tn}.arange(gm_n, device={ROUTED}.device) for gm_n in {ROUTED}.shape]",
                 f"{ind}{targets} = [gm_g.reshape(-1) for gm_g in {tn}.meshgrid(*gm_grid, indexing=\"ij\")]",
                 f"{ind}{ROUTED} = {ROUTED}.reshape(-1)"]
        edits.append(TextEdit(span_of(sel), "\n".join(lines)))
        for src in plan.combines:
            edits.append(TextEdit(span_of(src),
                                  f"{tn}.where({ROUTED}, ({ctx.src(src)}).movedim(0, -1), 0).movedim(-1, 0)"))
    for g in plan.mask_gathers:
        edits.append(TextEdit(span_of(g), ctx.src(g.value)))
    for s in plan.masked:
        t: ast.Subscript = s.targets[0]
        z, m = ctx.src(t.value), ctx.src(t.slice)
        value = ctx.src(s.value)
        for g in plan.mask_gathers:  # gathers inside the value: already rewritten text-wise below
            value = value.replace(ctx.src(g), ctx.src(g.value))
        if "\n" in value:  # one line, so that the wrapper can split it at the file's line length
            value = ast.unparse(_Ungather(plan.mask_gathers).visit(copy.deepcopy(s.value)))
        ind = ctx.indent_of(s)
        text = (f"# [Route] every token, kept where routed\n"
                f"{ind}gm_mask = {m}\n"
                f"{ind}gm_mask = gm_mask.reshape(gm_mask.shape + (1,) * ({z}.dim() - gm_mask.dim()))\n"
                f"{ind}{z}.copy_({tn}.where(gm_mask, {value}, {z}))")
        edits = [e for e in edits if not _inside(e, span_of(s))]
        edits.append(TextEdit(span_of(s), text))
    return edits


class _Ungather(ast.NodeTransformer):
    """A copy of an expression with the mask gathers `x[m]` replaced by `x` (the whole block)."""

    def __init__(self, gathers) -> None:
        self.keys = {(g.lineno, g.col_offset, g.end_lineno, g.end_col_offset): g.value for g in gathers}

    def visit_Subscript(self, node):
        key = (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)
        if key in self.keys:
            return copy.deepcopy(self.keys[key])
        return self.generic_visit(node)


def _inside(e: TextEdit, span) -> bool:
    a, b = e.span, span
    return (b.start.line, b.start.col) <= (a.start.line, a.start.col) and \
        (a.end.line, a.end.col) <= (b.end.line, b.end.col)


# --- examples ----------------------------------------------------------------------------------
_EXPERT = (
    "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n"
    "class Expert(nn.Module):\n"
    "    def __init__(self, d=8, h=16):\n"
    "        super().__init__()\n"
    "        self.w1 = nn.Linear(d, h, bias=False)\n"
    "        self.w2 = nn.Linear(h, d, bias=False)\n"
    "        self.act_fn = nn.SiLU()\n\n"
    "    def forward(self, x):\n"
    "        return self.w2(self.act_fn(self.w1(x)))\n\n\n"
    "class SparseMoe(nn.Module):\n"
    "    def __init__(self, d=8, num_experts=4, top_k=2):\n"
    "        super().__init__()\n"
    "        self.num_experts, self.top_k = num_experts, top_k\n"
    "        self.gate = nn.Linear(d, num_experts, bias=False)\n"
    "        self.experts = nn.ModuleList([Expert(d) for _ in range(num_experts)])\n\n"
    "    def forward(self, hidden_states):\n"
    "        tokens, hidden_dim = hidden_states.shape\n"
    "        routing_weights = F.softmax(self.gate(hidden_states), dim=1, dtype=torch.float)\n"
    "        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)\n"
    "        final = torch.zeros((tokens, hidden_dim), dtype=hidden_states.dtype)\n"
    "        expert_mask = F.one_hot(selected_experts, num_classes=self.num_experts).permute(2, 1, 0)\n"
)
_MIXTRAL_LOOP = (
    "        for expert_idx in expert_hit:\n"
    "            expert_layer = self.experts[expert_idx]\n"
    "            idx, top_x = torch.where(expert_mask[expert_idx])\n"
    "            if top_x.shape[0] == 0:\n"
    "                continue\n"
    "            current_state = hidden_states[None, top_x].reshape(-1, hidden_dim)\n"
    "            current = expert_layer(current_state) * routing_weights[top_x, idx, None]\n"
    "            final.index_add_(0, top_x, current.to(hidden_states.dtype))\n"
)
_MIXTRAL_MENDED_LOOP = (
    "        for expert_idx in expert_hit:\n"
    "            expert_layer = self.experts[expert_idx]\n"
    "            # [Route] every position, and which are routed\n"
    "            gm_routed = expert_mask[expert_idx] != 0\n"
    "            gm_grid = [\n"
    "                torch.arange(gm_n, device=gm_routed.device) for gm_n in gm_routed.shape\n"
    "            ]\n"
    "            idx, top_x = [\n"
    "                gm_g.reshape(-1) for gm_g in torch.meshgrid(*gm_grid, indexing=\"ij\")\n"
    "            ]\n"
    "            gm_routed = gm_routed.reshape(-1)\n"
    "            if top_x.shape[0] == 0:\n"
    "                continue\n"
    "            current_state = hidden_states[None, top_x].reshape(-1, hidden_dim)\n"
    "            current = expert_layer(current_state) * routing_weights[top_x, idx, None]\n"
    "            final.index_add_(\n"
    "                0,\n"
    "                top_x,\n"
    "                torch.where(\n"
    "                    gm_routed, (current.to(hidden_states.dtype)).movedim(0, -1), 0\n"
    "                ).movedim(-1, 0),\n"
    "            )\n"
)
_HIT = "        expert_hit = (expert_mask.sum(dim=(-1, -2)) > 0).nonzero(as_tuple=True)[0].tolist()\n"
_HIT_MENDED = "        expert_hit = range((expert_mask.sum(dim=(-1, -2)) > 0).shape[0])\n"

_TOP1 = (
    "import torch\nfrom torch import nn\n\n\n"
    "class DenseActDense(nn.Module):\n"
    "    def __init__(self, d=8, h=16):\n"
    "        super().__init__()\n"
    "        self.wi = nn.Linear(d, h, bias=False)\n"
    "        self.wo = nn.Linear(h, d, bias=False)\n"
    "        self.dropout = nn.Dropout(0.1)\n\n"
    "    def forward(self, hidden_states):\n"
    "        hidden_states = self.dropout(torch.relu(self.wi(hidden_states)))\n"
    "        if hidden_states.dtype != self.wo.weight.dtype:\n"
    "            hidden_states = hidden_states.to(self.wo.weight.dtype)\n"
    "        return self.wo(hidden_states)\n\n\n"
    "class Top1Moe(nn.Module):\n"
    "    def __init__(self, d=8, num_experts=4, expert_class=DenseActDense):\n"
    "        super().__init__()\n"
    "        self.router = nn.Linear(d, num_experts, bias=False)\n"
    "        self.experts = nn.ModuleDict()\n"
    "        for idx in range(num_experts):\n"
    "            self.experts[f\"expert_{idx}\"] = expert_class(d)\n\n"
    "    def forward(self, hidden_states):\n"
    "        probs = torch.softmax(self.router(hidden_states), dim=-1)\n"
    "        router_mask = torch.nn.functional.one_hot(probs.argmax(dim=-1), probs.shape[-1]).bool()\n"
    "        router_probs = probs.max(dim=-1, keepdim=True).values\n"
    "        next_states = torch.zeros_like(hidden_states)\n"
    "        batch_size, seq_len, num_experts = router_mask.shape\n"
    "        idx_mask = router_mask.reshape(batch_size * seq_len, num_experts).sum(dim=0)\n"
)

_OLMOE_LOOP = _MIXTRAL_LOOP.replace("expert_hit:", "range(self.num_experts):")
_OLMOE_MENDED_LOOP = _MIXTRAL_MENDED_LOOP.replace("expert_hit:", "range(self.num_experts):")

EXAMPLES = [
    Example(
        "Mixtral / Qwen2-MoE: a hit list, one-argument torch.where per expert, index_add_ combine",
        _EXPERT + _HIT + _MIXTRAL_LOOP + "        return final\n",
        ["GM601", "GM601", "GM601"],
        _EXPERT + _HIT_MENDED + _MIXTRAL_MENDED_LOOP + "        return final\n",
        unsafe=True),
    Example(
        "OLMoE / Qwen3-MoE / Jamba: every expert, emptiness test, index_add_ combine",
        _EXPERT + _OLMOE_LOOP + "        return final\n",
        ["GM601"],
        _EXPERT + _OLMOE_MENDED_LOOP + "        return final\n",
        unsafe=True),
    Example(
        "DeepSeek-V3: token-major mask, `if token_indices.numel() > 0:` around the combine",
        (
        'import torch\n'
        'from torch import nn\n'
        '\n'
        '\n'
        'class Mlp(nn.Module):\n'
        '    def __init__(self, d=8, h=16):\n'
        '        super().__init__()\n'
        '        self.up = nn.Linear(d, h)\n'
        '        self.down = nn.Linear(h, d)\n'
        '\n'
        '    def forward(self, x):\n'
        '        return self.down(torch.relu(self.up(x)))\n'
        '\n'
        '\n'
        'class Moe(nn.Module):\n'
        '    def __init__(self, d=8, num_experts=4, top_k=2):\n'
        '        super().__init__()\n'
        '        self.top_k = top_k\n'
        '        self.gate = nn.Linear(d, num_experts, bias=False)\n'
        '        self.experts = nn.ModuleList([Mlp(d) for _ in range(num_experts)])\n'
        '\n'
        '    def forward(self, hidden_states):\n'
        '        topk_weights, topk_indices = torch.topk(self.gate(hidden_states).sigmoid(), self.top_k, dim=-1)\n'
        '        final = torch.zeros_like(hidden_states)\n'
        '        expert_mask = torch.nn.functional.one_hot(topk_indices, num_classes=len(self.experts))\n'
        '        expert_mask = expert_mask.permute(2, 0, 1)\n'
        '        for expert_idx in range(len(self.experts)):\n'
        '            expert = self.experts[expert_idx]\n'
        '            token_indices, weight_indices = torch.where(expert_mask[expert_idx])\n'
        '            if token_indices.numel() > 0:\n'
        '                expert_weights = topk_weights[token_indices, weight_indices]\n'
        '                expert_output = expert(hidden_states[token_indices])\n'
        '                final.index_add_(0, token_indices, expert_output * expert_weights.unsqueeze(-1))\n'
        '        return final\n'
    ),
        ["GM601"],
        (
        'import torch\n'
        'from torch import nn\n'
        '\n'
        '\n'
        'class Mlp(nn.Module):\n'
        '    def __init__(self, d=8, h=16):\n'
        '        super().__init__()\n'
        '        self.up = nn.Linear(d, h)\n'
        '        self.down = nn.Linear(h, d)\n'
        '\n'
        '    def forward(self, x):\n'
        '        return self.down(torch.relu(self.up(x)))\n'
        '\n'
        '\n'
        'class Moe(nn.Module):\n'
        '    def __init__(self, d=8, num_experts=4, top_k=2):\n'
        '        super().__init__()\n'
        '        self.top_k = top_k\n'
        '        self.gate = nn.Linear(d, num_experts, bias=False)\n'
        '        self.experts = nn.ModuleList([Mlp(d) for _ in range(num_experts)])\n'
        '\n'
        '    def forward(self, hidden_states):\n'
        '        topk_weights, topk_indices = torch.topk(self.gate(hidden_states).sigmoid(), self.top_k, dim=-1)\n'
        '        final = torch.zeros_like(hidden_states)\n'
        '        expert_mask = torch.nn.functional.one_hot(topk_indices, num_classes=len(self.experts))\n'
        '        expert_mask = expert_mask.permute(2, 0, 1)\n'
        '        for expert_idx in range(len(self.experts)):\n'
        '            expert = self.experts[expert_idx]\n'
        '            # [Route] every position, and which are routed\n'
        '            gm_routed = expert_mask[expert_idx] != 0\n'
        '            gm_grid = [\n'
        '                torch.arange(gm_n, device=gm_routed.device) for gm_n in gm_routed.shape\n'
        '            ]\n'
        '            token_indices, weight_indices = [\n'
        '                gm_g.reshape(-1) for gm_g in torch.meshgrid(*gm_grid, indexing="ij")\n'
        '            ]\n'
        '            gm_routed = gm_routed.reshape(-1)\n'
        '            if token_indices.numel() > 0:\n'
        '                expert_weights = topk_weights[token_indices, weight_indices]\n'
        '                expert_output = expert(hidden_states[token_indices])\n'
        '                final.index_add_(\n'
        '                    0,\n'
        '                    token_indices,\n'
        '                    torch.where(\n'
        '                        gm_routed,\n'
        '                        (expert_output * expert_weights.unsqueeze(-1)).movedim(0, -1),\n'
        '                        0,\n'
        '                    ).movedim(-1, 0),\n'
        '                )\n'
        '        return final\n'
    ),
        unsafe=True),
    Example(
        "SwitchTransformers: top-1 boolean token mask, masked assignment combine",
        _TOP1 + (
        '        idx_mask = torch.nonzero(idx_mask, as_tuple=True)[0].tolist()\n'
        '        for idx in idx_mask:\n'
        '            next_states[router_mask[:, :, idx]] = getattr(self.experts, f"expert_{idx}")(\n'
        '                hidden_states[router_mask[:, :, idx]]\n'
        '            )\n'
        '        return router_probs * next_states\n'
    ),
        ["GM601", "GM601", "GM601"],
        _TOP1 + (
        '        idx_mask = range(idx_mask.shape[0])\n'
        '        for idx in idx_mask:\n'
        '            # [Route] every token, kept where routed\n'
        '            gm_mask = router_mask[:, :, idx]\n'
        '            gm_mask = gm_mask.reshape(\n'
        '                gm_mask.shape + (1,) * (next_states.dim() - gm_mask.dim())\n'
        '            )\n'
        '            next_states.copy_(\n'
        '                torch.where(\n'
        '                    gm_mask,\n'
        "                    getattr(self.experts, f'expert_{idx}')(hidden_states),\n"
        '                    next_states,\n'
        '                ),\n'
        '            )\n'
        '        return router_probs * next_states\n'
    ),
        unsafe=True),
    Example(
        "declined: the expert mixes tokens (attention over the routed block)",
        (
        'import torch\n'
        'from torch import nn\n'
        '\n'
        '\n'
        'class Attention(nn.Module):\n'
        '    def __init__(self, d=8):\n'
        '        super().__init__()\n'
        '        self.q = nn.Linear(d, d)\n'
        '\n'
        '    def forward(self, x):\n'
        '        q = self.q(x)\n'
        '        return torch.softmax(q @ q.transpose(0, 1), dim=-1) @ x\n'
        '\n'
        '\n'
        'class Moe(nn.Module):\n'
        '    def __init__(self, d=8, num_experts=4):\n'
        '        super().__init__()\n'
        '        self.num_experts = num_experts\n'
        '        self.gate = nn.Linear(d, num_experts, bias=False)\n'
        '        self.experts = nn.ModuleList([Attention(d) for _ in range(num_experts)])\n'
        '\n'
        '    def forward(self, hidden_states):\n'
        '        weights, selected = torch.topk(self.gate(hidden_states).softmax(dim=-1), 2, dim=-1)\n'
        '        out = torch.zeros_like(hidden_states)\n'
        '        expert_mask = torch.nn.functional.one_hot(selected, num_classes=self.num_experts).permute(2, 1, 0)\n'
        '        for expert_idx in range(self.num_experts):\n'
        '            idx, top_x = torch.where(expert_mask[expert_idx])\n'
        '            y = self.experts[expert_idx](hidden_states[top_x]) * weights[top_x, idx, None]\n'
        '            out.index_add_(0, top_x, y)\n'
        '        return out\n'
    ),
        ["GM601"], None),
    Example(
        "declined: the loop records how many tokens each expert got",
        (
        'import torch\n'
        'from torch import nn\n'
        '\n'
        '\n'
        'class Moe(nn.Module):\n'
        '    def __init__(self, d=8, num_experts=4):\n'
        '        super().__init__()\n'
        '        self.num_experts = num_experts\n'
        '        self.gate = nn.Linear(d, num_experts, bias=False)\n'
        '        self.experts = nn.ModuleList([nn.Linear(d, d) for _ in range(num_experts)])\n'
        '\n'
        '    def forward(self, hidden_states):\n'
        '        weights, selected = torch.topk(self.gate(hidden_states).softmax(dim=-1), 2, dim=-1)\n'
        '        out = torch.zeros_like(hidden_states)\n'
        '        load = []\n'
        '        expert_mask = torch.nn.functional.one_hot(selected, num_classes=self.num_experts).permute(2, 1, 0)\n'
        '        for expert_idx in range(self.num_experts):\n'
        '            idx, top_x = torch.where(expert_mask[expert_idx])\n'
        '            load.append(top_x.shape[0])\n'
        '            y = self.experts[expert_idx](hidden_states[top_x]) * weights[top_x, idx, None]\n'
        '            out.index_add_(0, top_x, y)\n'
        '        return out, load\n'
    ),
        ["GM601"], None),
    Example(
        "not flagged: a dense mixture (every expert on every token, weighted) is already one graph",
        "import torch\nfrom torch import nn\n\n\n"
        "class DenseMoe(nn.Module):\n"
        "    def __init__(self, d=8, num_experts=4):\n"
        "        super().__init__()\n"
        "        self.gate = nn.Linear(d, num_experts)\n"
        "        self.experts = nn.ModuleList([nn.Linear(d, d) for _ in range(num_experts)])\n\n"
        "    def forward(self, x):\n"
        "        w = self.gate(x).softmax(dim=-1)\n"
        "        out = torch.zeros_like(x)\n"
        "        for i, expert in enumerate(self.experts):\n"
        "            out = out + expert(x) * w[:, i, None]\n"
        "        return out\n",
        [], None),
]
