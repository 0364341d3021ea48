"""Replays the inputs kept from fuzzing `check` and `fix` (tests/regressions/fix/*.json: origin,
path, src): every property of tests/test_fix_fuzz.py holds for each (no crash, the output
parses, idempotent, no overlapping edits, nothing outside the fix ranges changed).
`benchmarks/fuzz.py --save-failures DIR` writes failing inputs in this format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import test_fix_fuzz as fuzz
from graphmend.config import Settings

CASES = sorted((Path(__file__).parent / "fix").glob("*.json"))


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_fix_regression(path):
    case = json.loads(path.read_text(encoding="utf-8"))
    assert fuzz.fix_problems(case["src"], "<string>", Settings(scope="module")) == []
    assert fuzz.fix_problems(case["src"], "<string>", Settings()) == []
