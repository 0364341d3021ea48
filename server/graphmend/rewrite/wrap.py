"""Wrap the lines a mend made too long, as black and ruff format would: split the outermost
brackets, then one argument per line with a trailing comma when they do not fit on one.

Only lines the mend wrote are touched (a line already in the file stays as the user wrote it).
Works on tokens (stdlib `tokenize`), so strings, f-strings and comments are never split.
"""

from __future__ import annotations

import io
import tokenize
from typing import Optional

from graphmend.findings import Pos, Span, TextEdit
from graphmend.textlines import split_lines

OPEN, CLOSE = "([{", ")]}"
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)


def _tokens(line: str) -> Optional[list[tokenize.TokenInfo]]:
    try:
        return list(tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None


_NOT_CALLEE = {"if", "else", "elif", "return", "in", "not", "and", "or", "is", "lambda", "yield", "await",
               "assert", "del", "for", "while", "with", "import", "from", "raise", "case", "match"}


def _top_brackets(line: str):
    """(open col, close col, [top-level comma cols], kind, has a top-level `for`) of the first
    top-level bracket pair of the stripped `line`, or None. kind: "call", "subscript" or
    "display" (a tuple, list, dict, set or parenthesised expression). Columns index the line."""
    toks = _tokens(line)
    if toks is None:
        return None
    depth, fdepth, start, commas, kind, gen = 0, 0, None, [], "display", False
    prev = None
    for t in toks:
        if t.start[0] != 1:
            return None  # a string over several lines: leave it
        if _FSTRING_START is not None and t.type == _FSTRING_START:
            fdepth += 1
        elif _FSTRING_END is not None and t.type == _FSTRING_END:
            fdepth -= 1
        if fdepth or t.type != tokenize.OP:
            if t.type == tokenize.NAME and t.string == "for" and depth == 1 and start is not None:
                gen = True
            if t.type not in (tokenize.NL, tokenize.COMMENT) and not fdepth:
                prev = t
            continue
        if t.string in OPEN:
            depth += 1
            if depth == 1 and start is None:
                start = t.start[1]
                after_value = prev is not None and (
                    (prev.type == tokenize.NAME and prev.string not in _NOT_CALLEE)
                    or (prev.type == tokenize.OP and prev.string in ")]")
                    or prev.type == tokenize.STRING)
                kind = ("call" if t.string == "(" else "subscript" if t.string == "[" else "display") \
                    if after_value else "display"
        elif t.string in CLOSE:
            depth -= 1
            if depth == 0 and start is not None:
                return start, t.start[1], commas, kind, gen
        elif t.string == "," and depth == 1 and start is not None:
            commas.append(t.start[1])
        prev = t
    return None


def wrap_line(line: str, width: int, indent_unit: str = "    ") -> list[str]:
    """`line` (no newline) as one or more lines no longer than `width` where that is possible."""
    if len(line) <= width:
        return [line]
    indent = line[: len(line) - len(line.lstrip())]
    body = line.strip()
    got = _top_brackets(body)
    if got is None:
        return [line]
    o, c, commas, kind, gen = got
    head, inner, tail = body[: o + 1], body[o + 1: c], body[c:]
    if not inner.strip():
        return [line]
    inner_ind = indent + indent_unit
    one = inner_ind + inner.strip()
    if len(one) <= width:
        return [indent + head, one, indent + tail]
    cuts = [o, *commas, c]
    items = [body[a + 1: b].strip() for a, b in zip(cuts, cuts[1:])]
    trailing = bool(items) and not items[-1]
    items = [x for x in items if x]  # a trailing comma already there
    # one item per line with a trailing comma, where a comma keeps the meaning: a call's
    # arguments (not a lone generator), a tuple, list, dict or set; never a subscript's index or
    # a parenthesised expression (`(a if c else b)` would become a tuple)
    comma_ok = (kind == "call" and not (gen and len(items) == 1)) or (
        kind == "display" and (commas or body[o] != "("))
    if not comma_ok:
        if len(items) != 1 or trailing:
            return [line]
        return [indent + head, *wrap_line(one, width, indent_unit), indent + tail]
    out = [indent + head]
    for x in items:
        out += wrap_line(inner_ind + x + ",", width, indent_unit)
    out.append(indent + tail)
    return out


def split_open_line(line: str, width: int, indent_unit: str = "    ") -> list[str]:
    """The first line of a statement that goes on over the next lines (`f(a, b, "text "` with
    `"more")` below, as a mend writes when it keeps the user's multi-line argument): the
    arguments on this line one per line after the bracket left open; the rest stays where it is.
    [line] when that does not apply or does not shorten it."""
    if len(line) <= width:
        return [line]
    indent = line[: len(line) - len(line.lstrip())]
    body = line.strip()
    toks: list[tokenize.TokenInfo] = []
    try:
        for t in tokenize.generate_tokens(io.StringIO(body + "\n").readline):
            toks.append(t)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # EOF in a multi-line statement: the tokens of this line are what we need
    depth, fdepth, start, commas = 0, 0, None, []
    for t in toks:
        if t.start[0] != 1:
            break
        if t.type == tokenize.COMMENT or (t.type == tokenize.STRING and t.end[0] != 1):
            return [line]
        if _FSTRING_START is not None and t.type == _FSTRING_START:
            fdepth += 1
        elif _FSTRING_END is not None and t.type == _FSTRING_END:
            fdepth -= 1
        if fdepth or t.type != tokenize.OP:
            continue
        if t.string in OPEN:
            depth += 1
            if depth == 1:
                start, commas = t.start[1], []
        elif t.string in CLOSE:
            depth -= 1
        elif t.string == "," and depth == 1:
            commas.append(t.start[1])
    if depth != 1 or start is None or not commas:
        return [line]
    cuts = [start, *commas]
    items = [body[a + 1: b].strip() for a, b in zip(cuts, cuts[1:])]
    rest = body[commas[-1] + 1:].strip()
    if not all(items):
        return [line]
    inner = indent + indent_unit
    out = [indent + body[: start + 1]]
    for x in items:
        out += wrap_line(inner + x + ",", width, indent_unit)
    if rest:
        out.append(inner + rest)
    return out


def wrap_edits(text: str, edits: list[TextEdit], width: int) -> list[TextEdit]:
    """The edits, or one edit of the same lines with the lines they made longer than `width`
    wrapped. `text`: the text the edits apply to."""
    from graphmend.rewrite.apply import apply_edits
    lo = min(e.span.start.line for e in edits)
    hi = max(e.span.end.line for e in edits)
    src = split_lines(text, keepends=True)
    if hi > len(src):
        return edits
    region = "".join(src[lo - 1: hi])
    shifted = [TextEdit(Span(Pos(e.span.start.line - lo + 1, e.span.start.col),
                             Pos(e.span.end.line - lo + 1, e.span.end.col)), e.text) for e in edits]
    new = apply_edits(region, shifted)
    old_lines = {ln.rstrip("\r\n") for ln in split_lines(region)}
    nl = "\r\n" if region.endswith("\r\n") else "\n"
    out, changed = [], False
    for ln in split_lines(new):
        if len(ln) > width and ln not in old_lines:
            wrapped = wrap_line(ln, width, _indent_unit(text))
            if len(wrapped) == 1:  # the statement goes on over the next lines
                wrapped = split_open_line(ln, width, _indent_unit(text))
            changed = changed or len(wrapped) > 1
            out += wrapped
        else:
            out.append(ln)
    if not changed or not _same_code(new, nl.join(out)):
        return edits
    last = src[hi - 1].rstrip("\r\n")
    return [TextEdit(Span(Pos(lo, 0), Pos(hi, len(last))), nl.join(out))]


def _indent_unit(text: str) -> str:
    """The file's indentation step (tabs, or the smallest indentation in spaces), default 4."""
    best = None
    for ln in text.splitlines()[:400]:
        stripped = ln.lstrip(" \t")
        if not stripped or stripped.startswith("#") or stripped == ln:
            continue
        lead = ln[: len(ln) - len(stripped)]
        if lead.startswith("\t"):
            return "\t"
        if best is None or len(lead) < len(best):
            best = lead
    return best if best and len(best) in (2, 3, 4, 8) else "    "


def _same_code(before: str, after: str) -> bool:
    """Whether wrapping left the code as it was (same ast); False when that cannot be shown."""
    import ast
    import textwrap

    def dump(text: str) -> Optional[str]:
        try:
            return ast.dump(ast.parse(textwrap.dedent(text)))
        except SyntaxError:
            try:  # an indented block's statements: parse them inside a function
                return ast.dump(ast.parse("def _():\n" + textwrap.indent(textwrap.dedent(text), " ")))
            except SyntaxError:
                return None
    a = dump(before)
    return a is not None and a == dump(after)
