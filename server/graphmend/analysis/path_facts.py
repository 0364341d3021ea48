"""What the walk knows about a name on the current path, beyond its kind, to name the condition a
break needs (detect.py's FunctionWalker keeps one `PathFacts`, forks it at each `if` and merges
the two sides after it):

* `tensor_under`: a name that is a tensor on one side of an earlier `if` only (`on_step_t =
  False; if len(self.step_t): on_step_t = t0 < t`), with the static tests that side needed; a
  later `if on_step_t:` breaks only when they hold. Absent: a tensor on every path.
* `empty`: names bound to an empty tensor (`torch.tensor([])`) on this path, and
  `nonempty_under`: names that are empty on some paths and hold data only under these tests.
  `nonzero`/`unique`/... of an empty tensor has a static shape, so Dynamo traces them there
  (measured, torch 2.13).

A name the walk rebinds loses its facts (`forget`); the merge keeps, for a name with a property on
both sides, only the tests both sides needed (dropping a conjunct leaves a weaker condition that
still has to hold: "breaks only when" stays true).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

from graphmend.analysis.dataflow import Kind

Tests = list[tuple[ast.expr, bool]]  # (test, the truth it has on the path)


@dataclass
class PathFacts:
    tensor_under: dict[str, Tests] = field(default_factory=dict)
    empty: set[str] = field(default_factory=set)
    nonempty_under: dict[str, Tests] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.tensor_under or self.empty or self.nonempty_under)

    def copy(self) -> "PathFacts":
        return PathFacts(dict(self.tensor_under), set(self.empty), dict(self.nonempty_under))

    def forget(self, names: set[str]) -> None:
        for n in names:
            self.tensor_under.pop(n, None)
            self.nonempty_under.pop(n, None)
            self.empty.discard(n)

    def merged(self, test: Optional[ast.expr], kinds_body: dict, body: "PathFacts", kinds_else: dict) -> "PathFacts":
        """The facts after `if test:` (`test` None when it is not static), `self` being the else
        side's and `body` the body's; the kinds are each side's."""
        tensor = Kind.TENSOR
        # only names whose kind differs between the sides or that carry a fact can change
        names = {n for n, _ in kinds_body.items() ^ kinds_else.items()}
        names.update(body.tensor_under, self.tensor_under, body.nonempty_under, self.nonempty_under,
                     body.empty, self.empty)
        tensor_under = _merge_under(test, {n for n in names if kinds_body.get(n) is tensor}, body.tensor_under,
                                    {n for n in names if kinds_else.get(n) is tensor}, self.tensor_under)
        full_body = {n for n in names if kinds_body.get(n) is tensor and n not in body.empty}
        full_else = {n for n in names if kinds_else.get(n) is tensor and n not in self.empty}
        maybe_empty = body.empty | self.empty | body.nonempty_under.keys() | self.nonempty_under.keys()
        nonempty_under = {n: c for n, c in _merge_under(test, full_body, body.nonempty_under, full_else,
                                                        self.nonempty_under).items() if n in maybe_empty}
        return PathFacts(tensor_under, self.empty & body.empty, nonempty_under)

    def tensor_condition(self, test: ast.expr) -> Optional[Tests]:
        """The tests a branch on `test` (a name, or `not` of one) needs to break, if it is a name
        that is a tensor on some paths only."""
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test = test.operand
        return self.tensor_under.get(test.id) if isinstance(test, ast.Name) else None

    def nonempty_condition(self, e: ast.expr, qualify) -> Optional[ast.expr]:
        """When `e` is a tensor that is empty on some paths (`step_t = torch.tensor([])` if no grid
        was given), the static test under which it may hold data, as one expression; else None.
        `torch.cat([a, b])` holds data when any part does."""
        if isinstance(e, ast.Name) and e.id in self.nonempty_under:
            return _conjunction(self.nonempty_under[e.id])
        if isinstance(e, ast.Call) and (qualify(e.func) or "") == "torch.cat" and e.args \
                and isinstance(e.args[0], (ast.List, ast.Tuple)) and e.args[0].elts:
            parts = []
            for x in e.args[0].elts:
                if isinstance(x, ast.Name) and x.id in self.empty:
                    continue
                c = self.nonempty_condition(x, qualify)
                if c is None:
                    return None
                parts.append(c)
            if parts:
                return parts[0] if len(parts) == 1 else ast.BoolOp(ast.Or(), parts)
        return None


def _merge_under(test: Optional[ast.expr], body: set[str], under_body: dict, orelse: set[str],
                 under_else: dict) -> dict[str, Tests]:
    """A name with the property (a tensor; a tensor that may hold data) on one side only has it
    under that side's test (when the test is static, so a user can read it) and what held on that
    side; one with it on both sides keeps only what both sides needed."""
    out: dict[str, Tests] = {}
    for n in body | orelse:
        tb, te = n in body, n in orelse
        if tb and te:
            cb, ce = under_body.get(n), under_else.get(n)
            if cb and ce:
                common = [c for c in cb if any(c[0] is d[0] and c[1] == d[1] for d in ce)]
                if common:
                    out[n] = common
        else:
            need = ([(test, tb)] if test is not None else []) + (under_body if tb else under_else).get(n, [])
            if need:
                out[n] = need
    return out


def _conjunction(conds: Tests) -> ast.expr:
    """(test, truth) pairs as one expression, `X is None` negated as `X is not None`."""
    parts = []
    for e, pol in conds:
        if not pol and isinstance(e, ast.Compare) and len(e.ops) == 1 and isinstance(e.ops[0], (ast.Is, ast.IsNot)):
            e = ast.Compare(e.left, [ast.IsNot() if isinstance(e.ops[0], ast.Is) else ast.Is()], e.comparators)
        elif not pol:
            e = ast.UnaryOp(ast.Not(), e)
        parts.append(e)
    return parts[0] if len(parts) == 1 else ast.BoolOp(ast.And(), parts)
