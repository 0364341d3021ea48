"""[Defer] GM101 print / GM102 logging / GM103 warnings.warn inside compiled code.

The call is routed through the runtime (`graphmend/runtime.py`, bound as `graphmend` by one
import line): in eager mode the helper makes exactly the original call; under torch.compile it
emits the message from an ORDERED effectful custom op, so the graph does not break and the
message is kept, in program order, at any call depth, with tensor values as they were at the
call::

    print("scaling", x.shape)       ->  graphmend.print("scaling", x.shape)
    logger.warning_once(msg)        ->  graphmend.log(logger, "warning_once", msg)
    warnings.warn(msg, UserWarning) ->  graphmend.warn(msg, UserWarning)

Arguments pass as they are when the op can carry them: tensors, numbers, str, None, dtypes,
devices, shapes, and tuples, lists and dicts of these. What reads a tensor's value in Python is
moved to run time, on the value the tensor had at the call:
`f"loss={loss:.3f}"` -> `graphmend.format("loss={:.3f}", loss)`, `"%s" % (t,)` ->
`graphmend.percent("%s", (t,))`, `t.item()` / `float(t)` / `int(t)` / `bool(t)` / `t.tolist()` ->
`graphmend.item(t)` / `to_float` / `to_int` / `to_bool` / `tolist` (as an argument, an f-string
field, or an element of a tuple, list or dict argument).

Legality (else the mend declines, naming the argument): a tensor read elsewhere inside an
argument (`round(t.item(), 2)`, `str(t)`), a NumPy conversion (`t.numpy()`), lambdas and
comprehensions cannot be carried; logger calls with `exc_info`/`stack_info`/`extra` (the record
would differ), `**kwargs`, `logger.exception`, `warnings.warn` with a Warning instance or
`source=`, and print to a file other than stdout/stderr are declined. A value of a type the op
cannot carry that the analysis cannot see (a user object) makes the runtime run the original
call under compile: the message is kept and the break comes back.
"""

from __future__ import annotations

import ast
from typing import Optional

from graphmend.analysis.dataflow import Kind
from graphmend.analysis.detect import Site
from graphmend.findings import Applicability, Pos, Span, TextEdit
from graphmend.rules.base import Context, Example, Verdict

CODES = ("GM101", "GM102", "GM103")
HELPER_FOR = {"GM101": "graphmend.print", "GM102": "graphmend.log", "GM103": "graphmend.warn"}
GATED_FOR = {"GM101": "graphmend.print_if", "GM102": "graphmend.log_if", "GM103": "graphmend.warn_if"}
LOG_KW_DECLINED = ("exc_info", "stack_info", "extra")
SCALAR_METHODS = {"item": "item", "tolist": "tolist"}
SCALAR_BUILTINS = {"float": "to_float", "int": "to_int", "bool": "to_bool"}
CONV = {-1: "", 115: "!s", 114: "!r", 97: "!a"}


def message(site: Site) -> str:
    what = {"GM101": "print()", "GM102": site.detail, "GM103": "warnings.warn()"}[site.code]
    return f"{what} inside compiled code breaks the graph"


def _scalar_read(n: ast.AST, ctx: Context, env) -> Optional[tuple[str, ast.expr]]:
    """(runtime helper, tensor) when `n` reads a tensor's value into Python: `t.item()`,
    `t.tolist()`, `float(t)`, `int(t)`, `bool(t)`."""
    if not isinstance(n, ast.Call) or n.keywords:
        return None
    f = n.func
    if isinstance(f, ast.Attribute) and f.attr in SCALAR_METHODS and not n.args \
            and env.kind(f.value) is Kind.TENSOR:
        return SCALAR_METHODS[f.attr], f.value
    if isinstance(f, ast.Name) and f.id in SCALAR_BUILTINS and len(n.args) == 1 \
            and not isinstance(n.args[0], ast.Starred) and env.kind(n.args[0]) is Kind.TENSOR \
            and f.id not in ctx.symbols.imports and f.id not in getattr(ctx.symbols, "defs", {}):
        return SCALAR_BUILTINS[f.id], n.args[0]
    return None


def _tensor_text(n: ast.AST, env) -> bool:
    """Formatting `n` in Python makes text of a tensor's value (a break under compile)."""
    return env.kind(n) in (Kind.TENSOR, Kind.DATA)


class _Deferral:
    """Rewrites one argument so that nothing in it reads a tensor's value at the call."""

    def __init__(self, ctx: Context, env):
        self.ctx, self.env = ctx, env
        self.problem: Optional[str] = None

    def arg(self, a: ast.expr) -> Optional[str]:
        """The argument's new text, or None when it stays as written (or `problem` is set)."""
        new = self._value(a, top=True)
        if new is None and self.problem is None:
            self.problem = self._unpassable(a)
        return new

    def _value(self, n: ast.expr, top: bool = False) -> Optional[str]:
        ctx, env = self.ctx, self.env
        read = _scalar_read(n, ctx, env)
        if read is not None:
            helper, t = read
            return f"graphmend.{helper}({ctx.src(t)})"
        if isinstance(n, ast.JoinedStr) and any(
                isinstance(v, ast.FormattedValue) and self._needs_run_time(v) for v in n.values):
            return self._format(n)
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) and isinstance(n.left, (ast.Constant, ast.JoinedStr)) \
                and isinstance(getattr(n.left, "value", ""), str) and self._needs_run_time(n.right):
            if isinstance(n.left, ast.JoinedStr) and any(isinstance(v, ast.FormattedValue) for v in n.left.values):
                return None
            right = self._value(n.right) or ctx.src(n.right)
            return f"graphmend.percent({ctx.src(n.left)}, {right})"
        if isinstance(n, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in n.elts):
            parts = [self._value(e) for e in n.elts]
            if all(p is None for p in parts):
                return None
            inner = ", ".join(p or ctx.src(e) for p, e in zip(parts, n.elts))
            if isinstance(n, ast.List):
                return f"[{inner}]"
            return f"({inner}{',' if len(n.elts) == 1 else ''})"
        if isinstance(n, ast.Dict) and None not in n.keys:
            vals = [self._value(v) for v in n.values]
            if all(v is None for v in vals):
                return None
            return "{" + ", ".join(f"{ctx.src(k)}: {v or ctx.src(e)}"
                                   for k, v, e in zip(n.keys, vals, n.values)) + "}"
        return None

    def _needs_run_time(self, n: ast.expr) -> bool:
        """Whether `n` (an f-string field, a %-operand) formats or reads a tensor's value."""
        if isinstance(n, ast.FormattedValue):
            return _tensor_text(n.value, self.env) or self._needs_run_time(n.value)
        if _scalar_read(n, self.ctx, self.env) is not None or _tensor_text(n, self.env):
            return True
        if isinstance(n, (ast.Tuple, ast.List)):
            return any(self._needs_run_time(e) for e in n.elts)
        if isinstance(n, ast.Dict):
            return any(self._needs_run_time(v) for v in n.values)
        return False

    def _field(self, v: ast.FormattedValue, values: list[str]) -> str:
        """One replacement field of str.format syntax, its value(s) appended to `values`."""
        values.append(self._value(v.value) or self.ctx.src(v.value).strip() or ast.unparse(v.value))
        spec = ""
        if v.format_spec is not None:
            for x in v.format_spec.values:
                if isinstance(x, ast.Constant):
                    spec += _brace_escape(x.value)
                else:  # a nested field: {w} inside the spec
                    spec += self._field(x, values)
        return "{" + CONV[v.conversion] + (":" + spec if spec else "") + "}"

    def _format(self, s: ast.JoinedStr) -> Optional[str]:
        template, values = "", []
        for v in s.values:
            if isinstance(v, ast.Constant):
                template += _brace_escape(v.value)
            else:
                template += self._field(v, values)
        if any("\n" in x for x in values):  # a field written over several lines: re-printed flat
            return None
        return f"graphmend.format({_literal(template, _quote_of(self.ctx.src(s)))}, {', '.join(values)})"

    def _unpassable(self, a: ast.expr) -> Optional[str]:
        """Why argument `a` (left as written) cannot be carried to run time, if it cannot."""
        ctx, env = self.ctx, self.env
        for n in ast.walk(a):
            read = _scalar_read(n, ctx, env)
            if read is not None and n is not a:
                return (f"`{ctx.src(n)}` inside `{ctx.src(a)}` reads a tensor's value in Python when the "
                        "call is made, which breaks the graph; pass it as an argument of its own (or an "
                        "f-string field) to have it read at run time")
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "numpy" \
                    and env.kind(n.func.value) is Kind.TENSOR:
                return f"`{ctx.src(n)}` makes a NumPy array, which the graph cannot carry to run time"
            if isinstance(n, (ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp,
                              ast.Set, ast.Await, ast.Yield, ast.YieldFrom)):
                return f"`{ctx.src(a)}` builds a {type(n).__name__}, which the graph cannot carry to run time"
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("str", "repr", "format") \
                    and any(_tensor_text(x, env) for x in n.args):
                return (f"`{ctx.src(n)}` makes the text of a tensor when the call is made, which breaks the "
                        "graph; pass the tensor itself (or an f-string field) to have it formatted at run time")
            if isinstance(n, ast.JoinedStr) and n is not a and any(
                    isinstance(v, ast.FormattedValue) and self._needs_run_time(v) for v in n.values):
                return (f"the f-string inside `{ctx.src(a)}` formats a tensor when the call is made; pass "
                        "the f-string as an argument of its own to have it formatted at run time")
        return None


def _brace_escape(s: str) -> str:
    return s.replace("{", "{{").replace("}", "}}")


def _quote_of(src: str) -> str:
    body = src.lstrip("rRbBuUfF")
    return "'" if body.startswith("'") else '"'


def _literal(s: str, quote: str) -> str:
    """A one-line str literal for `s` in the file's quote style."""
    if quote in s and ('"' if quote == "'" else "'") not in s:
        quote = '"' if quote == "'" else "'"
    out = []
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == quote:
            out.append("\\" + ch)
        elif ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif not ch.isprintable():
            out.append(ascii(ch)[1:-1])
        else:
            out.append(ch)
    return quote + "".join(out) + quote


def judge(site: Site, ctx: Context, env) -> Verdict:
    call: ast.Call = site.node
    kws = {k.arg for k in call.keywords}
    if site.code == "GM101":
        f = next((k.value for k in call.keywords if k.arg == "file"), None)
        if f is not None and not (isinstance(f, ast.Constant) and f.value is None) \
                and ctx.symbols.qualify(f) not in ("sys.stdout", "sys.stderr"):
            return Verdict.decline("print() writes to a file other than stdout/stderr; only those are deferred")
    if site.code == "GM102":
        bad = kws & set(LOG_KW_DECLINED)
        if bad:
            return Verdict.decline(f"the logger call passes {', '.join(sorted(bad))}, which a deferred "
                                   "record cannot reproduce")
    if None in kws:
        return Verdict.decline("the call unpacks **kwargs, which cannot be checked statically")
    if site.code == "GM102" and site.detail.endswith(".exception()"):
        return Verdict.decline("logger.exception() records the active exception's traceback, "
                               "which a deferred record cannot carry")
    if site.code == "GM102" and kws - {"stacklevel"}:
        return Verdict.decline(f"the logger call passes {', '.join(sorted(kws - {'stacklevel'}))}; "
                               "only stacklevel can be deferred")
    if site.code == "GM103" and ("source" in kws or any(
            isinstance(a, ast.Call) and env.kind(a) is not Kind.STATIC and _scalar_read(a, ctx, env) is None
            for a in call.args[:1])):
        return Verdict.decline("warnings.warn() is given a Warning instance or source=; only a "
                               "message and a category can be deferred")
    why = argument_problem(site, ctx, env)
    if why:
        return Verdict.decline(why)
    title = {"GM101": "Defer print() into the graph",
             "GM102": f"Defer {site.detail} into the graph",
             "GM103": "Defer warnings.warn() into the graph"}[site.code]
    return Verdict(Applicability.SAFE, title)


def argument_problem(site: Site, ctx: Context, env) -> Optional[str]:
    """Why an argument of the call cannot be carried to run time (None: all can)."""
    d = _Deferral(ctx, env)
    for i, a in enumerate([*site.node.args, *(k.value for k in site.node.keywords)]):
        if isinstance(a, ast.Starred):
            if _scalar_read(a.value, ctx, env) or any(_scalar_read(n, ctx, env) for n in ast.walk(a.value)):
                return f"`{ctx.src(a)}` unpacks values read from a tensor when the call is made"
            continue
        d.arg(a)
        if d.problem:
            return d.problem
    return None


def _deferred_args(site: Site, ctx: Context, env) -> Optional[dict]:
    """{argument node: its new text} for the arguments that change; None if one cannot pass."""
    d = _Deferral(ctx, env)
    out = {}
    for a in [*site.node.args, *(k.value for k in site.node.keywords)]:
        if isinstance(a, ast.Starred):
            continue
        new = d.arg(a)
        if d.problem:
            return None
        if new is not None:
            out[a] = new
    return out


def call_text(site: Site, ctx: Context, env, when: Optional[str] = None) -> Optional[str]:
    """The whole helper call as one expression (for rewrites that replace a statement whole);
    `when`: the condition of a gated effect (`graphmend.print_if(when, ...)`)."""
    call: ast.Call = site.node
    rebuilt = _deferred_args(site, ctx, env)
    if rebuilt is None:
        return None
    args: list[str] = [] if when is None else [when]
    if site.code == "GM102":
        args += [ctx.src(call.func.value), ctx.quoted(call.func.attr)]
    args += [rebuilt.get(a) or ctx.src(a) for a in call.args]
    args += [f"{k.arg}={rebuilt.get(k.value) or ctx.src(k.value)}" if k.arg else f"**{ctx.src(k.value)}"
             for k in call.keywords]
    return f"{(HELPER_FOR if when is None else GATED_FOR)[site.code]}({', '.join(args)})"


def fix(site: Site, ctx: Context, env, span_of) -> Optional[list[TextEdit]]:
    """Minimal edits: rename the callee, insert the logger and method after `(`, rewrite only the
    arguments that read tensor values; the rest of the call (comments, layout) stays as written
    (a line the mend makes too long is wrapped afterwards, rewrite/wrap.py)."""
    call: ast.Call = site.node
    rebuilt = _deferred_args(site, ctx, env)
    if rebuilt is None:
        return None
    func_span = span_of(call.func)
    line = ctx.lines[func_span.end.line - 1].rstrip("\r\n")
    k = line.find("(", func_span.end.col)
    if k < 0 or line[func_span.end.col:k].strip():
        return None  # `print  \\\n (...)`: unusual layout; no fix rather than a wrong one
    after_paren = Pos(func_span.end.line, k + 1)
    edits = [TextEdit(func_span, HELPER_FOR[site.code])]
    has_args = bool(call.args or call.keywords)
    if site.code == "GM102":
        lead = f"{ctx.src(call.func.value)}, {ctx.quoted(call.func.attr)}" + (", " if has_args else "")
        if not line[k + 1:].strip():
            lead = lead.rstrip()  # the arguments start on the next line: no trailing space left
        edits.append(TextEdit(Span(after_paren, after_paren), lead))
    for a, new in rebuilt.items():
        edits.append(TextEdit(span_of(a), new))
    return edits


EXAMPLES = [
    Example(
        "print in a compiled function",
        "import torch\n\n@torch.compile\ndef f(x):\n    print('scaling', x.shape)\n    return x * 2\n",
        ["GM101"],
        "import torch\nimport _graphmend_runtime as graphmend\n\n@torch.compile\ndef f(x):\n    graphmend.print('scaling', x.shape)\n"
        "    return x * 2\n"),
    Example(
        "transformers-style warning_once in a submodule forward",
        "import torch\nfrom torch import nn\nfrom transformers.utils import logging\n\n"
        "logger = logging.get_logger(__name__)\n\n"
        "class Block(nn.Module):\n    def forward(self, x, use_cache=True):\n        if use_cache:\n"
        "            logger.warning_once(\"`use_cache=True` is deprecated\")\n        return x + 1\n",
        ["GM102"],
        "import torch\nfrom torch import nn\nfrom transformers.utils import logging\nimport _graphmend_runtime as graphmend\n\n"
        "logger = logging.get_logger(__name__)\n\n"
        "class Block(nn.Module):\n    def forward(self, x, use_cache=True):\n        if use_cache:\n"
        "            graphmend.log(logger, \"warning_once\", \"`use_cache=True` is deprecated\")\n"
        "        return x + 1\n"),
    Example(
        "a tensor value in an f-string is formatted when the graph runs",
        "import logging\nimport torch\n\nlogger = logging.getLogger(__name__)\n\n"
        "@torch.compile\ndef f(x):\n    s = x.sum()\n    logger.info(f\"sum={s:.3f} n={x.shape[0]}\")\n"
        "    return s\n",
        ["GM102"],
        "import logging\nimport torch\nimport _graphmend_runtime as graphmend\n\nlogger = logging.getLogger(__name__)\n\n"
        "@torch.compile\ndef f(x):\n    s = x.sum()\n"
        "    graphmend.log(logger, \"info\", graphmend.format(\"sum={:.3f} n={}\", s, x.shape[0]))\n"
        "    return s\n"),
    Example(
        "warnings.warn in a helper the compiled function calls",
        "import warnings\nimport torch\n\ndef helper(x):\n    warnings.warn('slow path', UserWarning)\n"
        "    return x - 1\n\n@torch.compile\ndef f(x):\n    return helper(x)\n",
        ["GM103"],
        "import warnings\nimport torch\nimport _graphmend_runtime as graphmend\n\ndef helper(x):\n"
        "    graphmend.warn('slow path', UserWarning)\n    return x - 1\n\n"
        "@torch.compile\ndef f(x):\n    return helper(x)\n"),
    Example(
        "containers of tensors, and values read from tensors, are carried to run time",
        "import logging\nimport torch\n\nlog = logging.getLogger(__name__)\n\n@torch.compile\ndef f(x):\n"
        "    loss = x.sum()\n    log.info(\"loss %.4f\", loss.item())\n"
        "    log.debug(\"stats: %s %s\", {\"min\": x.min(), \"max\": x.max()}, tuple(x.shape))\n"
        "    print(f\"loss {loss.item():.3f}\", float(loss), x[:2].tolist(), \"mean %s\" % (x.mean(),))\n"
        "    return loss\n",
        ["GM102", "GM401", "GM102", "GM101", "GM401", "GM401", "GM401", "GM401"],
        "import logging\nimport torch\nimport _graphmend_runtime as graphmend\n\nlog = logging.getLogger(__name__)\n\n"
        "@torch.compile\ndef f(x):\n    loss = x.sum()\n"
        "    graphmend.log(log, \"info\", \"loss %.4f\", graphmend.item(loss))\n"
        "    graphmend.log(\n"
        "        log, \"debug\", \"stats: %s %s\", {\"min\": x.min(), \"max\": x.max()}, tuple(x.shape)\n"
        "    )\n"
        "    graphmend.print(\n"
        "        graphmend.format(\"loss {:.3f}\", graphmend.item(loss)),\n"
        "        graphmend.to_float(loss),\n"
        "        graphmend.tolist(x[:2]),\n"
        "        graphmend.percent(\"mean %s\", (x.mean(),)),\n"
        "    )\n"
        "    return loss\n"),
    Example(
        "declined: a tensor read inside another call happens at the call",
        "import torch\n\n@torch.compile\ndef f(x):\n    print('loss', round(x.sum().item(), 2))\n    return x\n",
        ["GM101", "GM401"], None),
    Example(
        "exc_info cannot be deferred",
        "import logging\nimport torch\n\nlogger = logging.getLogger(__name__)\n\n@torch.compile\ndef f(x):\n"
        "    logger.warning('odd input', exc_info=True)\n    return x\n",
        ["GM102"], None),
    Example(
        "not flagged: outside compiled code, and under `if not is_compiling()`",
        "import torch\n\ndef report(x):\n    print(x)\n\n@torch.compile\ndef f(x):\n"
        "    if not torch.compiler.is_compiling():\n        print('eager only')\n    return x\n",
        [], None),
]

