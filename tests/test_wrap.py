"""Wrapping the lines a mend makes too long (rewrite/wrap.py): the code stays the same (ast),
lines fit where the tokens allow, and a comma is added only where it keeps the meaning."""

from __future__ import annotations

import ast

import pytest

from graphmend.rewrite.wrap import wrap_line

W = 40


@pytest.mark.parametrize("line", [
    "    x = graphmend.log(logger, 'warning', 'a long message here', x.shape)",
    "    x = (torch.where(c > 0.5, torch.zeros_like(x).neg(), y) if x.numel() > 2 else y)",  # grouping
    "    y = table[some_function(alpha, beta, gamma), other_function(delta)]",  # a subscript: no comma
    "    f(item.value for item in a_rather_long_iterable_name if item)",  # a lone generator
    "    t = (first_element_name, second_element_name, third_element_name)",  # a tuple
    "    s = graphmend.format('{:.3f} and {}', graphmend.item(loss_value), nested(a, b, c, d))",
    "    graphmend.print(f'{x!r:>{width}} and more text', x)  # a comment stays at the end",
])
def test_wrapping_keeps_the_code(line):
    out = wrap_line(line, W)
    before = ast.dump(ast.parse(line.strip()))
    after = ast.dump(ast.parse("\n".join(out).strip()))
    assert before == after, "\n".join(out)
    assert "# a comment" not in line or out[-1].endswith("# a comment stays at the end")


def test_wrapping_fits_like_black():
    out = wrap_line("        graphmend.raise_if(torch.isnan(x).any(), ValueError, 'hidden states contain NaN')", 88)
    assert out == ["        graphmend.raise_if(",
                   "            torch.isnan(x).any(), ValueError, 'hidden states contain NaN'",
                   "        )"]
    out = wrap_line("    graphmend.print(aaaaaaaaaa, bbbbbbbbbbbb, cccccccccccc, dddddddddd)", 30)
    assert out == ["    graphmend.print(", "        aaaaaaaaaa,", "        bbbbbbbbbbbb,", "        cccccccccccc,",
                   "        dddddddddd,", "    )"]
    assert wrap_line("    short(a)", 30) == ["    short(a)"]


def test_mended_lines_carry_no_trailing_whitespace():
    """A logger call whose arguments start on the next line: the logger and method go after `(`
    with no space left at the end of that line (ruff W291 would flag it in the user's diff)."""
    from graphmend.config import Settings
    from graphmend.rewrite.apply import fix_source
    src = ("import logging\nimport torch\nlogger = logging.getLogger(__name__)\n\n"
           "@torch.compile\ndef f(x):\n    logger.warning_once(\n        'a message that is long enough',\n"
           "    )\n    logger.info(  # keep this comment\n        'b'\n    )\n    return x + 1\n")
    out = fix_source(src, "<string>", Settings(runtime="import")).text
    assert "graphmend.log(logger, 'warning_once',\n" in out, out
    assert "graphmend.log(logger, 'info',   # keep this comment\n" in out, out  # the comment stays put
    assert [ln for ln in out.splitlines() if ln != ln.rstrip()] == []
    ast.parse(out)


def test_a_mended_statement_that_goes_on_over_the_next_lines_is_split_after_its_open_bracket():
    """[Trap] keeps a multi-line message as the user wrote it; the first line it writes holds the
    condition and the exception too, and only that line is split (ibert's quant_modules.py, written
    with `not`: the plain `assert cond, "constant"` Dynamo traces itself, so it is not reported)."""
    from graphmend.config import Settings
    from graphmend.rewrite.apply import fix_source
    src = ("import torch\n\n@torch.compile\ndef f(var_int, max_bit):\n    if True:\n        if True:\n"
           "            assert not var_int.max() >= 2**max_bit + 0.1, (\n"
           "                \"Error detected in overflow handling: \"\n"
           "                \"`var_int` exceeds `self.max_bit` (the maximum possible bit width)\"\n"
           "            )\n    return var_int\n")
    out = fix_source(src, "<string>", Settings(runtime="import"), unsafe=True).text
    assert "graphmend.raise_if(\n" in out, out
    assert all(len(ln) <= 88 for ln in out.splitlines()), out
    ns: dict = {}
    exec(compile(out.replace("@torch.compile\n", ""), "<m>", "exec"), ns)  # the same message, eagerly
    import torch
    with pytest.raises(AssertionError, match="^Error detected in overflow handling: `var_int` exceeds"):
        ns["f"](torch.tensor([9.0]), 3)
    assert ns["f"](torch.tensor([1.0]), 3).item() == 1.0


@pytest.mark.parametrize("line, n", [
    ("        graphmend.raise_unless(cond_expression_here, AssertionError, 'first part of the text '", 4),
    ("        f('no comma at the top level after the open bracket' + 'x' * 40 + 'y' * 30", 1),
    ("        short(a, 'b'", 1),
])
def test_split_open_line(line, n):
    from graphmend.rewrite.wrap import split_open_line
    out = split_open_line(line, 60)
    assert len(out) == n, out
    if n > 1:
        assert out[0] == "        graphmend.raise_unless(" and out[-1].strip() == "'first part of the text '"
