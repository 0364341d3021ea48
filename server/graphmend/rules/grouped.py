"""[Route] GM605: a grouped expert dispatch (tokens sorted by expert, the sorted rows cut into one
block per expert by a list of sizes read from a tensor) becomes fixed-shape.

The pattern (JetMoE, GraniteMoE, ScatterMoE-style "parallel experts"): a router counts the rows
routed to each expert and reads the counts into Python, then a module cuts its input into one
block per expert with those counts and concatenates the experts' outputs in order:

    class Router(nn.Module):
        def forward(self, x):
            ...
            sizes = gates.long().sum(0)
            sizes = sizes.tolist()                    # breaks the graph (GB0033)
            ...
            return order, rows, weights, sizes, logits

    class Experts(nn.Module):
        def forward(self, inputs, sizes):
            blocks = inputs.split(sizes, dim=0)       # one block per expert, in expert order
            outs = []
            for i in range(self.num_experts):
                outs.append(F.linear(blocks[i], self.weight[i]))
            return torch.cat(outs, dim=0)

Mended (plain torch code, no runtime helper):

    sizes = sizes.tolist()      ->  sizes = sizes                       # the counts stay a tensor
    blocks = inputs.split(sizes, dim=0)
        ->  gm_rows = torch.arange(inputs.shape[0], device=inputs.device)
            gm_ends = torch.as_tensor(sizes, device=inputs.device).cumsum(0)
            gm_group = (gm_rows[:, None] >= gm_ends).sum(-1)      # the block each row falls in
            blocks = [inputs] * len(sizes)                              # every expert sees all rows
    torch.cat(outs, dim=0)      ->  torch.stack(outs)[gm_group, gm_rows]  # row r from its own group

`gm_group[r]` is the block row r falls in (the number of blocks that end at or before it, empty
blocks included), so the result is, row by row, the output of the expert whose block held the row,
selected by indexing (no multiply by a mask: an expert's inf or nan on a row it was not given
does not leak). The experts' module accepts the counts as a list or as a tensor
(`torch.as_tensor`), so other callers that pass a list still work.

Dynamo (torch 2.13, default mode) breaks at the `.tolist()` with GB0033 "Data dependent operator"
(`aten._local_scalar_dense`), once per layer; the resumed code then specialises on the sizes.
(Measured: under `fullgraph=True` Dynamo captures the original too, with the sizes as unbacked
symbols and runtime asserts; the mend is for the default mode and gives fixed shapes.)

Legality, checked statically (else the mend declines and says why):
  * the counts are followed through the file (at most 8 calls deep): a name the `.tolist()`
    binds; a tuple holding it that is returned (every caller in this file, `self.<attr>(...)` /
    `self.<attr>.<method>(...)` with `self.<attr> = Cls(...)`, must bind the result to names) or
    bound to a name; the unpacking of such a tuple; an argument of a call of this file's modules
    (followed into the parameter). They must end only in the split of an experts' module (below).
    Any other read (`len()`, a Python branch, an attribute, a tuple stored on `self`, a call of
    something not in this file) declines, and so does a use of the classes on the way other than
    `self.<attr> = Cls(...)`, `super(Cls, self)` or `isinstance` (JetMoE's attention experts pass
    the counts from `map` to `reduce` in `topo_info`: followed);
  * in the experts' `forward`: the counts are read only by the split (dim 0, the default); the
    blocks only as `blocks[i]` in the body of one `for i in range(n)` loop whose only statement
    is `outs.append(<expr>)`, with `outs = []` before it and read only by one
    `torch.cat(outs, dim=0)` after it; `<expr>` acts per row of `blocks[i]` (the per-token check
    of GM601: per-row layers, elementwise ops, products with weights that are not routed rows);
  * assumed, not checked: the loop visits every block once, in order (`n` is the number of
    counts: `self.num_experts` against a router that counts over `num_experts` columns), and
    the counts add up to the rows (the split raises otherwise; the mended code raises an
    IndexError when they add up to fewer rows, and runs when they add up to more);
  * the router's return value changes from a list to a tensor: code outside this file that
    calls the router and reads the counts as Python ints would see a tensor.

Always UNSAFE: every expert runs on all N rows (E x N expert rows instead of N, about E times the
expert FLOPs and memory), and a product over another block of rows may round its last bits
differently; the selection itself is exact.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field
from typing import Optional

from graphmend.analysis.detect import Site
from graphmend.findings import Applicability, TextEdit
from graphmend.rules.base import claim_safely, Context, Example, Verdict

CODES = ("GM605",)
UNSAFE_WHY = ("changes the arithmetic: every expert runs on all N rows of the sorted block ({total} "
              "expert rows for E experts, instead of N), about E times the expert FLOPs and memory; "
              "each row is then selected from its own expert's output (exact), but a product over "
              "another block of rows may round its last bits differently; assumed, not checked: the "
              "loop visits every block once, in order; the router now returns its counts as a "
              "tensor, which code outside this file reading them as ints would see")
ROWS = "gm_rows"
GROUP = "gm_group"


class Decline(Exception):
    pass


def message(site: Site) -> str:
    return ("the expert sizes are read into Python (`.tolist()`) to cut the sorted tokens into one block "
            "per expert; that breaks the graph in every layer")


# --- detection ---------------------------------------------------------------------------------
def _tolist_assign(fi, node) -> Optional[ast.Assign]:
    """The statement `X = E.tolist()` whose value is the call `node`."""
    for s in ast.walk(fi.node):
        if isinstance(s, ast.Assign) and s.value is node and len(s.targets) == 1 \
                and isinstance(s.targets[0], ast.Name) and not node.args and not node.keywords:
            return s
    return None


def claim_sites(sites: list[Site], fi, symbols) -> list[Site]:
    return claim_safely(_claim, sites, fi, symbols)


def _claim(sites: list[Site], fi, symbols) -> list[Site]:
    """A `.tolist()` (GM401) whose counts reach a grouped split in this file becomes GM605 (the
    judgement then says whether every use of the counts allows the mend)."""
    if fi.cls is None:
        return sites
    out = []
    for s in sites:
        if s.code == "GM401" and isinstance(s.node, ast.Call) and isinstance(s.node.func, ast.Attribute) \
                and s.node.func.attr == "tolist":
            a = _tolist_assign(fi, s.node)
            if a is not None and _reaches_split(fi, a, symbols):
                site = Site("GM605", a, fi, dict(s.kinds), test=s.node, detail="`.tolist()`",
                            note="the sizes cut the sorted tokens into one block per expert")
                site.grouped_symbols = symbols  # for edited_statements (checkers of the fix's extent)
                out.append(site)
                continue
        out.append(s)
    return out


def _reaches_split(fi, assign, symbols) -> bool:
    try:
        flow = _flow(fi, assign, symbols)
    except Decline:
        return False
    return flow.reached


# --- the flow of the counts ----------------------------------------------------------------------
@dataclass
class Flow:
    experts: list = field(default_factory=list)  # (ClassInfo, FunctionInfo forward, param name)
    problems: list[str] = field(default_factory=list)
    reached: bool = False  # some consumer splits by the counts (mended or not)


def _loads(func: ast.AST, name: str, after: int) -> list[ast.Name]:
    return [n for n in ast.walk(func) if isinstance(n, ast.Name) and n.id == name
            and isinstance(n.ctx, ast.Load) and n.lineno > after]


def _stores(func: ast.AST, name: str, after: int) -> list[ast.AST]:
    return [n for n in ast.walk(func) if isinstance(n, ast.Name) and n.id == name
            and isinstance(n.ctx, (ast.Store, ast.Del)) and n.lineno > after]


def _parent_map(func: ast.AST) -> dict[int, ast.AST]:
    return {id(c): p for p in ast.walk(func) for c in ast.iter_child_nodes(p)}


MAX_HOPS = 8


def _self_attr(e) -> bool:
    return isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self"


def _flow(fi, assign: ast.Assign, symbols) -> Flow:
    """Where the counts bound by `assign` go, followed through returned and packed tuples, the
    call sites that unpack them, and the parameters of this file's modules they are passed to;
    `problems` records every use that forbids the mend, `experts` the splits it rewrites."""
    flow = Flow()
    _track(fi.cls, fi, assign.targets[0].id, assign.end_lineno or assign.lineno, (), symbols, flow, set(), 0)
    return flow


def _file_bases(cls, symbols) -> list:
    """cls and its bases defined in this file, nearest first."""
    out, todo = [], [cls]
    while todo:
        c = todo.pop(0)
        if c is None or c in out:
            continue
        out.append(c)
        todo += [symbols.classes.get(b.rsplit(".", 1)[-1]) for b in c.bases]
    return out


def _method(cls, name: str, symbols):
    for c in _file_bases(cls, symbols):
        if name in c.methods:
            return c, c.methods[name]
    return None


def _attr_classes(cls, attr: str, symbols) -> Optional[list]:
    """This file's classes `self.<attr>` holds (looked up in cls and its bases in this file)."""
    from graphmend.rules.route import _attr_kind
    ctx = Context("", symbols)
    for c in _file_bases(cls, symbols):
        kind = _attr_kind(c, attr, ctx)
        if kind is not None:
            return kind[1] if kind[0] == "classes" else None
    return None


def _callees(cls, f: ast.expr, symbols) -> Optional[list]:
    """(class, method) pairs a call of `f` runs: `self.m(...)` (own method), `self.a(...)` (a
    submodule's forward), `self.a.m(...)` (a submodule's method); None when not known."""
    if _self_attr(f):
        own = _method(cls, f.attr, symbols)
        if own is not None and f.attr != "forward":
            return [own]
        classes = _attr_classes(cls, f.attr, symbols)
        if not classes:
            return None
        got = [_method(q, "forward", symbols) for q in classes]
        return got if all(got) else None
    if isinstance(f, ast.Attribute) and _self_attr(f.value):
        classes = _attr_classes(cls, f.value.attr, symbols)
        if not classes:
            return None
        got = [_method(q, f.attr, symbols) for q in classes]
        return got if all(got) else None
    return None


def _param_of(fm, call: ast.Call, use, kw) -> Optional[str]:
    a = fm.node.args
    params = [x.arg for x in [*a.posonlyargs, *a.args]][1:]
    if kw:
        return kw if kw in params + [x.arg for x in a.kwonlyargs] else None
    i = next((j for j, x in enumerate(call.args) if x is use), None)
    if i is None or any(isinstance(x, ast.Starred) for x in call.args[:i + 1]) or i >= len(params):
        return None
    return params[i]


def _track(cls, m, name: str, after: int, path: tuple, symbols, flow: Flow, seen: set, hops: int) -> None:
    key = (cls.name, m.node.name, name, after, path)
    if key in seen:
        return
    seen.add(key)
    where = f"{cls.name}.{m.node.name}"
    if hops > MAX_HOPS:
        flow.problems.append(f"the counts travel through more than {MAX_HOPS} calls; not followed")
        return
    func = m.node
    if _stores(func, name, after):
        flow.problems.append(f"`{name}` is assigned again in {where}")
    parents = _parent_map(func)
    for use in _loads(func, name, after):
        p = parents.get(id(use))
        kw = None
        if isinstance(p, ast.keyword):
            kw, p = p.arg, parents.get(id(p))
        if isinstance(p, ast.Tuple) and kw is None:
            k = next(j for j, x in enumerate(p.elts) if x is use)
            holder = parents.get(id(p))
            if isinstance(holder, ast.Return):
                _returned(cls, m, (k,) + path, symbols, flow, seen, hops + 1)
                continue
            if isinstance(holder, ast.Assign) and len(holder.targets) == 1 and \
                    isinstance(holder.targets[0], ast.Name):
                _track(cls, m, holder.targets[0].id, holder.end_lineno, (k,) + path, symbols, flow, seen, hops)
                continue
            flow.problems.append(f"`{name}` is packed into a tuple at line {use.lineno} in {where} that goes "
                                 "elsewhere than a return or a name")
            continue
        if isinstance(p, ast.Assign) and p.value is use and path and len(p.targets) == 1 \
                and isinstance(p.targets[0], ast.Tuple) and len(p.targets[0].elts) > path[0] \
                and all(isinstance(t, ast.Name) for t in p.targets[0].elts):
            _track(cls, m, p.targets[0].elts[path[0]].id, p.end_lineno, path[1:], symbols, flow, seen, hops)
            continue
        if isinstance(p, ast.Call) and (kw or any(x is use for x in p.args)):
            callees = _callees(cls, p.func, symbols)
            if callees is None:
                flow.problems.append(f"`{name}` is passed at line {use.lineno} to `{ast.unparse(p.func)}`, not "
                                     "a module of this file")
                continue
            for q, qm in callees:
                param = _param_of(qm, p, use, kw)
                if param is None:
                    flow.problems.append(f"cannot match `{name}` to a parameter of {q.name}.{qm.node.name}")
                    continue
                if not path and any(isinstance(s, ast.Assign) and _split_call(s.value, param) is not None
                                    for s in ast.walk(qm.node)):
                    flow.reached = True
                    if any(e[0] is q and e[2] == param for e in flow.experts):
                        continue
                    try:
                        split_plan(q, qm, param, symbols)
                    except Decline as d:
                        flow.problems.append(f"{q.name}.{qm.node.name}: {d}")
                        continue
                    if qm.node.name != "forward":
                        flow.problems.append(f"{q.name}.{qm.node.name} splits by the counts outside forward")
                        continue
                    flow.experts.append((q, qm, param))
                    continue
                _track(q, qm, param, qm.node.lineno, path, symbols, flow, seen, hops + 1)
            continue
        shown = ast.unparse(p if isinstance(p, ast.AST) else use)[:60]
        flow.problems.append(f"`{name}` is also read at line {use.lineno} (`{shown}`); only a module that "
                             "splits by the counts may read them")


def _type_test(n: ast.Name, pm: dict) -> bool:
    """`isinstance(x, Cls)` / `isinstance(x, (A, Cls))`."""
    p = pm.get(id(n))
    if isinstance(p, ast.Tuple):
        p = pm.get(id(p))
    return isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id in ("isinstance", "issubclass") \
        and len(p.args) == 2 and any(x is n for x in ast.walk(p.args[1]))


def _returned(cls, m, path: tuple, symbols, flow: Flow, seen: set, hops: int) -> None:
    """The counts leave `cls.<m>` at `path` of its returned tuple: follow every caller in this file."""
    where = f"{cls.name}.{m.node.name}"
    returns = [n for n in ast.walk(m.node) if isinstance(n, ast.Return)]
    if len(returns) != 1:
        flow.problems.append(f"{where} has more than one return")
        return
    mname = m.node.name
    holders = []  # (class, attr) with self.<attr> = cls(...)
    for c in symbols.classes.values():
        for fm in c.methods.values():
            pm = _parent_map(fm.node)
            for n in ast.walk(fm.node):
                if isinstance(n, ast.Name) and n.id == cls.name and isinstance(n.ctx, ast.Load):
                    call = pm.get(id(n))
                    a = pm.get(id(call)) if isinstance(call, ast.Call) and call.func is n else None
                    if isinstance(a, ast.Assign) and len(a.targets) == 1 and _self_attr(a.targets[0]):
                        holders.append((c, a.targets[0].attr))
                    elif isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and \
                            call.func.id == "super" and call.args and call.args[0] is n:
                        continue  # super(Cls, self).__init__()
                    elif _type_test(n, pm):
                        continue  # isinstance(module, Cls): reads no counts
                    else:
                        flow.problems.append(f"{cls.name} is used at line {n.lineno} other than as "
                                             f"`self.<attr> = {cls.name}(...)`")
    for node in ast.walk(symbols.tree):
        if isinstance(node, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id == cls.name for b in node.bases):
            flow.problems.append(f"{node.name} subclasses {cls.name}")
    attrs = {a for _, a in holders}
    callers = 0
    for c in symbols.classes.values():
        mine = cls in _file_bases(c, symbols)
        for fm in c.methods.values():
            pm = _parent_map(fm.node)
            for n in ast.walk(fm.node):
                call = None
                if _self_attr(n) and isinstance(n.ctx, ast.Load):
                    if n.attr in attrs and (_attr_classes(c, n.attr, symbols) or []).count(cls):
                        parent = pm.get(id(n))
                        if mname == "forward" and isinstance(parent, ast.Call) and parent.func is n:
                            call = parent
                        elif isinstance(parent, ast.Attribute):
                            if parent.attr != mname:
                                continue  # another method of the submodule
                            grand = pm.get(id(parent))
                            if isinstance(grand, ast.Call) and grand.func is parent:
                                call = grand
                        if call is None:
                            flow.problems.append(f"`self.{n.attr}` is used at line {n.lineno} other than by "
                                                 "a call")
                            continue
                    elif mine and n.attr == mname and mname != "forward":
                        parent = pm.get(id(n))
                        if isinstance(parent, ast.Call) and parent.func is n:
                            call = parent
                    if call is None:
                        continue
                    callers += 1
                    stmt = pm.get(id(call))
                    if isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1:
                        t = stmt.targets[0]
                        if isinstance(t, ast.Tuple) and len(t.elts) > path[0] and \
                                all(isinstance(x, ast.Name) for x in t.elts):
                            _track(c, fm, t.elts[path[0]].id, stmt.end_lineno, path[1:], symbols, flow, seen, hops)
                            continue
                        if isinstance(t, ast.Name):
                            _track(c, fm, t.id, stmt.end_lineno, path, symbols, flow, seen, hops)
                            continue
                    flow.problems.append(f"the result of {where} is not bound to names at line {call.lineno}")
    if not callers:
        flow.problems.append(f"{where} is not called in this file")


# --- the experts' module -----------------------------------------------------------------------
@dataclass
class SplitPlan:
    split: ast.Assign  # blocks = X.split(S, dim=0)
    source: ast.expr  # X
    counts: str  # S
    loop: ast.For
    append: ast.expr  # the appended value
    cat: ast.Call  # torch.cat(outs, dim=0)
    cat_stmt: Optional[ast.stmt] = None  # the statement of forward's body holding it


def _split_call(v: ast.expr, counts: str) -> Optional[ast.expr]:
    """X in `X.split(S, dim=0)` / `X.split(S, 0)` / `X.split(S)` / `torch.split(X, S, dim=0)`."""
    if not (isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "split"):
        return None
    args = list(v.args)
    torch_fn = isinstance(v.func.value, ast.Name) and v.func.value.id == "torch"
    src = args.pop(0) if torch_fn and args else (v.func.value if not torch_fn else None)
    if src is None or not args or not (isinstance(args[0], ast.Name) and args[0].id == counts):
        return None
    rest = args[1:]
    kws = {k.arg: k.value for k in v.keywords}
    if set(kws) - {"dim", "split_size_or_sections", "split_size"} or len(rest) > 1:
        return None
    dim = rest[0] if rest else kws.get("dim")
    if dim is not None and not (isinstance(dim, ast.Constant) and dim.value == 0):
        return None
    return src


def split_plan(cls, fwd, counts: str, symbols) -> SplitPlan:
    from graphmend.rules.route import RowFlow, Decline as RouteDecline
    func = fwd.node
    body = func.body
    splits = [(i, s) for i, s in enumerate(body) if isinstance(s, ast.Assign) and len(s.targets) == 1
              and isinstance(s.targets[0], ast.Name) and _split_call(s.value, counts) is not None]
    if len(splits) != 1:
        raise Decline(f"`{counts}` is not used in exactly one `.split({counts}, dim=0)` at the top of forward")
    i0, split = splits[0]
    src = _split_call(split.value, counts)
    if not isinstance(src, ast.Name):
        raise Decline("the split's input is not a plain name")
    blocks = split.targets[0].id
    uses = [n for n in ast.walk(func) if isinstance(n, ast.Name) and n.id == counts and isinstance(n.ctx, ast.Load)]
    if len(uses) != 1:
        raise Decline(f"`{counts}` is read besides the split")
    loops = [(i, s) for i, s in enumerate(body) if i > i0 and isinstance(s, ast.For)]
    if len(loops) != 1:
        raise Decline("the blocks are not consumed by exactly one loop after the split")
    il, loop = loops[0]
    if not (isinstance(loop.target, ast.Name) and isinstance(loop.iter, ast.Call)
            and isinstance(loop.iter.func, ast.Name) and loop.iter.func.id == "range"
            and len(loop.iter.args) == 1 and not loop.iter.keywords and not loop.orelse):
        raise Decline("the loop is not `for i in range(n):`")
    i = loop.target.id
    if not (len(loop.body) == 1 and isinstance(loop.body[0], ast.Expr) and isinstance(loop.body[0].value, ast.Call)
            and isinstance(loop.body[0].value.func, ast.Attribute) and loop.body[0].value.func.attr == "append"
            and isinstance(loop.body[0].value.func.value, ast.Name) and len(loop.body[0].value.args) == 1
            and not loop.body[0].value.keywords):
        raise Decline("the loop's body is not one `outs.append(...)`")
    outs = loop.body[0].value.func.value.id
    value = loop.body[0].value.args[0]
    inits = [s for s in body[:il] if isinstance(s, ast.Assign) and len(s.targets) == 1
             and isinstance(s.targets[0], ast.Name) and s.targets[0].id == outs]
    if len(inits) != 1 or not (isinstance(inits[0].value, ast.List) and not inits[0].value.elts):
        raise Decline(f"`{outs}` is not bound to `[]` once before the loop")
    cats = [n for s in body[il + 1:] for n in ast.walk(s) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute) and n.func.attr in ("cat", "concat", "concatenate")
            and isinstance(n.func.value, ast.Name) and n.func.value.id == "torch"
            and n.args and isinstance(n.args[0], ast.Name) and n.args[0].id == outs]
    if len(cats) != 1:
        raise Decline(f"`{outs}` is not concatenated once after the loop")
    cat = cats[0]
    cat_stmt = next(s for s in body[il + 1:] if any(n is cat for n in ast.walk(s)))
    dim = cat.args[1] if len(cat.args) > 1 else next((k.value for k in cat.keywords if k.arg in ("dim", "axis")), None)
    if len(cat.args) > 2 or any(k.arg not in ("dim", "axis") for k in cat.keywords) or \
            (dim is not None and not (isinstance(dim, ast.Constant) and dim.value == 0)):
        raise Decline("the concatenation is not along dimension 0")
    # every other use of the names
    for n in ast.walk(func):
        if not isinstance(n, ast.Name):
            continue
        if n.id == outs and isinstance(n.ctx, ast.Load) and n is not loop.body[0].value.func.value \
                and n is not cat.args[0]:
            raise Decline(f"`{outs}` is read at line {n.lineno} besides the append and the concatenation")
        if n.id == blocks and n is not split.targets[0]:
            pass  # checked below: only blocks[i] in the appended value
        if n.id == i and n.lineno > (loop.end_lineno or loop.lineno):
            raise Decline(f"the loop index `{i}` is read after the loop")
    block_reads = [n for n in ast.walk(func) if isinstance(n, ast.Name) and n.id == blocks and n is not split.targets[0]]
    picks = [n for n in ast.walk(value) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
             and n.value.id == blocks and isinstance(n.slice, ast.Name) and n.slice.id == i]
    if len(block_reads) != len(picks) or not picks:
        raise Decline(f"the blocks `{blocks}` are read other than as `{blocks}[{i}]` in the appended value")
    if any(isinstance(n, ast.Name) and n.id in (blocks, outs, src.id, i) and isinstance(n.ctx, ast.Store)
           for s in body[i0 + 1:] if s is not loop and s is not inits[0] for n in ast.walk(s)) or \
            _stores(ast.Module(body=loop.body, type_ignores=[]), i, 0):
        raise Decline("a name of the pattern is assigned again")
    # the appended value acts per row of blocks[i]
    probe = _Substitute(blocks, i).visit(copy.deepcopy(value))
    ctx = Context("", symbols)
    rf = RowFlow(ctx, cls, {"gm_block"})
    try:
        if not rf.row(probe):
            raise Decline("the appended value is not computed from the block")
    except RouteDecline as d:
        raise Decline(f"the appended value may not act per row: {d}") from None
    return SplitPlan(split, src, counts, loop, value, cat, cat_stmt)


class _Substitute(ast.NodeTransformer):
    def __init__(self, blocks: str, i: str) -> None:
        self.blocks, self.i = blocks, i

    def visit_Subscript(self, node):
        if isinstance(node.value, ast.Name) and node.value.id == self.blocks and \
                isinstance(node.slice, ast.Name) and node.slice.id == self.i:
            return ast.Name("gm_block", ast.Load())
        return self.generic_visit(node)


# --- judgement and edit ------------------------------------------------------------------------
def _analyse(site: Site, ctx: Context) -> Flow:
    if ctx.torch_name() != "torch":
        raise Decline("the file does not `import torch` under that name")
    flow = _flow(site.func, site.node, ctx.symbols)
    if flow.problems:
        raise Decline(flow.problems[0])
    if not flow.experts:
        raise Decline("the counts reach no module that splits by them")
    return flow


def judge(site: Site, ctx: Context, env) -> Verdict:
    try:
        _analyse(site, ctx)
    except Decline as d:
        return Verdict.decline(f"[Route] declines: {d}")
    except (AttributeError, IndexError, KeyError, TypeError, ValueError) as e:
        return Verdict.decline(f"[Route] could not analyse the grouped dispatch ({type(e).__name__}: {e})")
    return Verdict(Applicability.UNSAFE,
                   "Keep the expert sizes a tensor; run every expert over all rows, each row kept from its own block",
                   UNSAFE_WHY.format(total="E x N"))


def fix(site: Site, ctx: Context, env, span_of) -> Optional[list[TextEdit]]:
    try:
        flow = _analyse(site, ctx)
    except (Decline, AttributeError, IndexError, KeyError, TypeError, ValueError):
        return None
    tn = ctx.torch_name()
    a: ast.Assign = site.node
    call: ast.Call = a.value
    edits = [TextEdit(span_of(call), ctx.src(call.func.value))]
    for q, fwd, param in flow.experts:
        plan = split_plan(q, fwd, param, ctx.symbols)
        ind = ctx.indent_of(plan.split)
        x = ctx.src(plan.source)
        blocks = plan.split.targets[0].id
        lines = ["# [Route] every expert over all rows; row r is kept from the block it falls in",
                 f"{ind}{ROWS} = {tn}.arange({x}.shape[0], device={x}.device)",
                 f"{ind}gm_ends = {tn}.as_tensor({param}, device={x}.device).cumsum(0)",
                 f"{ind}{GROUP} = ({ROWS}[:, None] >= gm_ends).sum(-1)",
                 f"{ind}{blocks} = [{x}] * len({param})"]
        edits.append(TextEdit(span_of(plan.split), "\n".join(lines)))
        edits.append(TextEdit(span_of(plan.cat), f"{tn}.stack({ctx.src(plan.cat.args[0])})[{GROUP}, {ROWS}]"))
    return edits


def edited_statements(site: Site, symbols) -> list[ast.stmt]:
    """The statements the fix rewrites: the `.tolist()` and, in each experts' module, the split and
    the statement holding the concatenation (other functions than the finding's: checkers of
    "edits stay within the finding's statement" take these as the finding's too)."""
    out = [site.node]
    try:
        flow = _flow(site.func, site.node, symbols)
    except Decline:
        return out
    for q, fwd, param in flow.experts:
        plan = split_plan(q, fwd, param, symbols)
        out += [plan.split, plan.cat_stmt]
    return out


# --- examples ----------------------------------------------------------------------------------
_HEAD = (
    "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n"
)
_ROUTER = (
    "class SortRouter(nn.Module):\n"
    "    def __init__(self, d=8, n_experts=4, k=2):\n"
    "        super().__init__()\n"
    "        self.k = k\n"
    "        self.n_experts = n_experts\n"
    "        self.proj = nn.Linear(d, n_experts, bias=False)\n\n"
    "    def forward(self, x):\n"
    "        scores = self.proj(x)\n"
    "        top_w, top_e = scores.topk(self.k, dim=-1)\n"
    "        top_w = top_w.softmax(dim=-1)\n"
    "        per_expert = F.one_hot(top_e, self.n_experts).sum(dim=(0, 1))\n"
    "        {counts_line}\n"
    "        order = top_e.flatten().argsort(stable=True)\n"
    "        return order // self.k, top_w.flatten()[order], counts\n\n\n"
)
_BANK = (
    "class ExpertBank(nn.Module):\n"
    "    def __init__(self, n_experts=4, d_in=8, d_out=8):\n"
    "        super().__init__()\n"
    "        self.n_experts = n_experts\n"
    "        self.w = nn.Parameter(torch.randn(n_experts, d_out, d_in) / d_in**0.5)\n"
    "        self.b = nn.Parameter(torch.randn(n_experts, d_out) / 10)\n\n"
    "    def forward(self, rows, counts):\n"
    "{split_block}"
    "        outs = []\n"
    "        for e in range(self.n_experts):\n"
    "            outs.append(torch.tanh(F.linear(chunks[e], self.w[e], self.b[e])))\n"
    "        return {cat}\n\n\n"
)
_MOE = (
    "class SortedMoe(nn.Module):\n"
    "    def __init__(self, d=8, h=16, n_experts=4, k=2):\n"
    "        super().__init__()\n"
    "        self.router = SortRouter(d, n_experts, k)\n"
    "        self.up = ExpertBank(n_experts, d, h)\n"
    "        self.down = ExpertBank(n_experts, h, d)\n\n"
    "    def forward(self, x):\n"
    "        token, weight, counts = self.router(x)\n"
    "        y = self.down(self.up(x[token], counts), counts) * weight[:, None]\n"
    "        return torch.zeros_like(x).index_add(0, token, y)\n"
)
_SPLIT = "        chunks = rows.split(counts, dim=0)\n"
_SPLIT_MENDED = (
    "        # [Route] every expert over all rows; row r is kept from the block it falls in\n"
    "        gm_rows = torch.arange(rows.shape[0], device=rows.device)\n"
    "        gm_ends = torch.as_tensor(counts, device=rows.device).cumsum(0)\n"
    "        gm_group = (gm_rows[:, None] >= gm_ends).sum(-1)\n"
    "        chunks = [rows] * len(counts)\n"
)
SORTED_SOURCE = _HEAD + _ROUTER.format(counts_line="counts = per_expert.tolist()") + \
    _BANK.format(split_block=_SPLIT, cat="torch.cat(outs, dim=0)") + _MOE
SORTED_FIXED = _HEAD + _ROUTER.format(counts_line="counts = per_expert") + \
    _BANK.format(split_block=_SPLIT_MENDED, cat="torch.stack(outs)[gm_group, gm_rows]") + _MOE

_PLANNED = (
    "class TwoStepExperts(nn.Module):\n"
    "    def __init__(self, d=8, n_experts=4, k=2):\n"
    "        super().__init__()\n"
    "        self.router = SortRouter(d, n_experts, k)\n"
    "        self.bank = ExpertBank(n_experts, d, d)\n\n"
    "    def dispatch(self, x):\n"
    "        token, weight, counts = self.router(x)\n"
    "        plan = (token, weight, counts)\n"
    "        return x[token], plan\n\n"
    "    def combine(self, x, rows, plan):\n"
    "        token, weight, counts = plan\n"
    "        y = self.bank(rows, counts) * weight[:, None]\n"
    "        return torch.zeros_like(x).index_add(0, token, y)\n\n\n"
    "class PlannedMoe(nn.Module):\n"
    "    def __init__(self, d=8):\n"
    "        super().__init__()\n"
    "        self.experts = TwoStepExperts(d)\n\n"
    "    def forward(self, x):\n"
    "        rows, plan = self.experts.dispatch(x)\n"
    "        return self.experts.combine(x, rows, plan)\n"
)
PLANNED_SOURCE = _HEAD + _ROUTER.format(counts_line="counts = per_expert.tolist()") + \
    _BANK.format(split_block=_SPLIT, cat="torch.cat(outs, dim=0)") + _PLANNED
PLANNED_FIXED = _HEAD + _ROUTER.format(counts_line="counts = per_expert") + \
    _BANK.format(split_block=_SPLIT_MENDED, cat="torch.stack(outs)[gm_group, gm_rows]") + _PLANNED

EXAMPLES = [
    Example(
        "sorted tokens cut into one block per expert by counts read with .tolist() (hand-written)",
        SORTED_SOURCE, ["GM605"], SORTED_FIXED, unsafe=True),
    Example(
        "the counts travel in a tuple from one method to another, as JetMoE's map/reduce (hand-written)",
        PLANNED_SOURCE, ["GM605"], PLANNED_FIXED, unsafe=True),
    Example(
        "declined: the counts also travel in a tuple to other code",
        SORTED_SOURCE.replace("        y = self.down(", "        self.last = (token, counts)\n        y = self.down("),
        ["GM605"], None),
    Example(
        "declined: an expert mixes the rows of its block",
        SORTED_SOURCE.replace("torch.tanh(F.linear(chunks[e], self.w[e], self.b[e]))",
                              "F.linear(chunks[e], self.w[e], self.b[e]).softmax(dim=0)"),
        ["GM605"], None),
]
