"""[Defer] GM101 print / GM102 logging / GM103 warnings.warn inside compiled code.

The call is routed through a helper of the file's runtime block (`rewrite/runtime.py`): in
eager mode the helper makes exactly the original call; under torch.compile it emits the
message from an ORDERED effectful custom op, so the graph does not break and the message is
kept, in program order, at any call depth, with tensor values as they were at the call.

Legality: the call's arguments must be expressible to the op. Declined: logger calls with
`exc_info`/`stack_info`/`extra` (the record would differ), `%`-style arguments that are tensors,
print to a file other than stdout/stderr. f-string fields that are tensors become
`str.format` placeholders filled at emission time.
"""

from __future__ import annotations

import ast
from typing import Optional

from graphmend.analysis.dataflow import Kind
from graphmend.analysis.detect import Site
from graphmend.findings import Applicability, Pos, Span, TextEdit
from graphmend.rules.base import Context, Example, Verdict

CODES = ("GM101", "GM102", "GM103")
HELPER_FOR = {"GM101": "_graphmend_print", "GM102": "_graphmend_log", "GM103": "_graphmend_warn"}
LOG_KW_DECLINED = ("exc_info", "stack_info", "extra")


def message(site: Site) -> str:
    what = {"GM101": "print()", "GM102": site.detail, "GM103": "warnings.warn()"}[site.code]
    return f"{what} inside compiled code breaks the graph"


def _tensor_fields(site: Site, env, s: ast.JoinedStr) -> list[ast.FormattedValue]:
    return [v for v in s.values if isinstance(v, ast.FormattedValue) and env.kind(v.value) is Kind.TENSOR]


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
        rest = call.args[2:] if site.detail.endswith(".log()") else call.args[1:]
        if any(env.kind(a) is Kind.TENSOR for a in rest):
            return Verdict.decline("a %-style argument is a tensor; its text exists only at run time "
                                   "(write it as an f-string field to have it deferred)")
    if None in kws:
        return Verdict.decline("the call unpacks **kwargs, which cannot be checked statically")
    if site.code == "GM102" and site.detail.endswith(".exception()"):
        return Verdict.decline("logger.exception() records the active exception's traceback, "
                               "which a deferred record cannot carry")
    if site.code == "GM102" and kws - {"stacklevel"}:
        return Verdict.decline(f"the logger call passes {', '.join(sorted(kws - {'stacklevel'}))}; "
                               "only stacklevel can be deferred")
    if site.code == "GM103" and ("source" in kws or any(
            isinstance(a, ast.Call) and env.kind(a) is not Kind.STATIC for a in call.args[:1])):
        return Verdict.decline("warnings.warn() is given a Warning instance or source=; only a "
                               "message and a category can be deferred")
    title = {"GM101": "Defer print() into the graph",
             "GM102": f"Defer {site.detail} into the graph",
             "GM103": "Defer warnings.warn() into the graph"}[site.code]
    return Verdict(Applicability.SAFE, title)


def _fstring_with_placeholders(ctx: Context, s: ast.JoinedStr, tensor_fields, start: int) -> Optional[str]:
    """Rebuild an f-string, turning tensor fields into the runtime's literal `{_gmN!c:spec}`
    placeholders (filled when the graph runs). Field expressions are re-printed with
    ast.unparse (their positions inside f-strings are unreliable before Python 3.12); the
    quotes are chosen so that no field expression contains them. None if that is impossible."""
    parts: list[tuple[bool, str]] = []  # (is code, text)
    n = start
    for v in s.values:
        if isinstance(v, ast.Constant):
            parts.append((False, v.value))
        elif v in tensor_fields:
            conv = {-1: "", 115: "!s", 114: "!r", 97: "!a"}[v.conversion]
            spec = _spec(v)
            parts.append((True, "{{" + f"_gm{n}{conv}" + (":" + spec if spec is not None else "") + "}}"))
            n += 1
        else:
            parts.append((True, "{" + _field_src(v) + "}"))
    code = "".join(t for is_code, t in parts if is_code)
    if "\\" in code:
        return None
    for quote in ('"', "'", '"""', "'''"):
        if quote not in code:
            break
    else:
        return None
    body = "".join(t if is_code else _escape(t, quote) for is_code, t in parts)
    return f"f{quote}{body}{quote}"


def _spec(v: ast.FormattedValue) -> Optional[str]:
    if v.format_spec is None:
        return None
    out = []
    for x in v.format_spec.values:
        out.append(_escape(x.value, "") if isinstance(x, ast.Constant) else "{" + _field_src(x) + "}")
    return "".join(out)


def _escape(s: str, quote: str) -> str:
    s = s.replace("\\", "\\\\").replace("{", "{{").replace("}", "}}")
    s = s.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    if quote:
        s = s.replace(quote[0], "\\" + quote[0])
    return s


def _field_src(v: ast.FormattedValue) -> str:
    expr = ast.unparse(v.value)
    conv = {-1: "", 115: "!s", 114: "!r", 97: "!a"}[v.conversion]
    spec = _spec(v)
    if expr.startswith("{"):
        expr = " " + expr
    return f"{expr}{conv}" + (":" + spec if spec is not None else "")


def _fstring_args(site: Site, ctx: Context, env) -> Optional[tuple[dict, list[str]]]:
    """{arg node: rebuilt f-string} for arguments with tensor fields, and the deferred values."""
    rebuilt: dict = {}
    values: list[str] = []
    for a in site.node.args:
        if isinstance(a, ast.JoinedStr) and _tensor_fields(site, env, a):
            fields = _tensor_fields(site, env, a)
            new = _fstring_with_placeholders(ctx, a, fields, len(values))
            if new is None:
                return None
            rebuilt[a] = new
            values += [ast.unparse(v.value) for v in fields]
    return rebuilt, values


def _extras(values: list[str], when: Optional[str]) -> list[str]:
    out = []
    if values:
        out.append("_gm_values=(" + ", ".join(values) + ("," if len(values) == 1 else "") + ")")
    if when is not None:
        out.append(f"_gm_when={when}")
    return out


def call_text(site: Site, ctx: Context, env, when: Optional[str] = None) -> Optional[str]:
    """The whole helper call as one expression (for rewrites that replace a statement whole)."""
    call: ast.Call = site.node
    got = _fstring_args(site, ctx, env)
    if got is None:
        return None
    rebuilt, values = got
    args: list[str] = []
    if site.code == "GM102":
        args += [ctx.src(call.func.value), f'"{call.func.attr}"']
    args += [rebuilt.get(a) or ctx.src(a) for a in call.args]
    args += [f"{k.arg}={ctx.src(k.value)}" if k.arg else f"**{ctx.src(k.value)}" for k in call.keywords]
    return f"{HELPER_FOR[site.code]}({', '.join(args + _extras(values, when))})"


def fix(site: Site, ctx: Context, env, span_of) -> Optional[list[TextEdit]]:
    """Minimal edits: rename the callee, insert the logger and method after `(`, rewrite only
    the f-strings that carry tensors, append `_gm_values=`; the rest of the call (comments,
    layout) stays as written."""
    call: ast.Call = site.node
    got = _fstring_args(site, ctx, env)
    if got is None:
        return None
    rebuilt, values = got
    func_span = span_of(call.func)
    line = ctx.lines[func_span.end.line - 1].rstrip("\r\n")
    k = line.find("(", func_span.end.col)
    if k < 0 or line[func_span.end.col:k].strip():
        return None  # `print  \\\n (...)`: unusual layout; no fix rather than a wrong one
    after_paren = Pos(func_span.end.line, k + 1)
    edits = [TextEdit(func_span, HELPER_FOR[site.code])]
    has_args = bool(call.args or call.keywords)
    if site.code == "GM102":
        lead = f'{ctx.src(call.func.value)}, "{call.func.attr}"' + (", " if has_args else "")
        edits.append(TextEdit(Span(after_paren, after_paren), lead))
    for a, new in rebuilt.items():
        edits.append(TextEdit(span_of(a), new))
    extras = _extras(values, None)
    if extras:
        if has_args:
            last = max([*call.args, *(kw.value for kw in call.keywords)],
                       key=lambda n: (n.end_lineno, n.end_col_offset))
            end = span_of(last).end
            edits.append(TextEdit(Span(end, end), ", " + ", ".join(extras)))
        else:
            edits.append(TextEdit(Span(after_paren, after_paren), ", ".join(extras)))
    return edits


EXAMPLES = [
    Example(
        "print in a compiled function",
        "import torch\n\n@torch.compile\ndef f(x):\n    print('scaling', x.shape)\n    return x * 2\n",
        ["GM101"],
        "import torch\n@@HELPERS@@\n\n@torch.compile\ndef f(x):\n    _graphmend_print('scaling', x.shape)\n"
        "    return x * 2\n"),
    Example(
        "transformers-style warning_once in a submodule forward",
        "import torch\nfrom torch import nn\nfrom transformers.utils import logging\n\n"
        "logger = logging.get_logger(__name__)\n\n"
        "class Block(nn.Module):\n    def forward(self, x, use_cache=True):\n        if use_cache:\n"
        "            logger.warning_once(\"`use_cache=True` is deprecated\")\n        return x + 1\n",
        ["GM102"],
        "import torch\nfrom torch import nn\nfrom transformers.utils import logging\n@@HELPERS@@\n\n"
        "logger = logging.get_logger(__name__)\n\n"
        "class Block(nn.Module):\n    def forward(self, x, use_cache=True):\n        if use_cache:\n"
        "            _graphmend_log(logger, \"warning_once\", \"`use_cache=True` is deprecated\")\n"
        "        return x + 1\n"),
    Example(
        "a tensor value in an f-string is formatted when the graph runs",
        "import logging\nimport torch\n\nlogger = logging.getLogger(__name__)\n\n"
        "@torch.compile\ndef f(x):\n    s = x.sum()\n    logger.info(f\"sum={s:.3f} n={x.shape[0]}\")\n"
        "    return s\n",
        ["GM102"],
        "import logging\nimport torch\n@@HELPERS@@\n\nlogger = logging.getLogger(__name__)\n\n"
        "@torch.compile\ndef f(x):\n    s = x.sum()\n"
        "    _graphmend_log(logger, \"info\", f\"sum={{_gm0:.3f}} n={x.shape[0]}\", _gm_values=(s,))\n"
        "    return s\n"),
    Example(
        "warnings.warn in a helper the compiled function calls",
        "import warnings\nimport torch\n\ndef helper(x):\n    warnings.warn('slow path', UserWarning)\n"
        "    return x - 1\n\n@torch.compile\ndef f(x):\n    return helper(x)\n",
        ["GM103"],
        "import warnings\nimport torch\n@@HELPERS@@\n\ndef helper(x):\n"
        "    _graphmend_warn('slow path', UserWarning)\n    return x - 1\n\n"
        "@torch.compile\ndef f(x):\n    return helper(x)\n"),
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

