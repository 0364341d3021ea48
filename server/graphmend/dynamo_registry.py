"""Dynamo's own words for a graph-break id: read from the graph-break registry of the torch
that the user has (found on sys.path without importing torch), else from a bundled extract."""

from __future__ import annotations

import functools
import importlib.machinery
import json
import re
import sys
from pathlib import Path
from typing import Optional

LINK = "https://meta-pytorch.github.io/compile-graph-break-site/gb/{id}.html"
_BUNDLED = Path(__file__).parent / "data" / "gb_registry.json"


@functools.lru_cache(maxsize=1)
def _registry() -> dict:
    try:
        spec = importlib.machinery.PathFinder.find_spec("torch", sys.path)
        if spec is not None and spec.submodule_search_locations:
            for loc in spec.submodule_search_locations:
                p = Path(loc) / "_dynamo" / "graph_break_registry.json"
                if p.is_file():
                    return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError, ImportError):
        pass
    try:
        return json.loads(_BUNDLED.read_text(encoding="utf-8"))["entries"]
    except (OSError, ValueError, KeyError):
        return {}


def _clean(s: str) -> str:
    """Registry text is the source of an f-string: drop quotes and `{placeholders}`."""
    s = re.sub(r'"\s+"', "", s).replace('"', "").strip()
    s = re.sub(r"\s*\+\s*\w+$", "", s)  # `... + trace_info`
    return re.sub(r"\s+", " ", s)


def explain(gb_id: Optional[str]) -> Optional[dict]:
    """{"id", "type", "explanation", "hints", "link"} or None when the id is unknown."""
    if not gb_id:
        return None
    entries = _registry().get(gb_id)
    if not entries:
        return None
    e = entries[0]
    hints = [_clean(h) for h in e.get("Hints", []) if h and "{" not in h]
    return {"id": gb_id, "type": e.get("Gb_type", ""), "explanation": _clean(e.get("Explanation", "")),
            "hints": hints, "link": LINK.format(id=gb_id.lower())}
