"""Static analysis: what Dynamo will trace, and where it will break.

Runs on Python's `ast` only (fast enough for every keystroke); the fixes are built only when
asked for (see `graphmend.rewrite`).
"""

from __future__ import annotations

from graphmend.analysis.engine import (  # noqa: F401
    FileAnalysis, FileSummary, analyze_many, analyze_source, foreign_seeded, reached_in_file, summarize, unwalked,
)
from graphmend.analysis.scope import reach  # noqa: F401
