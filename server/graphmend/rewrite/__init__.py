"""Fixes as minimal text edits: each rule builds its edit with libcst on the
statement it mends; the runtime helper block is inserted once per file."""

from graphmend.rewrite.apply import fix_source, FixResult, fixes_for  # noqa: F401
