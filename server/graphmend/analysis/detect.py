"""Walk one function in program order and collect its graph-break sites.

Each site is a `Site`: the rule code, the ast node, and what the rules need to judge
a mend (the kinds of names at that point, the static part of a condition).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

from graphmend.analysis.dataflow import Env, Kind, compiling_guard
from graphmend.analysis.symbols import FunctionInfo, Symbols

LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical",
                         "fatal", "log", "warning_once", "info_once", "warning_advice"})
LOGGER_NAMES = frozenset({"logger", "_logger", "log", "LOGGER", "LOG", "_LOGGER", "_log"})
UNTRACEABLE = {
    "time.time": "time.time()", "time.perf_counter": "time.perf_counter()",
    "time.monotonic": "time.monotonic()", "time.sleep": "time.sleep()",
    "pdb.set_trace": "pdb.set_trace()", "breakpoint": "breakpoint()", "input": "input()",
    "open": "open()", "copy.deepcopy": "copy.deepcopy()", "os.system": "os.system()",
    "subprocess.run": "subprocess.run()", "sys.stdout.write": "sys.stdout.write()",
    "sys.stderr.write": "sys.stderr.write()", "torch.save": "torch.save()",
    "torch.load": "torch.load()", "numpy.random.rand": "numpy.random", "random.random": "random.random()",
}
DYNAMIC_SHAPE_FUNCS = frozenset({"nonzero", "unique", "unique_consecutive", "masked_select",
                                 "argwhere", "bincount", "repeat_interleave"})
# torch factories whose leading arguments are Python numbers (sizes, bounds): a tensor there is
# read into Python while tracing (Dynamo: "Data dependent operator", GB0033).
SIZE_FACTORIES = frozenset({"torch.linspace", "torch.logspace", "torch.arange", "torch.zeros", "torch.ones",
                            "torch.empty", "torch.full", "torch.randn", "torch.rand", "torch.randint",
                            "torch.eye"})
DISABLE_DECORATORS = ("torch.compiler.disable", "torch._dynamo.disable", "torch.jit.unused",
                      "torch.jit.ignore", "torch._disable_dynamo")


@dataclass
class Site:
    code: str
    node: ast.AST  # the call, or the `if`/`while`/`assert`/IfExp statement or expression
    func: FunctionInfo
    kinds: dict[str, Kind]  # local kinds at this point
    test: Optional[ast.expr] = None  # the data-dependent part of a condition
    static_test: list[ast.expr] = field(default_factory=list)  # static conjuncts (`and` prefix)
    detail: str = ""  # e.g. "logger.warning_once", "`.item()`"
    note: Optional[str] = None
    gb_id: Optional[str] = None  # when it differs from the rule's usual Dynamo id


class FunctionWalker:
    """One forward pass over a function body: updates kinds, records sites."""

    def __init__(self, symbols: Symbols, fi: FunctionInfo):
        self.symbols = symbols
        self.fi = fi
        self.env = Env(symbols, fi)
        self.sites: list[Site] = []
        self._seen: set[int] = set()
        self._local_loggers: Optional[set[str]] = None

    def run(self) -> list[Site]:
        self.block(self.fi.node.body)
        return self.sites

    def add(self, code: str, node: ast.AST, **kw) -> None:
        key = (code, id(node))
        if key in self._seen:
            return
        self._seen.add(key)
        self.sites.append(Site(code, node, self.fi, dict(self.env.kinds), **kw))

    # --- statements --------------------------------------------------------------------------
    def block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.stmt(stmt)

    def stmt(self, s: ast.stmt) -> None:  # noqa: C901 - dispatch
        env = self.env
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return  # nested definitions are walked as functions of their own when reached
        if isinstance(s, ast.Assign):
            self.exprs(s.value)
            k = env.kind(s.value)
            for t in s.targets:
                self.exprs(t)
                env.bind(t, k, s.value)
        elif isinstance(s, ast.AnnAssign):
            if s.value is not None:
                self.exprs(s.value)
                env.bind(s.target, env.kind(s.value), s.value)
        elif isinstance(s, ast.AugAssign):
            self.exprs(s.value)
            if isinstance(s.target, ast.Name):
                env.bind(s.target, max(env.kind(s.target), env.kind(s.value)))
        elif isinstance(s, ast.If):
            self.if_stmt(s)
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            self.exprs(s.iter)
            it = env.kind(s.iter)
            target = s.target
            if (isinstance(s.iter, ast.Call) and isinstance(s.iter.func, ast.Name)
                    and s.iter.func.id == "enumerate" and s.iter.args and isinstance(target, ast.Tuple)
                    and len(target.elts) == 2):
                env.bind(target.elts[0], Kind.STATIC)  # the index; rows of a tensor are tensors
                it, target = env.kind(s.iter.args[0]), target.elts[1]
            env.bind(target, Kind.TENSOR if it is Kind.TENSOR else
                     (Kind.STATIC if it is Kind.STATIC else Kind.UNKNOWN))
            for _ in range(2):  # loop-carried kinds: a second pass settles most
                self.block(s.body)
            self.block(s.orelse)
        elif isinstance(s, ast.While):
            self.cond(s, s.test)
            for _ in range(2):
                self.block(s.body)
            self.block(s.orelse)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                self.exprs(item.context_expr)
                if item.optional_vars is not None:
                    env.bind(item.optional_vars, Kind.UNKNOWN)
            self.block(s.body)
        elif isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
            self.block(s.body)
            for h in s.handlers:
                if h.name:
                    env.bind(ast.Name(h.name), Kind.STATIC)
                self.block(h.body)
            self.block(s.orelse)
            self.block(s.finalbody)
        elif isinstance(s, ast.Assert):
            self.cond(s, s.test)
            if s.msg is not None:
                self.exprs(s.msg)
        elif isinstance(s, (ast.Return, ast.Expr)):
            if s.value is not None:
                self.exprs(s.value)
        elif isinstance(s, ast.Raise):
            if s.exc is not None:
                self.exprs(s.exc)
        elif isinstance(s, ast.Match):
            self.exprs(s.subject)
            for c in s.cases:
                self.block(c.body)
        else:
            for child in ast.iter_child_nodes(s):
                if isinstance(child, ast.expr):
                    self.exprs(child)

    def if_stmt(self, s: ast.If) -> None:
        guard = compiling_guard(s.test, self.symbols)
        if guard is True:  # only the body is traced
            self.block(s.body)
            return
        if guard is False:
            self.block(s.orelse)
            return
        self.cond(s, s.test)
        before = dict(self.env.kinds)
        self.block(s.body)
        after_body = self.env.kinds
        self.env.kinds = dict(before)
        self.block(s.orelse)
        self.env.merge(after_body)

    def cond(self, owner: ast.AST, test: ast.expr) -> None:
        """Record a data-dependent condition; its operands are scanned for other sites."""
        self.exprs(test)
        dd, static = self.split_condition(test)
        if dd is None:
            return
        code = "GM201"
        if isinstance(owner, ast.If) and _is_guard(owner):
            code = "GM301"
        elif isinstance(owner, ast.Assert):
            code = "GM301"
        note = None
        if static:
            note = "only when " + " and ".join(ast.unparse(t) for t in static)
        self.add(code, owner, test=dd, static_test=static, note=note)

    def split_condition(self, test: ast.expr) -> tuple[Optional[ast.expr], list[ast.expr]]:
        """(data-dependent part, static `and` conjuncts before it) or (None, [])."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            static = []
            for i, v in enumerate(test.values):
                k = self.env.kind(v)
                if k is Kind.STATIC:
                    static.append(v)
                    continue
                if k is Kind.TENSOR and self.truth_of_tensor(v):
                    rest = test.values[i:]
                    dd = rest[0] if len(rest) == 1 else ast.BoolOp(ast.And(), rest)
                    if len(rest) > 1:
                        ast.copy_location(dd, rest[0])
                        dd.end_lineno, dd.end_col_offset = rest[-1].end_lineno, rest[-1].end_col_offset
                    return dd, static
                return None, []
            return None, []
        if self.env.kind(test) is Kind.TENSOR and self.truth_of_tensor(test):
            return test, []
        return None, []

    def truth_of_tensor(self, e: ast.expr) -> bool:
        """Whether Python takes the truth of a tensor's VALUE here (not of a static part)."""
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            return self.truth_of_tensor(e.operand)
        if isinstance(e, ast.BoolOp):
            return any(self.env.kind(v) is Kind.TENSOR and self.truth_of_tensor(v) for v in e.values)
        return self.env.kind(e) is Kind.TENSOR

    # --- expressions -------------------------------------------------------------------------
    def exprs(self, e: ast.expr) -> None:
        for node in _walk_expr(e):
            if isinstance(node, ast.Call):
                self.call(node)
            elif isinstance(node, ast.IfExp):
                dd, static = self.split_condition(node.test)
                if dd is not None:
                    self.add("GM201", node, test=dd, static_test=static)
            elif isinstance(node, ast.Subscript):
                sl = node.slice
                if self.env.kind(node.value) is Kind.TENSOR and isinstance(sl, ast.Compare) \
                        and self.env.kind(sl) is Kind.TENSOR:
                    self.add("GM402", node, detail="boolean-mask indexing")
                bounds = [b for x in (sl.elts if isinstance(sl, ast.Tuple) else [sl])
                          if isinstance(x, ast.Slice) for b in (x.lower, x.upper, x.step) if b is not None]
                if self.env.kind(node.value) is Kind.TENSOR and any(
                        self.env.kind(b) is Kind.TENSOR for b in bounds):
                    self.add("GM401", node, detail="slicing with tensor-valued bounds", gb_id="GB0038")

    def call(self, c: ast.Call) -> None:
        env = self.env
        func = c.func
        q = env.qualify(func) or ""
        if q == "print":
            self.add("GM101", c, detail="print()")
            return
        if q == "warnings.warn":
            self.add("GM103", c, detail="warnings.warn()",
                     note="breaks when this frame is inlined (a helper or a submodule's forward); "
                          "in the compiled function's own frame Dynamo keeps it")
            return
        if isinstance(func, ast.Attribute) and func.attr in LOG_METHODS and self.is_logger(func.value):
            self.add("GM102", c, detail=f"{ast.unparse(func.value)}.{func.attr}()")
            return
        if q in UNTRACEABLE or q.startswith(("pdb.", "ipdb.")):
            self.add("GM403", c, detail=UNTRACEABLE.get(q, q + "()"))
            return
        if isinstance(func, ast.Attribute):
            base = env.kind(func.value)
            if base is Kind.TENSOR and func.attr in ("item", "tolist", "numpy") \
                    and not env.is_submodule_call(func):
                self.add("GM401", c, detail=f"`.{func.attr}()`")
                return
            if base is Kind.TENSOR and func.attr in DYNAMIC_SHAPE_FUNCS:
                self.add("GM402", c, detail=f"`.{func.attr}()`")
                return
        if q in ("int", "float", "bool") and len(c.args) == 1 and env.kind(c.args[0]) is Kind.TENSOR:
            self.add("GM401", c, detail=f"`{q}()` of a tensor")
            return
        if q in SIZE_FACTORIES and any(env.kind(a) is Kind.TENSOR for a in c.args[:3]) and not (
                q in ("torch.tensor", "torch.as_tensor")):
            self.add("GM401", c, detail=f"`{q}()` with a tensor as a size or bound", gb_id="GB0033")
            return
        if q.startswith("torch."):
            name = q.split(".")[-1]
            if name in DYNAMIC_SHAPE_FUNCS and q.count(".") == 1:
                self.add("GM402", c, detail=f"`torch.{name}()`")
            elif name == "where" and q.count(".") == 1 and len(c.args) == 1 and not c.keywords:
                self.add("GM402", c, detail="one-argument `torch.where()`")
        else:
            target = None
            if q and self.symbols.module and q.startswith(self.symbols.module + "."):
                target = self.symbols.functions.get(q.rsplit(".", 1)[1])
            elif (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                  and func.value.id == "self" and self.fi.cls is not None):
                target = self.fi.cls.methods.get(func.attr)  # self.m(): a method of this class
            if target is not None and _is_disabled(target.node, self.symbols):
                self.add("GM403", c, detail=f"`{target.qualname}()`, a torch.compiler.disable()d function")

    def is_logger(self, e: ast.expr) -> bool:
        if isinstance(e, ast.Name):
            if e.id in self.env.locals:  # a local: a logger only if bound to getLogger(...) here
                return e.id in self.local_loggers()
            if e.id in self.symbols.logger_names or e.id in LOGGER_NAMES:
                return True
            return self.symbols.qualify(e) == "logging"
        if isinstance(e, ast.Attribute):
            return e.attr in LOGGER_NAMES and isinstance(e.value, ast.Name) and e.value.id == "self"
        if isinstance(e, ast.Call):
            q = self.symbols.qualify(e.func) or ""
            return q.endswith(("getLogger", "get_logger"))
        return False

    def local_loggers(self) -> set[str]:
        """Local names assigned `logging.getLogger(...)` / `get_logger(...)` in this function."""
        if self._local_loggers is None:
            self._local_loggers = {
                t.id for n in ast.walk(self.fi.node)
                if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                and (self.symbols.qualify(n.value.func) or "").endswith(("getLogger", "get_logger"))
                for t in n.targets if isinstance(t, ast.Name)}
        return self._local_loggers


def _walk_expr(e: ast.expr):
    """Nodes of an expression in evaluation order, not entering lambdas or comprehensions'
    own scopes twice."""
    stack = [e]
    out = []
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Lambda):
            continue
        out.append(n)
        stack.extend(reversed(list(ast.iter_child_nodes(n))))
    # post-order would be evaluation order; pre-order keeps parents first, which is what the
    # de-duplication in `add` wants (print(x.item()) reports both the print and the .item())
    return out


def _is_guard(s: ast.If) -> bool:
    """`if C: raise ...` with no else branch (or `elif`)."""
    return (not s.orelse and len(s.body) == 1 and isinstance(s.body[0], ast.Raise))


def _is_disabled(fn: ast.AST, symbols: Symbols) -> bool:
    for d in getattr(fn, "decorator_list", []):
        target = d.func if isinstance(d, ast.Call) else d
        if (symbols.qualify(target) or "") in DISABLE_DECORATORS:
            return True
    return False


def is_disabled(fn: ast.AST, symbols: Symbols) -> bool:
    return _is_disabled(fn, symbols)
