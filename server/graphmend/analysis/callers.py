"""Parameters that only a caller shows to be tensors.

A helper written without annotations or docstrings gives its own walk nothing to go on:

    def linear_interp(t0, y0, t1, y1, t):
        assert t0 <= t <= t1, "order"        # breaks when t0, t, t1 are tensors

Its parameters are unknown, and unknown is never reported (precision first). What the helper
does not say, its callers do: `linear_interp(t0=prev_t, ..., t=out_t)` in a function where
`prev_t = ts[0]` of a `ts: Tensor`. Each walk records the calls it makes to functions the
analysis can walk (this file's functions and methods, other modules' functions the workspace
finds) with the arguments that are tensors there (detect.CallFact). This module walks each such
callee again with those parameters seeded as tensors (only those its own header and body leave
unknown) and keeps the sites the seeded walk finds that the plain walk did not; the seeded
walk's own calls are followed the same way, up to MAX_DEPTH calls from the first caller.

Such a finding counts only where its first caller is in scope (reached from a compiled entry):
`engine.findings_in_scope` and `analyze_many` filter on `Seeded.caller`, and put the findings of
another file's function into that file's results when it is checked too. They are reported
without a fix: the mend would change the helper for every caller, including those that pass
numbers; an annotation (`t0: torch.Tensor`) makes the plain walk find the site, with its mend.
"""

from __future__ import annotations

import ast
import os
import weakref
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Optional

from graphmend.analysis.astwalk import walk as fast_walk
from graphmend.analysis.definitions import note_passes_nothing, passes_nothing
from graphmend.analysis.detect import CallFact, FunctionWalker, is_disabled, is_static
from graphmend.analysis.workspace import class_of
from graphmend.analysis.symbols import ClassInfo, FunctionInfo, Symbols, tracking
from graphmend.findings import Applicability, Finding

if TYPE_CHECKING:
    from graphmend.analysis.engine import LineIndex

MAX_DEPTH = 5  # calls from the first caller: nflows reaches its spline through four
MAX_WALKS = 200  # seeded walks per file: a bound on the cost, never reached on transformers


@dataclass
class Seeded:
    """A finding in `path` that needs what the function `caller` of the summarized file passes."""

    caller: str  # qualname, in the summarized file, of the call chain's first function
    path: str  # the file the finding lies in
    finding: Finding


class _Source:
    """A module whose functions are walked: its Symbols, text and path; its line index is built
    only when one of its sites becomes a finding (most seeded walks find nothing)."""

    def __init__(self, symbols: Symbols, text: str, path: str, lines: Optional["LineIndex"] = None):
        self.symbols, self.text, self.path, self._lines = symbols, text, path, lines

    @property
    def lines(self) -> "LineIndex":
        if self._lines is None:
            from graphmend.analysis.engine import LineIndex
            self._lines = LineIndex(self.text)
        return self._lines


def _function(sym: Symbols, qualname: str, depth: int = 0) -> Optional[tuple[Symbols, FunctionInfo]]:
    """A module-level function or a method of a module-level class, by qualname."""
    if "." not in qualname:
        fi = sym.functions.get(qualname)
        if fi is not None:
            return sym, fi
        target = sym.imports.get(qualname)  # a re-export: `from .impl import f`
        ws = sym.workspace
        if target and "." in target and ws is not None and depth < 3:
            mod, name = target.rsplit(".", 1)
            found = ws.module_source(mod)
            if found is not None:
                return _function(found[0], name, depth + 1)
        return None
    cls, _, meth = qualname.partition(".")
    ci = sym.classes.get(cls)
    fi = ci.methods.get(meth) if ci is not None else None
    return (sym, fi) if fi is not None and fi.qualname == qualname else None


def _params(fi: FunctionInfo, fact: CallFact) -> dict[str, tuple[ast.expr, bool, bool]]:
    """The callee's parameters the call's tensor arguments bind: (the argument, whether it is a
    boolean mask, whether it is a dict of tensors)."""
    a = fi.node.args
    positional = [*a.posonlyargs, *a.args]
    by_keyword = {x.arg for x in [*a.args, *a.kwonlyargs]}
    positional = positional[fact.skip:]
    out: dict[str, tuple[ast.expr, bool, bool]] = {}
    for pos, kw, node in fact.tensors:
        name = positional[pos].arg if pos is not None and pos < len(positional) else \
            kw if pos is None and kw in by_keyword else None
        if name is not None:
            out[name] = node, (pos, kw) in fact.masks, (pos, kw) in fact.maps
    return out


def _short(e: ast.expr, limit: int = 40) -> str:
    text = ast.unparse(e)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _site_keys(sites) -> set[tuple[str, int]]:
    return {(s.code, id(s.node)) for s in sites}


def _walk(sym: Symbols, fi: FunctionInfo, seeds: Optional[dict[str, tuple]] = None) -> Optional[FunctionWalker]:
    """The walk of `fi` (None: too deep to walk); with `seeds`, only when one of them is a
    parameter the function itself leaves unknown (most are annotated or documented tensors)."""
    try:
        walker = FunctionWalker(sym, fi, seeds)
        if seeds is None or walker.env.seeded:
            walker.run()
    except RecursionError:
        return None
    return walker


# Symbols of a base class's module -> class name -> method name -> the methods of that class that
# call `self.<name>(...)`, and qualname -> the plain walk's CallFacts and the files that walk read:
# what inherited_facts reads, kept while the module's Symbols are (Workspace.module_source gives new ones when it changes)
_BASES: "weakref.WeakKeyDictionary[Symbols, tuple[dict, dict]]" = weakref.WeakKeyDictionary()


def _ancestors(sym: Symbols, ci: ClassInfo):
    """(module, class name) of the bases of `ci` in other modules, transitively (bases in `sym`
    are climbed, not yielded: their calls are this file's own facts)."""
    seen: set[str] = set()
    todo = [(b, 0) for b in ci.bases]
    while todo:
        dotted, d = todo.pop()
        if not dotted or dotted.startswith(("torch.", "builtins.", "typing.")) or dotted in seen or d > 6:
            continue  # torch's own classes: what they pass their subclasses is not the user's code
        seen.add(dotted)
        found = class_of(dotted, sym, sym.workspace)
        if found is None:
            continue
        if found[0] is not sym:
            yield found[0].module, found[1].name
        todo.extend((b, d + 1) for b in found[1].bases)


def _base_self_calls(module: str, cls: str, name: str, ws) -> list[tuple[FunctionInfo, CallFact]]:
    """The calls `self.<name>(...)` passing tensors in the methods of `module.cls`, from the plain
    walks of those methods. That there are none is kept in the definitions index (with the files
    the walks read): the next session need not parse the base's module to know it."""
    defs = ws.symbols(module)  # its definitions (from the index, where they are kept)
    if name not in ws.self_call_names(module):  # most bases never call it: no need to parse them
        return []
    key = f"{cls}.{name}"
    if defs is not None and passes_nothing(defs, key):
        return []
    found = ws.module_source(module)
    if found is None:
        return []
    bsym = found[0]
    ci = bsym.classes.get(cls)
    if ci is None:
        return []
    if bsym not in _BASES:
        _BASES[bsym] = ({}, {})
    callers_of, walked = _BASES[bsym]
    if cls not in callers_of:
        index: dict[str, list[FunctionInfo]] = {}
        for m in ci.methods.values():
            for c in m.calls:
                f = c.func
                if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("self", "cls") \
                        and (c.args or c.keywords):
                    lst = index.setdefault(f.attr, [])
                    if not lst or lst[-1] is not m:
                        lst.append(m)
        callers_of[cls] = index
    out, read = [], {found[2]}
    for m in callers_of[cls].get(name, ()):
        if m.qualname not in walked:
            with ws.reading() as mine:  # the files this walk reads
                w = _walk(bsym, m)
            walked[m.qualname] = (list(w.calls_out.values()) if w is not None else [], frozenset(mine))
        facts, files = walked[m.qualname]
        read |= files
        out += [(m, f) for f in facts if f.module == module and f.qualname == f"{cls}.{name}"]
    if not out and defs is not None:
        note_passes_nothing(defs, key, read)
    return out


def inherited_facts(sym: Symbols) -> list[tuple[str, str, str, CallFact]]:
    """What base classes in other modules pass to the methods this file's classes override:
    pytorch-metric-learning's `GenericPairLoss.mat_based_loss` calls `self._compute_loss(mat,
    pos_mask, neg_mask)` with masks made by `torch.zeros_like`, and `CircleLoss._compute_loss`, in
    another file, leaves them unknown. (override qualname, the base method's qualname, its module,
    the call retargeted at the override); the override is the finding's first caller, so it counts
    where the override is reached (through `reach`'s virtual edges)."""
    ws = sym.workspace
    if ws is None:
        return []
    out = []
    for ci in sym.classes.values():
        if not ci.bases:
            continue
        wanted = []  # (name, method, the parameters a call does not give: the instance or none)
        for name, fi in ci.methods.items():
            a, skip = fi.node.args, 0 if is_static(fi.node) else 1
            if name != "__init__" and any(p.annotation is None for p in [*a.posonlyargs, *a.args][skip:] + a.kwonlyargs):
                wanted.append((name, fi, skip))
        if not wanted:
            continue
        for module, cls in _ancestors(sym, ci):
            for name, fi, skip in wanted:
                for m, fact in _base_self_calls(module, cls, name, ws):
                    out.append((fi.qualname, m.qualname, module,
                                replace(fact, module=sym.module, qualname=fi.qualname, skip=skip)))
    return out


@dataclass
class Memo:
    """One seeded walk, for the next version of an edited file (analysis/incremental.py): valid
    while nothing it read changed (`reads`, as `symbols.tracking` records them, for a function of
    the file itself; the same module Symbols, `owner`, for another module's)."""

    owner: Optional[Symbols]  # another module's Symbols; None: the file's own
    reads: frozenset
    made: list  # (path, Finding)
    calls: list  # the walk's own CallFacts


def still_valid(memo: dict, dirty: set[str]) -> dict:
    """The entries of `memo` that an edit replacing the functions `dirty` leaves valid."""
    return {k: m for k, m in memo.items()
            if m.owner is not None or ("*" not in m.reads and m.reads.isdisjoint(dirty))}


def seeded_findings(sym: Symbols, text: str, path: str, lines: "LineIndex",
                    facts: dict[str, list[CallFact]], base: dict[str, list[Finding]],
                    walked: Optional[set[str]], memo: Optional[dict] = None,
                    inherited: Optional[list[tuple[str, str, str, CallFact]]] = None) -> list[Seeded]:
    """The findings that the callers' tensor arguments reveal. `facts`: the calls of each walked
    function of the file; `base`: the findings of the walked functions (`walked`; None: all);
    `memo`: seeded walks of the version before that are still valid (`still_valid`), updated
    with this version's; `inherited`: what other modules' base classes pass to this file's
    overrides (`inherited_facts`)."""
    from graphmend.rules import judge

    if not facts and not inherited:
        return []
    ws = sym.workspace
    here = _Source(sym, text, path, lines)
    sources: dict[str, Optional[_Source]] = {sym.module: here}

    def source(module: str) -> Optional[_Source]:
        if module not in sources:
            found = ws.module_source(module) if ws is not None else None
            sources[module] = None if found is None else _Source(*found)
        return sources[module]

    plain: dict[int, set[tuple[str, int]]] = {}  # id(FunctionInfo) -> its sites without seeds

    def plain_sites(src: _Source, fi: FunctionInfo) -> set[tuple[str, int]]:
        if id(fi) not in plain:
            own = base.get(fi.qualname) if src is here else None
            if own is not None or (src is here and (walked is None or fi.qualname in walked)):
                plain[id(fi)] = _site_keys(f.site for f in own or () if f.site is not None)
            else:
                w = _walk(src.symbols, fi)
                plain[id(fi)] = _site_keys(w.sites) if w is not None else set()
        return plain[id(fi)]

    out: list[Seeded] = []
    done: dict[tuple, list[tuple[str, Finding]]] = {}  # (module, qualname, seeds) -> (path, finding)
    work = [(caller, caller, here, fact, 0) for caller, fs in facts.items() for fact in fs]
    for origin, via, module, fact in inherited or ():
        via_src = source(module)
        if via_src is not None:
            work.append((origin, via, via_src, fact, 0))
    walks = 0

    def step(origin: str, via: str, via_src: _Source, fact: CallFact, depth: int) -> Optional[bool]:
        """Follow one call; True when it reveals nothing and calls nothing further (an answer of
        the callee's module text alone), None when that is not known (a walk left undone)."""
        nonlocal walks
        src = source(fact.module)
        if src is None:
            return None
        found = _function(src.symbols, fact.qualname)
        if found is None:
            return True
        tsym, tfi = found
        if tsym is not src.symbols:  # a re-export: the function lives in another module
            src = source(tsym.module)
            if src is None or src.symbols is not tsym:
                return None
        if tfi.node.decorator_list and (is_disabled(tfi.node, tsym) or any(
                isinstance(d, ast.Name) and d.id == "property" for d in tfi.node.decorator_list)):
            return True  # Dynamo does not trace a torch.compiler.disable()d function
        bound = _params(tfi, fact)
        if not bound:
            return True
        where = f"line {fact.node.lineno}" if via_src is src else \
            f"{os.path.basename(via_src.path)}:{fact.node.lineno}"
        seeds = {p: (via.rsplit(".", 1)[-1], where, _short(e), mask, box) for p, (e, mask, box) in bound.items()}
        key = (src.symbols.module, tfi.qualname, frozenset(seeds.items()))
        if key in done:
            out.extend(Seeded(origin, p, f) for p, f in done[key])
            return None
        kept = memo.get(key) if memo is not None else None
        if kept is not None and kept.owner is (None if src is here else src.symbols):
            made, calls = [(p, replace(f)) for p, f in kept.made], kept.calls
        else:
            if walks >= MAX_WALKS:
                return None
            walks += 1
            seen: set = set()
            with tracking(seen):
                made, calls = _seeded_walk(src, tfi, seeds, plain_sites, judge)
            if memo is not None:
                memo[key] = Memo(None if src is here else src.symbols, frozenset(seen), made, calls)
        done[key] = made
        out.extend(Seeded(origin, p, f) for p, f in made)
        if depth + 1 < MAX_DEPTH:
            work.extend((origin, tfi.qualname, src, nf, depth + 1) for nf in calls)
        return not made and not calls

    while work:
        origin, via, via_src, fact, depth = work.pop()
        if fact.virtual and ws is not None:  # what a subclass overrides runs instead, for its instances
            cls, _, meth = fact.qualname.rpartition(".")
            for module, sub in ws.subclasses(f"{fact.module}.{cls}"):
                work.append((origin, via, via_src, replace(fact, module=module, qualname=f"{sub}.{meth}",
                                                           virtual=False), depth))
        if ws is None or fact.module == sym.module:
            step(origin, via, via_src, fact, depth)
            continue
        # a function of another module: that its seeded walk finds nothing is kept in the
        # definitions index (with the files it read), so the next session does not parse it
        defs = ws.symbols(fact.module)
        nothing = f"seeded:{fact.qualname}:{fact.skip}:{[(pos, kw) for pos, kw, _ in fact.tensors]}"
        if defs is not None and passes_nothing(defs, nothing):
            continue
        with ws.reading() as read:
            empty = step(origin, via, via_src, fact, depth)
        own = ws.module_file(fact.module)
        if empty and defs is not None and own:
            note_passes_nothing(defs, nothing, read | {own})
    return out


def _seeded_walk(src: _Source, fi: FunctionInfo, seeds: dict, plain_sites, judge) -> tuple[list, list]:
    """(path, finding) of the sites the walk of `fi` with `seeds` finds that its plain walk does
    not, and the walk's own calls that pass tensors."""
    walker = _walk(src.symbols, fi, seeds)
    if walker is None or not walker.env.seeded:
        return [], []
    known = plain_sites(src, fi)
    made: list[tuple[str, Finding]] = []
    for site in walker.sites:
        if (site.code, id(site.node)) in known:
            continue
        try:
            f = judge(site, src.symbols, src.lines, src.text)
        except RecursionError:
            continue
        made.append((src.path, _decorate(f, fi, site, walker.env.seeded)))
    return made, list(walker.calls_out.values())


def _decorate(f: Finding, fi: FunctionInfo, site, seeded: dict[str, tuple[str, str, str, bool]]) -> Finding:
    """The finding of a seeded walk: which parameters the break needs to be tensors and which
    caller passes them; no fix (see the module docstring)."""
    read = {n.id for n in fast_walk(site.test if site.test is not None else site.node) if isinstance(n, ast.Name)}
    names = [p for p in seeded if p in read] or list(seeded)
    one = len(names) == 1
    listed = ", ".join(f"`{n}`" for n in names)
    callers = sorted({(seeded[n][0], seeded[n][1]) for n in names})
    if one:
        caller, where, arg = seeded[names[0]][:3]
        how = f"`{caller}()` passes `{arg}` ({where})"
    else:
        how = "; ".join(f"`{c}()` passes tensors for them ({w})" for c, w in callers)
    masks = [n for n in names if seeded[n][3]]
    maps = [n for n in names if seeded[n][4]]
    if len(maps) == len(names):
        verb = "holds tensors only" if one else "hold tensors only"
    elif len(masks) == len(names):
        verb = "is a boolean mask" if one else "are boolean masks"
    else:
        verb = ("is a tensor" if one else "are tensors") + (
            f" ({', '.join(f'`{n}`' for n in masks)} a boolean mask)" if masks else "")
    note = f"{listed} {verb} here: {how}"
    annotate = ", ".join(f"`{n}: torch.Tensor`" for n in names)
    if f.applicability is Applicability.NONE and f.decline_reason:
        # the rule has no mend for the site, whoever calls: its reason, then who shows the break
        reason = f"{f.decline_reason}; only a caller shows that {listed} {verb} ({how})"
    elif masks or maps:  # an annotation would not show the mask (nor that every value is a tensor)
        reason = (f"only a caller shows that {listed} {verb} ({how}); a mend here would change "
                  f"`{fi.qualname}()` for every caller")
    else:
        reason = (f"only a caller shows that {listed} {verb} ({how}); a mend here would change "
                  f"`{fi.qualname}()` for every caller, those that pass Python numbers too. Annotate "
                  f"{annotate} to have the mend offered")
    return replace(f, note=f"{f.note}; {note}" if f.note else note, applicability=Applicability.NONE,
                   decline_reason=reason, fix_title=None)


def place(seeded: list[Seeded], reached: dict[str, str]) -> list[tuple[str, str, Finding]]:
    """(path, entry label, finding) of the seeded findings whose first caller is reached."""
    out = []
    for s in seeded:
        label = reached.get(s.caller)
        if label is not None:
            out.append((s.path, label, s.finding))
    return out
