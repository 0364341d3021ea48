"""Re-analyse an edit of an open document from the analysis of the version before it.

An edit that stays inside one function (a module-level function or a method of a module-level
class), leaves its header (decorators, name, parameters, annotations) as it was and keeps the
number of lines re-parses only that function's lines, splices
the new definition into a copy of the previous tree (sharing every other node), and re-walks
only what the edit can reach: the edited function and the functions nested in it, every method
of its class when the class' attributes (`self.x = ...`, buffers) changed, and every function
whose last walk read any of these: each walk records what it reads of the rest of the file
(`symbols.tracking`: the bodies it follows into, the expert forwards [Route] checks, a class'
attributes, the whole tree), so a caller that only sees a callee's header is not walked again,
and a function that looked into the edited body is, whether or not it calls it. The findings
of every other function are reused.
Scope (which functions are traced) is recomputed from the call edges, those of unchanged
functions reused.

Anything else falls back to the full analysis (`None` from `update`): an edit that changes the
line count, changes a header, touches a class body or module-level code, changes the
imports a function body makes, does not parse on its own, or other settings or workspace.
tests/test_incremental.py compares this with the full analysis at every step of recorded editing
sessions over transformers' files.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field, replace
from typing import Optional

from graphmend.analysis.attr_types import param_stores, same_stores
from graphmend.analysis.callers import inherited_facts, seeded_findings, still_valid
from graphmend.analysis.engine import FileSummary, LineIndex, _no_gc, function_findings, suppressions
from graphmend.analysis.scope import FileScope, file_scope, reach
from graphmend.analysis.symbols import (ClassInfo, FunctionInfo, Symbols, note_self_assign, registered_name,
                                       stored_self_attrs)
from graphmend.analysis.workspace import Workspace
from graphmend.config import Settings
from graphmend.findings import Finding
from graphmend.textlines import split_lines

FUNC_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass
class State:
    """What the next edit reuses: one parsed version's text, symbols, own scope (before
    external entries), and the findings of the functions walked (the reached ones)."""

    text: str
    lines: LineIndex
    symbols: Symbols
    scope: FileScope
    by_function: dict[str, list[Finding]]
    walked: set[str]
    settings: Settings
    workspace: Workspace
    reads: dict[str, frozenset] = field(default_factory=dict)  # per walked function (FileSummary.reads)
    generation: int = 0  # the workspace's search-path generation it was made in
    facts: dict[str, list] = field(default_factory=dict)  # per walked function (FileSummary.facts)
    seeded_memo: dict = field(default_factory=dict)  # FileSummary.seeded_memo


def state_of(summary: FileSummary, text: str, settings: Settings, workspace: Workspace) -> Optional[State]:
    """The reusable part of a full analysis (None when it did not parse)."""
    if summary.syntax_error is not None or summary.symbols is None or summary.scope is None \
            or summary.lines is None or summary.walked is None:
        return None
    return State(text, summary.lines, summary.symbols, summary.scope, summary.by_function,
                 summary.walked, settings, workspace, summary.reads, workspace.generation, summary.facts,
                 summary.seeded_memo)


@dataclass
class Update:
    summary: FileSummary  # as `summarize` gives it (by_function: the reached functions)
    reached: dict[str, str]
    state: State
    rewalked: set[str]  # the functions walked again (for tests and the benchmark)


def update(prev: State, text: str, path: str, settings: Settings, workspace: Workspace,
           external: dict[str, str]) -> Optional[Update]:
    """The analysis of `text` from `prev`, or None when only a full analysis will do."""
    if settings != prev.settings or workspace is not prev.workspace or text.startswith("\ufeff") \
            or prev.generation != workspace.generation:
        return None
    with _no_gc():
        try:
            return _update(prev, text, path, settings, workspace, external)
        except RecursionError:
            return None


def _changed_lines(old: list[str], new: list[str]) -> Optional[tuple[int, int]]:
    """(first, last) 1-based changed line of two texts of the same line count; None: equal."""
    n = len(old)
    lo = 0
    while lo < n and old[lo] == new[lo]:
        lo += 1
    if lo == n:
        return None
    hi = n - 1
    while hi > lo and old[hi] == new[hi]:
        hi -= 1
    return lo + 1, hi + 1


def _unit(tree: ast.Module, first: int, last: int):
    """The module-level function or method of a module-level class whose body holds the lines
    first..last: (node, class node or None); None when there is none."""
    for stmt in tree.body:
        if stmt.end_lineno < first:
            continue
        if stmt.lineno > last:
            return None
        if isinstance(stmt, FUNC_TYPES):
            return (stmt, None) if _in_body(stmt, first, last) else None
        if isinstance(stmt, ast.ClassDef):
            for m in stmt.body:
                if m.end_lineno < first:
                    continue
                if isinstance(m, FUNC_TYPES) and _in_body(m, first, last):
                    return m, stmt
                return None
        return None
    return None


def _in_body(fn, first: int, last: int) -> bool:
    """Within the definition's lines (its decorators included): the re-parse then checks that
    its header is the same (an edit of a comment or blank line in the header is fine)."""
    return min([d.lineno for d in fn.decorator_list] + [fn.lineno]) <= first and last <= fn.end_lineno


def _header(fn) -> str:
    return ast.dump(ast.Module([*fn.decorator_list, fn.args, *([fn.returns] if fn.returns else [])], []),
                    include_attributes=True) + repr(fn.type_comment) + ast.dump(
                        ast.Module(list(getattr(fn, "type_params", None) or []), []), include_attributes=True)


def _reparse(fn, lines: list[str]):
    """The definition `fn` re-parsed from its lines in `lines` (the same line range), or None."""
    start = min([d.lineno for d in fn.decorator_list] + [fn.lineno])
    lead = lines[start - 1][:fn.col_offset]
    if lead.strip() or len(lead.encode()) != fn.col_offset:
        return None  # something before the definition on its first line
    src = "".join(lines[start - 1:fn.end_lineno])
    wrap = fn.col_offset > 0
    try:
        mod = ast.parse("if 1:\n" + src if wrap else src)
    except (SyntaxError, ValueError):
        return None
    body = mod.body
    if wrap:
        if len(body) != 1 or not isinstance(body[0], ast.If):
            return None
        body = body[0].body
    if len(body) != 1 or type(body[0]) is not type(fn) or body[0].name != fn.name:
        return None
    new = body[0]
    ast.increment_lineno(new, start - 1 - (1 if wrap else 0))
    if new.lineno != fn.lineno or new.col_offset != fn.col_offset or new.end_lineno != fn.end_lineno \
            or _header(new) != _header(fn):
        return None
    # The header is the same, down to its positions: keep its nodes (the module-level calls of
    # the symbols, decorators among them, refer to them).
    new.decorator_list, new.args, new.returns = fn.decorator_list, fn.args, fn.returns
    return new


# What the analysis caches in a Symbols' __dict__ per file version, from the bodies: an
# incremental edit copies the Symbols, so each is dropped there (kept, an edit of `__init__` or of
# a helper method kept the old answers, and the squiggles they made, until a full check).
VERSION_CACHES = (
    "_field_kinds",  # what named tuples' fields hold (records.py)
    "return_elements_cache",  # dataflow.return_elements
    "property_cache", "property_names",  # what properties return (dataflow.property_returns_tensor)
    "_method_names", "_backend_factory",
    "functions_by_qualname",  # dataflow.functions_by_qualname: the new FunctionInfos
    "closure_cache",  # dataflow.closure_tensors
    "init_attrs_cache",  # dataflow.init_holds_tensor: what `__init__` leaves in attributes
    "method_stores_cache",  # dataflow.methods_hold_tensor: what each method stores in attributes
    "tensor_map_cache",  # dataflow.returns_tensor_map: functions returning a dict of tensors
    "method_returns_cache",  # dataflow.method_returns_tensor
    "returned_masks_cache",  # detect: which masks functions return
    "_own_backward", "_record_types",  # a class of the file with its own `backward`; record classes
)


def _update(prev: State, text: str, path: str, settings: Settings, ws: Workspace,
            external: dict[str, str]) -> Optional[Update]:
    new_lines = split_lines(text, keepends=True) or [""]
    old_lines = prev.lines.lines
    if len(new_lines) != len(old_lines):
        return None
    changed = _changed_lines(old_lines, new_lines)
    lines = LineIndex.__new__(LineIndex)
    lines.lines = new_lines
    if changed is None:
        return _finish(prev, text, lines, prev.symbols, prev.scope, set(), settings, ws, external, path)
    old_sym = prev.symbols
    found = _unit(old_sym.tree, *changed)
    if found is None:
        return None
    old_fn, cls_node = found
    new_fn = _reparse(old_fn, new_lines)
    if new_fn is None:
        return None

    old_ci: Optional[ClassInfo] = None
    if cls_node is not None:
        old_ci = old_sym.classes.get(cls_node.name)
        if old_ci is None or old_ci.node is not cls_node:
            return None  # a class defined twice: the second one is in `classes`
    prefix = f"{cls_node.name}." if cls_node is not None else ""

    def stand_in() -> Optional[ClassInfo]:
        return ClassInfo(cls_node, cls_node.name, []) if cls_node is not None else None

    old_part = old_sym.part(old_fn, stand_in(), prefix)
    new_part = old_sym.part(new_fn, stand_in(), prefix)
    if list(old_part.imports.items()) != list(new_part.imports.items()) \
            or old_part.star_imports != new_part.star_imports:
        return None  # a function-level import is a module-level name for the whole file
    old_fis = old_part.all_functions
    try:
        at = next(i for i, fi in enumerate(old_sym.all_functions) if fi.node is old_fn)
    except StopIteration:
        return None
    if [fi.node for fi in old_sym.all_functions[at:at + len(old_fis)]] != [fi.node for fi in old_fis]:
        return None
    own_old = old_sym.all_functions[at]

    # ---- the new tree: a copy of the path to the definition, sharing everything else
    tree = copy.copy(old_sym.tree)
    new_cls_node = None
    if cls_node is None:
        tree.body = [new_fn if s is old_fn else s for s in old_sym.tree.body]
    else:
        new_cls_node = copy.copy(cls_node)
        new_cls_node.body = [new_fn if s is old_fn else s for s in cls_node.body]
        tree.body = [new_cls_node if s is cls_node else s for s in old_sym.tree.body]

    # ---- the new symbols: a shallow copy; what the definition contributes replaced
    sym = copy.copy(old_sym)
    sym.tree = tree
    sym.returns_cache = {}  # what the file's functions return (dataflow.return_kinds): from the new bodies
    for key in VERSION_CACHES:
        sym.__dict__.pop(key, None)
    new_fis = new_part.all_functions
    all_functions = list(old_sym.all_functions)
    all_functions[at:at + len(old_fis)] = new_fis
    own_new = new_fis[0]
    moved: dict[int, FunctionInfo] = {}  # id(old FunctionInfo) -> its copy (methods of the class)
    old_ids = {id(n) for n in old_part.name_call_assigns}
    sym.name_call_assigns = sorted([n for n in old_sym.name_call_assigns if id(n) not in old_ids]
                                   + new_part.name_call_assigns, key=lambda n: (n.lineno, n.col_offset))
    new_pending = new_part._pending_classes
    for nc in new_pending:
        nc.bases = [sym.qualify(b) or "" for b in nc.node.bases]
    old_pending = {id(ci) for ci in old_part._pending_classes}
    sym._pending_classes = [ci for ci in old_sym._pending_classes if id(ci) not in old_pending] + new_pending
    class_changed = False
    if cls_node is None:
        if old_sym.functions.get(old_fn.name) is own_old:
            sym.functions = {**old_sym.functions, old_fn.name: own_new}
    else:
        ci = replace(old_ci, node=new_cls_node, methods={}, _attr_ctors={}, _buffers=set(),
                     _method_aliases=None, _param_stores=None, _declared_tensors=None)
        for i, fi in enumerate(all_functions):
            if fi.cls is old_ci:
                moved[id(fi)] = all_functions[i] = replace(fi, cls=ci)
            elif fi is own_new:
                fi.cls = ci
        for name, fi in old_ci.methods.items():
            ci.methods[name] = own_new if fi is own_old else moved.get(id(fi), fi)
        assigns = [(c, a, call) for c, a, call in old_sym._self_assigns if c is not old_ci or
                   id(call) not in {id(x[2]) for x in old_part._self_assigns}]
        assigns = [(ci, a, call) if c is old_ci else (c, a, call) for c, a, call in assigns]
        assigns += [(ci, a, call) for _, a, call in new_part._self_assigns]
        assigns.sort(key=lambda e: (e[0] is not ci, e[2].lineno, e[2].col_offset))
        sym._self_assigns = assigns
        for c, attr, call in assigns:
            if c is ci:
                note_self_assign(sym, ci, attr, call)
        for fi in all_functions:
            if fi.cls is not ci:
                continue
            for c in fi.calls:
                if (name := registered_name(c)) is not None:
                    ci.buffers.add(name)
        class_changed = ci.attr_ctors != old_ci.attr_ctors or ci.buffers != old_ci.buffers or (
            old_ci._param_stores is not None and not same_stores(param_stores(ci), old_ci._param_stores))
        sym.classes = {**old_sym.classes, cls_node.name: ci}
    sym.all_functions = all_functions

    # ---- what to walk again: the definition and what the edit can reach
    dirty = {fi.qualname for fi in old_fis} | {fi.qualname for fi in new_fis}
    if cls_node is not None:  # a method that stores an attribute now (dataflow.methods_hold_tensor;
        # a store taken away is seen through the method's own read, its qualname)
        dirty |= {f"stores:{cls_node.name}.{a}" for a in stored_self_attrs(new_fn) - stored_self_attrs(old_fn)}
    if class_changed:
        dirty |= {fi.qualname for fi in all_functions if fi.cls is sym.classes[cls_node.name]}
        dirty.add(f"class:{cls_node.name}")  # its attr_ctors/buffers, read by other classes' methods
    scope = file_scope(sym, ws, settings.scope, known_edges=lambda fi: _known_edges(prev.scope, fi.qualname, dirty))
    return _finish(prev, text, lines, sym, scope, dirty, settings, ws, external, path, moved)


def _known_edges(prev: FileScope, qualname: str, dirty: set[str]) -> Optional[tuple]:
    """The previous version's call edges of `qualname` and what they were read from, while
    neither it nor any method its edges were read from changed (None: compute them)."""
    reads = prev.edge_reads.get(qualname, frozenset())
    edges = prev.edges.get(qualname)
    if edges is None or qualname in dirty or not dirty.isdisjoint(reads):
        return None
    return edges, reads


def _finish(prev: State, text: str, lines: LineIndex, sym: Symbols, scope: FileScope, dirty: set[str],
            settings: Settings, ws: Workspace, external: dict[str, str], path: str,
            moved: Optional[dict[int, FunctionInfo]] = None) -> Update:
    """`dirty`: the qualnames of the functions the edit replaced (and "class:<name>" when a
    class' attributes changed). Walked again: those, the functions newly reached, and every
    function whose last walk read one of them (its `reads`: a body it followed into, an
    expert's forward [Route] checked, the attributes of a class) or read the whole tree."""
    mod = scope.module
    entries = {q: f"via {label}" for q, label in external.items()}
    entries.update(scope.entries)
    reached = reach([replace(scope, entries=entries)]).get(mod, {})
    readers = {q for q, r in prev.reads.items() if "*" in r or not r.isdisjoint(dirty)} if dirty else set()
    walk = {q for q in reached if q in dirty or q in readers or q not in prev.walked} - scope.disabled
    by_function: dict[str, list[Finding]] = {}
    reads: dict[str, frozenset] = {}
    facts: dict[str, list] = {}
    for q in reached:
        if q in walk or q in scope.disabled:
            continue
        if q in prev.reads:
            reads[q] = prev.reads[q]
        if q in prev.facts:
            facts[q] = prev.facts[q]
        old = prev.by_function.get(q)
        if old:
            by_function[q] = [_moved(f, moved) for f in old] if moved else [replace(f) for f in old]
    if walk:
        for fi in sym.all_functions:
            if fi.qualname in walk:
                got = function_findings(fi, sym, lines, text, reads, facts)
                if got:
                    by_function[fi.qualname] = got
    summary = FileSummary(path, scope, by_function=by_function, suppressions=suppressions(text), symbols=sym)
    summary.lines, summary.walked, summary.reads = lines, set(reached) - scope.disabled, reads
    summary.facts = facts
    # what callers pass (callers.py): the seeded walks that read nothing the edit replaced are kept
    memo = still_valid(prev.seeded_memo, dirty)
    summary.seeded = seeded_findings(sym, text, path, lines, facts, by_function, summary.walked, memo,
                                     inherited_facts(sym))
    summary.seeded_memo = memo
    state = State(text, lines, sym, scope, by_function, summary.walked, settings, ws, reads, ws.generation,
                  facts, memo)
    return Update(summary, dict(reached), state, walk)


def _moved(f: Finding, moved: dict[int, FunctionInfo]) -> Finding:
    site = f.site
    fi = getattr(site, "func", None)
    if fi is not None and id(fi) in moved:
        return replace(f, site=replace(site, func=moved[id(fi)]))
    return replace(f)
