"""An item a call returns as a tensor on some paths and as a Python number on others: xitorch's
Armijo line search returns `alpha0` (an int) when the full step passes and a tensor step
otherwise, and its caller tests `if s == tmp_s[0]:` (GB0170, realcode round 29). That breaks
only when `s` is a tensor, and GraphMend says so; no mend takes a number where its tensor ops
need a tensor, so the fix declines with that reason. Such a name stays "a tensor or a number"
across an `if` that rebinds it to a number on one side (`if s is None: s = 1.0`), but not across
one that makes it a tensor (botorch's `if type(eta) is not Tensor: eta = torch.full(...)`); in
the body of `if isinstance(x, Tensor) [and ...]:` it is a tensor, and the break there has no
condition. Checked statically and run under Dynamo (its graph-break log) on both kinds of value."""

from __future__ import annotations

import pytest
import torch

from difftest import load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from graphmend.findings import severity
from test_callers import logged_break_lines

SOURCE = '''\
from typing import Union

import torch


def search(phi0, derphi0, alpha0=1):
    if phi0 <= 1.0:
        return alpha0, phi0
    alpha1 = torch.sqrt(torch.abs(derphi0)) / 2.0
    return alpha1, phi0 * alpha1


def line_search(x, y):
    tmp_s = [0]
    s, phi1 = search(y.norm(), -y.norm())
    if s is None:
        s = 1.0
    x = x + s
    if s == tmp_s[0]:  # breaks when s is a tensor
        x = x * 2
    return x


def made_tensor(x, eta: Union[float, torch.Tensor]):
    if type(eta) is not torch.Tensor:
        eta = torch.full((1,), eta)
    if (eta > 0).all():  # breaks always
        x = x + 1
    return x


def narrowed(x, other: Union[int, torch.Tensor]):
    if isinstance(other, torch.Tensor) and other.numel() <= 1:
        n = int(other)  # breaks always (in this body)
        x = x + n
    if other == 3:  # breaks when other is a tensor
        x = x * 3
    return x
'''


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "mixed_returns.py", Settings(scope="module")).findings


def _line(text: str) -> int:
    return next(i for i, line in enumerate(SOURCE.splitlines(), 1) if text in line)


def _at(findings, text: str):
    return [f for f in findings if f.span.start.line == _line(text)]


def test_tensor_on_some_paths_is_named(findings):
    (f,) = _at(findings, "if s == tmp_s[0]")
    assert f.code == "GM201"
    assert f.message.endswith("(breaks only when `s` is a tensor)")
    assert severity(f) == "information"
    assert f.applicability.value == "none"
    assert "`s` may be a Python number here" in f.decline_reason


def test_made_a_tensor_has_no_condition(findings):
    (f,) = _at(findings, "if (eta > 0).all()")
    assert "breaks only" not in f.message


def test_proven_tensor_in_body_has_no_condition_after_it_has(findings):
    (inside,) = _at(findings, "n = int(other)")
    assert "breaks only" not in inside.message
    (after,) = _at(findings, "if other == 3")
    assert after.message.endswith("(breaks only when `other` is a tensor)")


@pytest.mark.parametrize("y, breaks", [(torch.full((3,), 0.1), False), (torch.full((3,), 2.0), True)])
def test_line_search_breaks_only_on_the_tensor_path(y, breaks, tmp_path, findings):
    mod = load_module(SOURCE, tmp_path, "mixed_search_" + str(breaks).lower())
    broke = logged_break_lines(mod.line_search, torch.ones(3), y, path=mod.__file__)
    site = _line("if s == tmp_s[0]")
    assert (site in broke) is breaks, broke
    assert _line("if phi0 <= 1.0") in broke  # the search's own test, reported unconditionally
    assert [f.span.start.line for f in findings if f.span.start.line == _line("if phi0 <= 1.0")]
    # the number path returns eagerly what the compiled function returns
    torch._dynamo.reset()
    assert torch.equal(torch.compile(mod.line_search, backend="eager")(torch.ones(3), y), mod.line_search(torch.ones(3), y))


@pytest.mark.parametrize("other, breaks", [(3, set()), (torch.tensor(3), {"n = int(other)", "if other == 3"})])
def test_narrowed_breaks_as_named(other, breaks, tmp_path):
    mod = load_module(SOURCE, tmp_path, "mixed_narrowed_" + ("t" if breaks else "n"))
    broke = logged_break_lines(mod.narrowed, torch.ones(3), other, path=mod.__file__)
    lines = {_line("n = int(other)"), _line("if other == 3")}
    assert broke & lines == {_line(t) for t in breaks}
