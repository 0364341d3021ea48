"""The examples each rule module carries are its specification: flagged codes, the mended
text (or a declined fix), idempotence, and that `check` after `fix` no longer reports it."""

from __future__ import annotations

import ast

import pytest

from graphmend.analysis import analyze_source
from graphmend.findings import Applicability
from graphmend.config import DEFAULT_LINE_LENGTH
from graphmend.rewrite import fix_source
from graphmend.rules import MODULES

CASES = [(m.__name__.rsplit(".", 1)[1], ex) for m in MODULES for ex in m.EXAMPLES]


@pytest.mark.parametrize("rule,ex", CASES, ids=[f"{r}:{e.name}" for r, e in CASES])
def test_example(rule, ex):
    found = analyze_source(ex.source).findings
    assert sorted(f.code for f in found) == sorted(ex.codes), [(f.code, f.message) for f in found]
    result = fix_source(ex.source, unsafe=ex.unsafe)
    if ex.fixed is None:
        assert result.text == ex.source, "a declined or report-only site must not be rewritten"
        assert all(f.applicability is Applicability.NONE for f in found)
        for f in found:
            assert f.decline_reason, "a declined fix says why"
        return
    assert result.text == ex.fixed
    ast.parse(result.text)
    # the diff is the mended lines plus one import: no pasted block, no line over the length
    new_lines = [ln for ln in result.text.splitlines() if ln not in ex.source.splitlines()]
    uses = "graphmend." in result.text
    assert sum("_graphmend_runtime" in ln for ln in new_lines) == uses, new_lines
    assert all(len(ln) <= DEFAULT_LINE_LENGTH for ln in new_lines), new_lines
    assert "_gm_" not in result.text
    if ex.unsafe:
        assert fix_source(ex.source).text == ex.source, "unsafe fixes need --unsafe-fixes"
    # idempotent, and the mended sites are gone
    again = fix_source(result.text, unsafe=True)
    assert again.text == result.text
    left = {f.code for f in analyze_source(result.text).findings}
    assert not (left & set(ex.codes)), left
