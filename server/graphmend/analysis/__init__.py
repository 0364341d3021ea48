"""Static analysis: what Dynamo will trace, and where it will break.

Runs on Python's `ast` only (fast enough for every keystroke); libcst is used
only when a fix is asked for (see `graphmend.rewrite`).
"""

from __future__ import annotations

from graphmend.analysis.engine import analyze_source, FileAnalysis  # noqa: F401
