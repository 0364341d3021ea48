"""Fixes as minimal text edits: each rule builds its edit from the statement's source (ast
positions, stdlib only), lines it makes too long are wrapped (`wrap`, on tokens), and one line
per file binds the runtime (`runtime`: a vendored copy, graphmend.runtime, or inline).

libcst is not used: the edits are built from `ast` positions and the wrapping from `tokenize`,
both stdlib and an order of magnitude faster than a libcst parse of the file."""

from graphmend.rewrite.apply import fix_source, FixResult, fixes_for  # noqa: F401
