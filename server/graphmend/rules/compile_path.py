"""[Align] GM501: a default that only eager code builds, used later as if always built.

    if attention_mask is None and not is_torchdynamo_compiling():
        attention_mask = torch.ones(batch_size, seq_length)
    ...
    causal_mask = attention_mask[:, None, None, :]      # or passed to a helper that reads .shape

In eager mode `not is_torchdynamo_compiling()` is True, so the default is built. Under
torch.compile it is False: the branch is skipped, the name stays None, and the later use
(a subscript, an attribute read, a call, or a helper of the same module that does one of
these to its parameter) raises while Dynamo traces. Dynamo reports "Observed exception"
(GB0088) and either gives up on the whole function and runs it in eager mode (every submodule
it calls is then compiled as a graph of its own, and no other mend inside the function shows)
or lets the compiled call raise the error, which eager mode never raises.
(transformers 4.52: LongT5Stack.forward, SwitchTransformersStack.forward.)

Reported only when the use is certain enough: it lies on the path after the `if` in the same
function, or in a function of the same module (or a method of the same class via `self.`)
the value is passed to, at most 3 calls deep; a use under a test of the name's None-ness
(`X is not None and ...`, `if X:`, `isinstance(X, ...)`) does not count, and the search stops
at a rebinding, a `try`, or a None test that returns or rebinds.

Mend: drop the `not is_compiling()` operand, so that compiled code takes the path eager code
takes (`if attention_mask is None:`); the rest of the condition, its comments and layout stay.

Legality (else the mend declines and says why): the branch contains no graph-break site of
its own (it is traced from now on) and mutates no argument in place (no `x.add_()`,
`x[i] = v`, `self.a = v`, `x += v` on a parameter); every other operand of the condition is
free of side effects (names, attribute reads, `is`/`is not` comparisons, constants), and the
condition has one such compile-time operand only.

Always UNSAFE: eager behaviour is unchanged (the operand removed is always True there), and
compiled code now computes what eager computes; but the guard's author kept the value None
under compile on purpose, for the paths that handle None (a decoder's causal mask, which SDPA
then takes as `is_causal` instead of a materialised mask). Those paths now get the default
too: their compiled result follows eager's arithmetic, which can differ in the last bits from
what the original compiled program gave, and can run slower.
"""

from __future__ import annotations

import ast
import re
from typing import Optional

from graphmend.analysis.dataflow import inert
from graphmend.analysis.detect import FunctionWalker, Site, is_not_compiling
from graphmend.findings import Applicability, Pos, Span, TextEdit
from graphmend.rules.base import Context, Example, Verdict

CODES = ("GM501",)
MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault",
                      "add", "discard", "popitem", "sort", "reverse", "register_buffer"})
UNSAFE_WHY = ("compiled code now builds the default on every path, also on paths that handled None "
              "(e.g. an SDPA `is_causal` fast path): their compiled result then follows eager's "
              "arithmetic, which can differ in the last bits from the original compiled program, and "
              "can be slower")


def message(site: Site) -> str:
    guard = ast.unparse(site.test) if site.test is not None else "not is_compiling()"
    return (f"under torch.compile `{guard}` is False, so this branch is skipped and `{site.detail}` "
            f"stays None; {site.use} and raises while Dynamo traces (GB0088): Dynamo skips the whole "
            "function (falls back to eager), or the compiled call fails where eager does not")


def judge(site: Site, ctx: Context, env) -> Verdict:
    node: ast.If = site.node
    test = node.test
    operands = test.values
    guards = [v for v in operands if is_not_compiling(v, ctx.symbols)]
    if len(guards) != 1 or site.test not in operands:
        return Verdict.decline("the condition has several compile-time operands")
    for v in operands:
        if v is not site.test and not inert(v, env.kind):
            return Verdict.decline(f"`{ast.unparse(v)}` may have side effects or take a tensor's truth; "
                                   "it would now be evaluated under torch.compile too")
    breaks = _breaks_in_body(site, ctx)
    if breaks:
        return Verdict.decline(f"the branch contains a graph break ({breaks}), which compiled code "
                               "would now run")
    why = _mutation(site)
    if why:
        return Verdict.decline(why)
    if _removal(site, ctx) is None:
        return Verdict.decline("a comment or an unusual layout sits in the operand to remove; "
                               "remove it by hand")
    return Verdict(Applicability.UNSAFE, f"Build `{site.detail}` under torch.compile too", UNSAFE_WHY)


def _breaks_in_body(site: Site, ctx: Context) -> Optional[str]:
    w = FunctionWalker(ctx.symbols, site.func)
    w.env.kinds = dict(site.kinds)
    w.env.locals |= set(site.kinds)
    w.block(site.node.body)
    if not w.sites:
        return None
    first = w.sites[0]
    return f"{first.code} at line {first.node.lineno}"


def _root(e: ast.expr) -> Optional[str]:
    while isinstance(e, (ast.Attribute, ast.Subscript)):
        e = e.value
    return e.id if isinstance(e, ast.Name) else None


def _mutation(site: Site) -> Optional[str]:
    """Why the branch may change an argument in place (or module state), else None."""
    a = site.func.node.args
    params = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if x}
    for s in site.node.body:
        for n in ast.walk(s):
            if isinstance(n, (ast.Global, ast.Nonlocal)):
                return "the branch declares global or nonlocal names"
            targets = []
            if isinstance(n, (ast.Assign, ast.Delete)):
                targets = n.targets
            elif isinstance(n, (ast.AnnAssign, ast.AugAssign)):
                targets = [n.target]
            for t in targets:
                for x in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                    if isinstance(x, (ast.Attribute, ast.Subscript)) and _root(x) in params:
                        return f"the branch changes the argument `{_root(x)}` in place (`{ast.unparse(x)}`)"
                    if isinstance(n, ast.AugAssign) and isinstance(x, ast.Name) and x.id in params \
                            and x.id != site.detail:
                        return f"the branch updates the argument `{x.id}` with `{ast.unparse(n.op)}=`, " \
                               "which may be in place"
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and _root(n.func.value) in params:
                attr = n.func.attr
                if attr in MUTATORS or (attr.endswith("_") and not attr.startswith("_")):
                    return f"the branch changes the argument `{_root(n.func.value)}` in place (`.{attr}()`)"
    return None


# --- the edit ----------------------------------------------------------------------------------
def _text_and_offsets(ctx: Context) -> tuple[str, list[int]]:
    starts, pos = [], 0
    for ln in ctx.lines:
        starts.append(pos)
        pos += len(ln)
    return "".join(ctx.lines), starts


def _off(ctx: Context, starts: list[int], line: int, byte_col: int) -> int:
    s = ctx.lines[line - 1]
    return starts[line - 1] + len(s.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def _pos(starts: list[int], lines: list[str], off: int) -> Pos:
    import bisect
    i = bisect.bisect_right(starts, off) - 1
    return Pos(i + 1, off - starts[i])


_AND = re.compile(r"^(?P<pre>[\s\\)]*?)(?P<ws>\s*(?:\\\n\s*)*)and(?P<post>[\s\\(]*)$")


def _removal(site: Site, ctx: Context) -> Optional[tuple[int, int]]:
    """Character offsets [a, b) of the text to delete: the operand with its own parentheses and
    one `and` next to it. None when a comment or an odd layout is in the way."""
    text, starts = _text_and_offsets(ctx)
    vals = site.node.test.values
    i = vals.index(site.test)

    def start(v):
        return _off(ctx, starts, v.lineno, v.col_offset)

    def end(v):
        return _off(ctx, starts, v.end_lineno, v.end_col_offset)

    if len(vals) < 2:
        return None
    if i > 0:
        a = end(vals[i - 1])
        m = _AND.match(text[a:start(vals[i])])
        if m is None:
            return None
        opened = m.group("post").count("(")
        a += len(m.group("pre"))  # keep the previous operand's closing parentheses
        b = end(vals[i])
    else:
        m = _AND.match(text[end(vals[0]):start(vals[1])])
        if m is None:
            return None
        opened = m.group("pre").count(")")
        a = start(vals[0])
        for _ in range(opened):  # the operand's own opening parentheses
            j = len(text[:a].rstrip(" \t"))
            if j == 0 or text[j - 1] != "(":
                return None
            a = j - 1
        b = end(vals[0]) + m.start("post")  # just after `and`
        post = m.group("post")
        b += len(post) - len(post.lstrip(" \t\\\n"))  # the spaces after `and`, not a `(`
        opened = 0
    if i > 0:
        # the operand's own closing parentheses, after it
        for _ in range(opened):
            rest = text[b:]
            k = len(rest) - len(rest.lstrip(" \t\\\n"))
            if not rest[k:].startswith(")"):
                return None
            b += k + 1
    if "#" in text[a:b] and any(t for t in _comments(text[a:b])):
        return None
    return a, b


def _comments(chunk: str) -> list[str]:
    import io
    import tokenize
    try:
        return [t.string for t in tokenize.generate_tokens(io.StringIO(chunk).readline)
                if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return ["?"]


def fix(site: Site, ctx: Context, env, span_of) -> Optional[list[TextEdit]]:
    got = _removal(site, ctx)
    if got is None:
        return None
    a, b = got
    _, starts = _text_and_offsets(ctx)
    return [TextEdit(Span(_pos(starts, ctx.lines, a), _pos(starts, ctx.lines, b)), "")]


EXAMPLES = [
    Example(
        "a default mask built only in eager, subscripted later",
        "import torch\n\n@torch.compile\ndef f(x, mask=None):\n"
        "    if mask is None and not torch.compiler.is_compiling():\n"
        "        mask = torch.ones(x.shape[0], x.shape[1])\n"
        "    return x * mask[:, :, None]\n",
        ["GM501"],
        "import torch\n\n@torch.compile\ndef f(x, mask=None):\n"
        "    if mask is None:\n"
        "        mask = torch.ones(x.shape[0], x.shape[1])\n"
        "    return x * mask[:, :, None]\n",
        unsafe=True),
    Example(
        "transformers-style: the mask is passed to a helper that reads its shape (LongT5)",
        "import torch\nfrom torch import nn\nfrom transformers.utils import is_torchdynamo_compiling\n\n\n"
        "def _split_into_blocks(x, block_len: int):\n"
        "    num_blocks = x.shape[1] // block_len\n"
        "    return x.reshape(x.shape[0], num_blocks, block_len)\n\n\n"
        "def _get_local_attention_mask(attention_mask, block_len: int):\n"
        "    return _split_into_blocks(attention_mask, block_len)\n\n\n"
        "class Stack(nn.Module):\n"
        "    def forward(self, hidden_states, attention_mask=None):\n"
        "        batch_size, seq_length = hidden_states.shape[:2]\n"
        "        if (\n"
        "            attention_mask is None\n"
        "            and not is_torchdynamo_compiling()  # the default is built in eager only\n"
        "        ):\n"
        "            attention_mask = torch.ones(batch_size, seq_length, device=hidden_states.device)\n"
        "        if self.training:\n"
        "            return hidden_states\n"
        "        return hidden_states, _get_local_attention_mask(attention_mask, 4)\n",
        ["GM501"],
        "import torch\nfrom torch import nn\nfrom transformers.utils import is_torchdynamo_compiling\n\n\n"
        "def _split_into_blocks(x, block_len: int):\n"
        "    num_blocks = x.shape[1] // block_len\n"
        "    return x.reshape(x.shape[0], num_blocks, block_len)\n\n\n"
        "def _get_local_attention_mask(attention_mask, block_len: int):\n"
        "    return _split_into_blocks(attention_mask, block_len)\n\n\n"
        "class Stack(nn.Module):\n"
        "    def forward(self, hidden_states, attention_mask=None):\n"
        "        batch_size, seq_length = hidden_states.shape[:2]\n"
        "        if (\n"
        "            attention_mask is None  # the default is built in eager only\n"
        "        ):\n"
        "            attention_mask = torch.ones(batch_size, seq_length, device=hidden_states.device)\n"
        "        if self.training:\n"
        "            return hidden_states\n"
        "        return hidden_states, _get_local_attention_mask(attention_mask, 4)\n",
        unsafe=True),
    Example(
        "several conditions; the compile-time one in the middle",
        "import torch\nfrom torch import nn\nfrom transformers.utils import is_torchdynamo_compiling\n\n\n"
        "class Stack(nn.Module):\n"
        "    def forward(self, hidden_states, attention_mask=None):\n"
        "        if attention_mask is None and (not is_torchdynamo_compiling()) and self.config.use_mask:\n"
        "            attention_mask = torch.ones(hidden_states.shape[:2])\n"
        "        causal_mask = attention_mask[:, None, None, :]\n"
        "        return hidden_states * causal_mask\n",
        ["GM501"],
        "import torch\nfrom torch import nn\nfrom transformers.utils import is_torchdynamo_compiling\n\n\n"
        "class Stack(nn.Module):\n"
        "    def forward(self, hidden_states, attention_mask=None):\n"
        "        if attention_mask is None and self.config.use_mask:\n"
        "            attention_mask = torch.ones(hidden_states.shape[:2])\n"
        "        causal_mask = attention_mask[:, None, None, :]\n"
        "        return hidden_states * causal_mask\n",
        unsafe=True),
    Example(
        "declined: the branch has a graph break of its own",
        "import torch\n\n@torch.compile\ndef f(x, mask=None):\n"
        "    if mask is None and not torch.compiler.is_compiling():\n"
        "        print('building a default mask')\n"
        "        mask = torch.ones(x.shape[0], x.shape[1])\n"
        "    return x * mask[..., None]\n",
        ["GM501"], None),
    Example(
        "not flagged: the None case is handled where the value is used (T5's _update_causal_mask)",
        "import torch\nfrom torch import nn\n\n\n"
        "class Stack(nn.Module):\n"
        "    def _update_causal_mask(self, attention_mask, x):\n"
        "        if attention_mask is None:\n"
        "            return None\n"
        "        return attention_mask[:, None, None, :].to(x.dtype)\n\n"
        "    def forward(self, x, attention_mask=None):\n"
        "        if attention_mask is None and not torch.compiler.is_compiling():\n"
        "            attention_mask = torch.ones(x.shape[:2])\n"
        "        mask = self._update_causal_mask(attention_mask, x)\n"
        "        extended = attention_mask[:, None, :] if attention_mask is not None else None\n"
        "        return x, mask, extended\n",
        [], None),
]
