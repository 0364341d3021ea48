"""Lines as Python's tokenizer counts them: split at \\n, \\r\\n and \\r only.

str.splitlines also splits at \\x0b, \\x0c, \\x1c-\\x1e, \\x85, \\u2028 and \\u2029, which are
not line breaks for ast: positions from ast would land on the wrong line.
"""

from __future__ import annotations

import re

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str, keepends: bool = False) -> list[str]:
    lines = _LINE.findall(text)
    if keepends:
        return lines
    return [ln.rstrip("\r\n") for ln in lines]
