"""The rules: one module per rewrite, each with its detection verdict, legality, fix and examples.

`judge` turns an analysis Site into a Finding (cheap: runs on every check);
`fix_edits` builds the text edits of one finding on demand.
"""

from __future__ import annotations

import ast
from types import ModuleType
from typing import Optional

from graphmend.analysis.dataflow import Env
from graphmend.analysis.detect import Site
from graphmend.analysis.symbols import Symbols
from graphmend.findings import CATALOGUE, Applicability, Finding, Pos, Span, TextEdit
from graphmend.rules import (compile_path, defer, grouped, listify, masked, one_hot, route, scalar_first, sdpa, trap,
                             unmendable, where)
from graphmend.rules.base import Context, Verdict

MODULES: tuple[ModuleType, ...] = (defer, where, trap, unmendable, compile_path, route, masked, grouped,
                                   one_hot, sdpa, scalar_first, listify)
BY_CODE: dict[str, ModuleType] = {c: m for m in MODULES for c in m.CODES}
DOCS_URL = "https://github.com/graphmend/graphmend/blob/main/docs/rules/{code}.md"


def _env(site: Site, symbols: Symbols) -> Env:
    env = Env(symbols, site.func)
    env.kinds = dict(site.kinds)
    return env


SCRIPT_DECORATORS = frozenset({"torch.jit.script", "torch.jit.script_method", "torch.jit._script.script"})


def _scripted(fi, symbols: Symbols) -> bool:
    """`fi` (or its class) is decorated with `@torch.jit.script`: its body must stay TorchScript
    (realcode round 13: a `graphmend.print` mended into geoopt-style scripted code failed at import)."""
    nodes = [fi.node] + ([fi.cls.node] if getattr(fi, "cls", None) is not None else [])
    return any((symbols.qualify(d.func if isinstance(d, ast.Call) else d) or "") in SCRIPT_DECORATORS
               for n in nodes for d in n.decorator_list)


def judge(site: Site, symbols: Symbols, lines, text: str) -> Finding:
    mod = BY_CODE[site.code]
    ctx = Context(text, symbols, lines)
    env = _env(site, symbols)
    verdict = mod.judge(site, ctx, env)
    if site.maybe_none and verdict.applicability is not Applicability.NONE:
        names = ", ".join(f"`{n}`" for n in site.maybe_none)
        verdict = Verdict.decline(f"{names} may be None here (set to None on another path, or by default): the "
                                  f"condition then tests whether it is None, which no tensor condition keeps")
    if site.maybe_number and site.code not in ("GM101", "GM102", "GM103", "GM301") \
            and verdict.applicability is not Applicability.NONE:
        names = ", ".join(f"`{n}`" for n in site.maybe_number)
        verdict = Verdict.decline(f"{names} may be a Python number here (a tensor only on some paths or for some "
                                  "arguments): the tensor ops of the mend do not take a number")
    if verdict.applicability is not Applicability.NONE and _scripted(site.func, symbols):
        verdict = Verdict.decline("the function is compiled by TorchScript (`@torch.jit.script`), which cannot "
                                  "compile the mend (graphmend's helpers take *args; torch.cond is not scriptable)")
    if site.backends and site.code not in ("GM101", "GM102", "GM103", "GM301") \
            and verdict.applicability is not Applicability.NONE:
        names = ", ".join(f"`{n}`" for n in site.backends)
        verdict = Verdict.decline(f"{names} is an array backend: its arrays may be numpy's, which the tensor ops "
                                  "of the mend do not take")
    if getattr(site, "numpy_test", False):
        # the first reason, whatever else the rule found: no tensor op of a mend takes the array
        verdict = Verdict.decline("the condition is a numpy array (Dynamo traces it as a tensor, eager mode does "
                                  "not): the tensor ops of a mend do not take it; compute it with torch instead")
    rule = CATALOGUE[site.code]
    node = site.node
    if site.code in ("GM201", "GM301", "GM501") and isinstance(node, (ast.If, ast.While, ast.Assert)):
        anchor = node.test  # underline the condition, not the whole statement
    elif site.code.startswith("GM6") and site.test is not None:
        anchor = site.test  # the break inside the loop or statement, not all of it
    else:
        anchor = node
    if getattr(site, "extracted", None) is not None and site.extracted.bindings:
        anchor = site.extracted.bindings[0][0]  # Dynamo breaks at the read (`flag = t.item()`)
    message = mod.message(site)
    if site.condition is not None:
        message += f" (breaks only when {site.condition.text})"
    span = lines.span(anchor)
    if anchor is getattr(node, "test", None) and isinstance(node, (ast.If, ast.While, ast.Assert)) \
            and anchor.lineno > node.lineno:
        # `if (` on its own line, the condition below: Dynamo names the `if` line (torchmetrics'
        # pearson.py), so the span starts at the statement
        span = Span(Pos(node.lineno, lines.col(node.lineno, node.col_offset)), span.end)
    return Finding(
        code=site.code,
        message=message,
        span=span,
        rewrite=rule.rewrite,
        applicability=verdict.applicability,
        decline_reason=verdict.reason,
        gb_id=site.gb_id or rule.gb_id,
        note=site.note,
        fix_title=verdict.title,
        condition=site.condition,
        site=site,
    )


def fix_edits(finding: Finding, text: str, symbols: Symbols, lines) -> Optional[list[TextEdit]]:
    site: Site = finding.site
    if site is None or not finding.fixable:
        return None
    mod = BY_CODE[site.code]
    ctx = Context(text, symbols, lines)

    def span_of(node, start=None, end=None) -> Span:
        if start is None and end is None:
            return lines.span(node)
        sl, sc = start
        el, ec = end
        if ec is None:
            ec = len(lines.lines[el - 1].rstrip("\r\n"))
        return Span(Pos(sl, sc), Pos(el, ec))

    return mod.fix(site, ctx, _env(site, symbols), span_of)


def rule_doc(code: str) -> Optional[str]:
    """Markdown: what the rule finds, why Dynamo breaks, the rewrite and its legality, examples."""
    rule = CATALOGUE.get(code)
    if rule is None:
        return None
    mod = BY_CODE.get(code)
    out = [f"# {code} {rule.name}", "", rule.summary, ""]
    if rule.gb_id:
        out += [f"Dynamo graph-break id: {rule.gb_id} "
                f"(https://meta-pytorch.github.io/compile-graph-break-site/gb/{rule.gb_id.lower()}.html)", ""]
    if mod is not None and mod.__doc__:
        out += [mod.__doc__.strip(), ""]
    for ex in (mod.EXAMPLES if mod else []):
        if code not in ex.codes and ex.codes:
            continue
        out += [f"## {ex.name}", "", "```python", ex.source.rstrip(), "```", ""]
        if ex.fixed is not None:
            out += ["Mended" + (" (unsafe fix)" if ex.unsafe else "") + ", the whole diff (the runtime "
                    "comes in by the one import line; see `graphmend/runtime.py`):", "", "```diff",
                    example_diff(ex.source, ex.fixed), "```", ""]
    return "\n".join(out)



def example_diff(source: str, fixed: str) -> str:
    """The unified diff of an example's mend, every line shown (no file headers)."""
    import difflib
    a, b = source.splitlines(), fixed.splitlines()
    lines = list(difflib.unified_diff(a, b, lineterm="", n=max(len(a), len(b))))
    return "\n".join(ln for ln in lines[2:] if not ln.startswith("@@"))
