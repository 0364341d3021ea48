"""CI subset of the benchmark suite (benchmarks/suite.py): the quick mode on tiny inputs, so that the
scripts cannot rot. Asserts that the outputs are well formed (numbers present, tables rewritten
between their markers, a failing or missing part reported), never on timings."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from loading import load_path

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "benchmarks" / "suite.py"
DOCS = ROOT / "docs" / "benchmarks.md"
PARTS = ["models", "shape", "precision", "realcode", "editor", "scale", "speed"]


def _suite():
    return load_path(SUITE, "graphmend_bench_suite_test", reuse=True)


def _block(text: str, part: str) -> str:
    m = re.search(rf"<!-- bench:{part}:begin -->\n?(.*?)\n?<!-- bench:{part}:end -->", text, re.S)
    assert m, f"markers of {part} missing or malformed"
    return m.group(1)


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0


def test_docs_have_every_marker_once():
    text = DOCS.read_text()
    for part in ["header", *PARTS]:
        assert text.count(f"<!-- bench:{part}:begin -->") == 1
        assert text.count(f"<!-- bench:{part}:end -->") == 1
    assert set(_suite().PARTS) == set(PARTS)


def test_rewrite_docs_keeps_unrun_parts_and_fills_empty_ones():
    suite = _suite()
    text = "\n".join(f"<!-- bench:{p}:begin -->\n{'old ' + p if p == 'speed' else ''}\n<!-- bench:{p}:end -->"
                     for p in ["header", *PARTS])
    out = suite.rewrite_docs(text, {"scale": "| new | table |", "header": "machine"})
    assert _block(out, "scale") == "| new | table |"
    assert _block(out, "header") == "machine"
    assert _block(out, "speed") == "old speed"  # not run: kept
    assert "not yet measured" in _block(out, "models").lower() and "--parts models" in _block(out, "models")
    assert suite.rewrite_docs(out, {}) == out  # idempotent
    with pytest.raises(ValueError):
        suite.rewrite_docs(text.replace("<!-- bench:editor:end -->", ""), {})


@pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="needs transformers (test deps)")
def test_quick_suite_writes_tables_and_reports_failures(tmp_path):
    docs = tmp_path / "benchmarks.md"
    original = DOCS.read_text()
    docs.write_text(original)
    failing = tmp_path / "failing.py"
    failing.write_text("import sys\nprint('this part fails on purpose')\nsys.exit(3)\n")
    results = tmp_path / "results"
    r = subprocess.run(
        [sys.executable, str(SUITE), "--parts", "scale,editor,precision,models", "--quick", "--write-docs",
         "--docs", str(docs), "--results", str(results), "--script", f"precision={failing}",
         "--script", f"models={tmp_path / 'missing.py'}", "--args", "editor=--edits 4 --floor-runs 2"],
        capture_output=True, text=True, timeout=240, cwd=ROOT)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out  # a part failed, one is missing: the suite says so
    assert "summary: scale ok, editor ok, precision failed, models missing" in r.stdout, out

    status = json.loads((results / "suite.json").read_text())
    assert status["environment"]["cores"] >= 1 and status["environment"]["python"]
    assert status["parts"]["precision"]["rc"] == 3

    scale = json.loads((results / "scale.json").read_text())
    assert scale["tree"]["files"] > 0 and scale["tree"]["lines"] > 0 and scale["tree"]["dirs"]
    gm = scale["summary"]["graphmend"]
    for mode in ("no_cache", "cold", "warm", "changed"):
        assert _number(gm[mode]["wall_s"]) and _number(gm[mode]["files_per_s"]), gm[mode]
        assert _number(gm[mode]["peak_rss_mib"]) and _number(gm[mode]["cpu_s"])
        assert isinstance(gm[mode]["findings"], int) and gm[mode]["findings"] > 0
    for mode in ("cold", "warm", "changed"):
        assert gm[mode]["findings_equal_cold"] is True, mode  # the cache does not change findings
    assert _number(scale["floor"]["ast_parse_s"])
    assert scale["versions"]["graphmend"]
    if "ruff" in scale["summary"]:  # ruff is a benchmark-only tool: present when scripts/bench set it up
        assert _number(scale["summary"]["ruff"]["no_cache"]["wall_s"])
    assert "torchfix" not in scale["summary"]  # --quick skips it

    editor = json.loads((results / "editor.json").read_text())
    (name, f), = editor["files"].items()
    assert name == "modeling_t5.py" and f["error"] is None and f["lines"] > 1000
    assert _number(f["floors"]["ast_parse_ms"]["median"]) and _number(f["floors"]["libcst_parse_ms"]["median"])
    assert len(f["floors"]["parse_server_ms"]["runs"]) == 2 and _number(f["floors"]["parse_server_ms"]["median"])
    lsp = f["lsp"]
    assert _number(lsp["open_to_diagnostics_ms"]) and lsp["diagnostics"] > 0
    assert _number(lsp["open_empty_cache_ms"]) and _number(lsp["open_indexed_imports_ms"])
    assert [n.split("-")[0] for n in lsp["user_cache_files"]] == ["definitions", "opened"]
    assert lsp["edit_ms"]["n"] == 4 and _number(lsp["edit_ms"]["p95"])
    assert lsp["code_action_ms"]["n"] == lsp["diagnostics"] and _number(lsp["code_action_ms"]["p95"])
    assert _number(lsp["peak_rss_mib"]) and lsp["burst"]["stale_publishes"] == 0
    inproc = f["in_process"]  # the server's check of each edit, from the previous one: incremental
    assert inproc["edits"] == 4 and inproc["incremental"] == 4 and _number(inproc["check_ms"]["p95"])

    text = docs.read_text()
    assert "| machine |" in _block(text, "header") and "--quick" in _block(text, "header")
    s = _block(text, "scale")
    assert re.search(r"^\| graphmend [^|]+ \| no cache \| [\d.]+ \| [\d,]+ \|", s, re.M), s
    assert "torchfix" in s and "skipped" in s
    e = _block(text, "editor")
    assert re.search(r"^\| floor: `ast\.parse`, ms \(median of 2\) \| [\d.]+ \|", e, re.M), e
    assert re.search(r"^\| floor: a server that only parses, didOpen -> diagnostics, ms \(median of 2 fresh servers\) "
                     r"\| [\d.]+ \|", e, re.M), e
    for which in ("a file no session opened: empty user cache", "changed since a session opened it: imports indexed",
                  "the same file again: its diagnostics kept"):
        assert re.search(rf"^\| didOpen -> diagnostics, ms, {which} \(diagnostics\) \| [\d.]+ \(\d+\) \|", e, re.M), e
    p = _block(text, "precision")
    assert "did not pass: exit status 3" in p and "fails on purpose" in p
    assert "does not exist" in _block(text, "models")
    assert _block(text, "speed") == _block(original, "speed")  # not run: untouched
    # the prose outside the markers is untouched
    strip = lambda t: re.sub(r"<!-- bench:(\w+):begin -->.*?<!-- bench:\1:end -->", "", t, flags=re.S)  # noqa: E731
    assert strip(text) == strip(original)

    # re-rendering the saved results gives the same blocks
    again = tmp_path / "again.md"
    again.write_text(original)
    r2 = subprocess.run([sys.executable, str(SUITE), "--from-results", str(results), "--parts", "scale,editor",
                         "--write-docs", "--docs", str(again)], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r2.returncode == 0, r2.stdout + r2.stderr
    assert _block(again.read_text(), "scale") == s and _block(again.read_text(), "editor") == e


def test_applied_rewrites_ignore_declined_findings_of_the_same_code():
    """A fix that mended one GM201 site of three (two declined, still reported after) applied one
    [Where] rewrite; only fixable findings left after the fix count against it."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        models = load_path(ROOT / "benchmarks" / "models.py", "graphmend_bench_models_test", reuse=True)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    f = lambda code, rewrite, fixable: {"code": code, "rewrite": rewrite, "fixable": fixable}  # noqa: E731
    declined = [f("GM201", "where", False), f("GM201", "where", False)]
    before = [f("GM201", "where", True), f("GM102", "defer", True), f("GM102", "defer", True)] + declined
    assert models.applied_rewrites(before, declined) == {"GM201/where": 1, "GM102/defer": 2}
    # a fixable site still reported after the fix was not applied
    assert models.applied_rewrites(before, declined + [f("GM102", "defer", True)]) == {
        "GM201/where": 1, "GM102/defer": 1}


def test_mend_shape_quick_on_real_files(tmp_path):
    """issue 12's targets on real transformers files (t5, bart): each mended file gains one import
    of one vendored copy, no pasted block, no `_gm_` name, no added line over 88 or with trailing
    whitespace, everything parses, and a second fix changes nothing."""
    pytest.importorskip("transformers")
    out = tmp_path / "shape.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "mend_shape.py"), "--quick", "--jobs", "1",
                        "--json", str(out)], capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads(out.read_text())
    assert res["files mended"] >= 2 and res["imports added"] == res["files mended"]
    assert res["vendored copies"] == ["_graphmend_runtime.py"]
    for k in ("added lines over the line length", "added lines with trailing whitespace",
              "private _gm_ names in added lines", "pasted helper blocks", "mended files that do not parse",
              "second fix: files changed", "files with more than one import added"):
        assert res[k] == [], (k, res[k])


def test_models_from_json_combines_runs_later_rows_winning(tmp_path):
    """`models.py --from-json A,B`: rows of B replace the same specs of A; the total is computed
    over the combined rows (how the 35-row run and a later MoE run make one corpus figure)."""
    def row(spec, before, after):
        return {"spec": spec, "family": spec, "dtype": "fp32", "original": {"breaks": before, "graphs": before + 1},
                "mended": {"breaks": after, "graphs": after + 1}}
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"results": [row("x", 4, 0), row("y", 2, 2)]}))
    b.write_text(json.dumps({"results": [row("y", 2, 1), row("z", 4, 1)]}))
    out = tmp_path / "all.json"
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "models.py"), "--from-json", f"{a},{b}",
                        "--json", str(out)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    t = json.loads(out.read_text())["totals"]
    assert (t["rows"], t["breaks_before"], t["breaks_after"]) == (3, 10, 2)
    assert "80.0% of graph breaks over 3 rows (10 -> 2)" in r.stdout
