"""Replays the mend cases the property tests found (tests/regressions/mends/*.py).

Each case is a small program (`f(x, y)`, run after tests/test_mend_properties.py's HEADER,
which defines `logger`, `GmError` and `helper`) with a comment header:

    # regression: what went wrong, and what the fix does
    # inputs: [[x spec, y spec], ...]    each spec [dtype, shape, values] (JSON; "nan"/"inf" allowed)
    # expect-decline: text of a decline reason   (optional: a finding of the case declines so)
    # expect-text: text in the mended program    (optional)
    # expect-reason: text of an unsafe fix's reason (optional)

and is checked as the properties check a generated program: the safe-mended program equals the
original (eager and under torch.compile with the eager backend; one graph when nothing is left
to break on), and the program with unsafe mends differs only where its reasons say it may.
`benchmarks/fuzz.py` writes the cases it finds in this format.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import test_mend_properties as props
from graphmend.analysis import analyze_source
from graphmend.config import Settings

KEYS = ("regression", "inputs", "expect-decline", "expect-text", "expect-reason")
CASES = sorted((Path(__file__).parent / "mends").glob("*.py"))


def parse_case(path: Path) -> dict:
    head, body, key = {}, [], None
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        if body or not line.startswith("#"):
            body.append(line)
            continue
        k, sep, value = line[1:].strip().partition(":")
        if sep and k in KEYS:
            key = k
            head.setdefault(key, []).append(value.strip())
        elif key == "regression":  # a continuation of the description
            head[key][-1] += " " + line[1:].strip()
    inputs = json.loads(head["inputs"][0], parse_constant=float)
    for pair in inputs:
        for spec in pair:
            spec[2] = [float(v) if isinstance(v, str) else v for v in spec[2]]
    return {**head, "src": props.HEADER + "".join(body).lstrip("\n"), "inputs": inputs}


def write_case(path: Path, title: str, src: str, inputs: list) -> None:
    """A found case, in this format (the program without the shared HEADER)."""
    body = src[len(props.HEADER):] if src.startswith(props.HEADER) else src
    js = json.dumps(inputs).replace("NaN", '"nan"').replace("-Infinity", '"-inf"').replace("Infinity", '"inf"')
    title = " ".join(title.replace("\\n", " ").split())
    path.write_text(f"# regression: {title}\n# inputs: {js}\n{body}", encoding="utf-8")


@pytest.fixture(autouse=True)
def _reset():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_mend_regression(path):
    case = parse_case(path)
    found = analyze_source(case["src"], settings=Settings(scope="module")).findings
    for want in case.get("expect-decline", []):
        assert any(want in (f.decline_reason or "") for f in found if f.applicability.name == "NONE"), \
            [(f.code, f.applicability.name, f.decline_reason) for f in found]
    mended = props.mend_case(case["src"], case["inputs"])
    for want in case.get("expect-text", []):
        assert want in mended.unsafe, mended.unsafe.split("end graphmend runtime helpers ---\n")[-1]
    for want in case.get("expect-reason", []):
        assert any(want in r for r in mended.unsafe_reasons), mended.unsafe_reasons
    assert props.check_case(mended, backends=("eager",)) == []


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_mend_regression_one_graph(path):
    """Where the safe mends leave nothing to break on, the mended case compiles with
    `fullgraph=True` (a counting backend; any break left at a mended site raises) to one graph, with
    the original's eager result, on every input the original runs without raising."""
    from difftest import Counter

    case = parse_case(path)
    mended = props.mend_case(case["src"], case["inputs"])
    if mended.safe == case["src"] or mended.remaining:
        pytest.skip("no safe mend, or breaks are left that the mends do not claim: "
                    f"{mended.remaining}")
    orig, safe = props.load(case["src"], "orig"), props.load(mended.safe, "safe")
    checked = 0
    for spec in case["inputs"]:
        args = [props.make(s) for s in spec]
        want = props.observe(orig.f, [a.clone() for a in args])
        if want.error is not None:
            continue
        torch._dynamo.reset()
        count = Counter()
        got = props.observe(torch.compile(safe.f, backend=count, fullgraph=True), [a.clone() for a in args])
        if got.error is not None and got.error[0] == "Unsupported":
            # a break: allowed only where no mend wrote (a break the analysis does not report)
            assert _breaks_on_written_lines(case["src"], safe, args) == [], (spec, got.error)
            continue
        assert props.differences(want, got, compiled=True) == [], (spec, got.error)
        assert len(count.graphs) == 1, (spec, len(count.graphs))
        checked += 1
    if not checked:
        pytest.skip("the original raises on every input of this case")


def _breaks_on_written_lines(original: str, mod, args) -> list[str]:
    """Dynamo's breaks (explain) whose innermost frame in the mended file is on a line the mend
    wrote (not an unchanged line of the original: difflib), whatever the helpers are called."""
    import difflib

    new = open(mod.__file__, encoding="utf-8").read().splitlines()
    written = set()
    for tag, _a, _b, j1, j2 in difflib.SequenceMatcher(None, original.splitlines(), new,
                                                       autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            written.update(range(j1 + 1, j2 + 1))
    torch._dynamo.reset()
    box = {}
    props.observe(lambda *a: box.setdefault("ex", torch._dynamo.explain(mod.f)(*a)), [a.clone() for a in args])
    torch._dynamo.reset()
    out = []
    for r in getattr(box.get("ex"), "break_reasons", []):
        frames = [fs for fs in r.user_stack if fs.filename == mod.__file__]
        if frames and frames[-1].lineno in written:
            out.append(f"{r.reason.splitlines()[0]} at line {frames[-1].lineno}: {new[frames[-1].lineno - 1].strip()}")
    return out
