"""Smoke tests of the real-model benchmark harness (``benchmarks/models.py``).

The ``slow`` tests build two small transformers models in fresh subprocesses and check that the harness
MEASURES (graph counts, break sites, messages), not merely that it ran. The unmarked tests cover the
harness's own logic without building models.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from loading import load_path

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "benchmarks" / "models.py"


def _load_harness():
    return load_path(BENCH, "graphmend_bench_models", reuse=True)


def _have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


needs_models = pytest.mark.skipif(not (_have("torch") and _have("transformers")),
                                  reason="needs torch and transformers")


@pytest.mark.slow
@needs_models
@pytest.mark.parametrize("spec,modeling_file", [("t5", "models/t5/modeling_t5.py"),
                                                ("bart", "models/bart/modeling_bart.py")])
def test_original_side_measures_breaks_and_messages(spec, modeling_file):
    bench = _load_harness()
    res = bench.measure_spec(spec, side="original", timeout=300, calls=2, explain=True)
    assert "mended" not in res and "fix" not in res
    orig = res["original"]
    assert orig.get("ok"), orig.get("error") or orig

    # Known to break on torch 2.13 / transformers 4.52.4 (the decoder's use_cache deprecation
    # warning_once): graphs > 1, breaks = graphs - 1, and explain agrees with the counting backend.
    assert orig["graphs"] > 1
    assert orig["breaks"] == orig["graphs"] - 1
    assert orig["explain"]["graph_count"] == orig["graphs"]
    assert orig["recompiles"] == 0
    assert orig["graphs_per_call"][1:] == [0] * (len(orig["graphs_per_call"]) - 1)

    # Break reasons carry the user frame: file:line and the source text of the break site.
    sites = [r["site"] for r in orig["break_reasons"]]
    assert sites, orig["break_reasons"]
    hits = [s for s in sites if s["short"] == f"transformers/{modeling_file}"]
    assert hits, sites
    assert all(isinstance(s["line"], int) and s["line"] > 0 for s in hits)
    assert any("warning_once" in s["source"] for s in hits)
    assert any(r["gb"] == "GB0291" for r in orig["break_reasons"])

    # Messages: the deprecation warning from the transformers logger hierarchy, in eager AND compiled,
    # once per phase (warning_once), on the first call only.
    for phase in ("eager", "compiled"):
        calls = orig["messages"][phase]
        assert len(calls) == 2
        logs = [e for e in calls[0] if e["kind"] == "log"]
        assert logs, (phase, calls)
        assert all(e["name"].startswith("transformers.") for e in logs)
        assert any("past_key_values" in e["message"] and e["level"] == "WARNING" for e in logs)
        assert not [e for e in calls[1] if e["kind"] == "log"], calls[1]

    # Compiling alone (counting backend) keeps outputs bitwise and messages.
    check = res["original_self_check"]
    assert check["outputs"]["equal"], check["outputs"]
    assert check["messages"]["equal"], check["messages"]
    assert orig["outputs"]["eager"], "no output tensors recorded"


# ---- harness logic (no model builds) -----------------------------------------------------------


def test_spec_parsing_and_default_files(tmp_path):
    bench = _load_harness()
    assert bench.parse_spec("bart-fp16") == ("bart", "fp16")
    assert bench.parse_spec("grounding-dino") == ("grounding-dino", "fp32")
    root = tmp_path / "transformers"
    (root / "models" / "grounding_dino").mkdir(parents=True)
    for name in ("modeling_grounding_dino.py", "modeling_tf_grounding_dino.py", "configuration_x.py"):
        (root / "models" / "grounding_dino" / name).write_text("x = 1\n")
    files = bench.default_files(root, "grounding-dino")
    assert files[0] == "models/grounding_dino/modeling_grounding_dino.py"
    assert "models/grounding_dino/modeling_tf_grounding_dino.py" not in files
    assert "models/swin/modeling_swin.py" in files  # per-family extra files
    assert files[-len(bench.SHARED_FILES):] == bench.SHARED_FILES


def test_fix_failure_and_noop_are_reported(tmp_path):
    bench = _load_harness()
    root = tmp_path / "transformers"
    (root / "models" / "t5").mkdir(parents=True)
    (root / "models" / "t5" / "modeling_t5.py").write_text("x = 1\n")
    files = ["models/t5/modeling_t5.py", "modeling_rope_utils.py"]

    failed = bench.make_mended_copy(root, files, "{python} -c 'import sys; sys.exit(3)'",
                                    sys.executable, tmp_path / "a", timeout=60)
    assert failed["status"] == "failed" and failed["rc"] == 3
    assert failed["missing"] == ["modeling_rope_utils.py"]

    noop = bench.make_mended_copy(root, files, "{python} -c 'pass'", sys.executable,
                                  tmp_path / "b", timeout=60)
    assert noop["status"] == "no-op"

    edit = ("{python} -c \"import sys; p = sys.argv[1]; "
            "open(p, 'a').write('y = 2\\n'); sys.exit(1)\"")
    ok = bench.make_mended_copy(root, files, edit, sys.executable, tmp_path / "c", timeout=60)
    assert ok["status"] == "ok" and ok["changed"] == ["models/t5/modeling_t5.py"]
    assert (root / "models" / "t5" / "modeling_t5.py").read_text() == "x = 1\n"  # original untouched

    crash = bench.make_mended_copy(root, files, "{python} -c 'raise AttributeError(\"x\")'",
                                   sys.executable, tmp_path / "e", timeout=60)
    assert crash["rc"] == 1 and crash["status"] == "failed" and "crashed" in crash["detail"]

    slow = bench.make_mended_copy(root, files, "{python} -c 'import time; time.sleep(30)'",
                                  sys.executable, tmp_path / "d", timeout=1)
    assert slow["status"] == "timeout"


def test_message_comparison_and_table():
    bench = _load_harness()
    warn = {"kind": "log", "level": "WARNING", "name": "transformers.models.x", "message": "m",
            "where": "transformers/models/x/modeling_x.py:10"}
    moved = dict(warn, where="transformers/models/x/modeling_x.py:99")  # a mend moves lines
    dynamo = {"kind": "warning", "level": "WARNING", "name": "UserWarning", "message": "dynamo",
              "where": "torch/_dynamo/variables/x.py:1"}
    assert bench.compare_messages([[warn], []], [[moved, dynamo], []])["equal"]
    lost = bench.compare_messages([[warn], []], [[], []])
    assert not lost["equal"] and lost["only_in_first"]

    results = [{
        "spec": "t5", "family": "t5", "dtype": "fp32",
        "original": {"ok": True, "graphs": 4, "breaks": 3, "recompiles": 0, "break_reasons": []},
        "fix": {"status": "failed", "detail": "rc=2: boom"},
        "mended": {"ok": False, "skipped": True, "error": "not measured: fix failed (rc=2: boom)"},
    }, {
        "spec": "bart", "family": "bart", "dtype": "fp32",
        "original": {"ok": False, "timeout": True, "error": "TIMEOUT: child did not finish"},
    }]
    text = bench.format_table(results)
    assert "not measured: fix failed" in text and "TIMEOUT" in text
    md = bench.format_table(results, markdown=True).splitlines()
    assert md[0].startswith("| model |") and md[1].startswith("|---")
    assert len(md) == 4


def test_tolerance_is_accepted_only_for_arithmetic_rewrites():
    """`tol(...)`: within the stated per-dtype tolerance, not bitwise; accepted only on rows where a
    rewrite that changes the arithmetic ([Route]) was applied; a real difference stays `no`."""
    import torch

    h = _load_harness()
    a = {"out": torch.tensor([1.0, 2.0, float("nan")])}
    near = {"out": torch.tensor([1.0 + 1e-7, 2.0, float("nan")])}
    far = {"out": torch.tensor([1.01, 2.0, float("nan")])}
    c_near, c_far = h.compare_tensors(a, near), h.compare_tensors(a, far)
    assert not c_near["equal"] and c_near["close"] and h._eq(c_near).startswith("tol(")
    assert not c_far["close"] and h._eq(c_far).startswith("no(")
    assert h.compare_tensors(a, {"out": a["out"].clone()})["equal"]
    half = {"out": torch.tensor([1.0, 2.0], dtype=torch.float16)}
    assert h.compare_tensors(half, {"out": torch.tensor([1.001, 2.0], dtype=torch.float16)})["close"]

    def row(rewrites, cmp):
        return {"spec": "x", "rewrites": rewrites, "original": {"breaks": 1}, "mended": {"breaks": 0},
                "compare": {"outputs": {"eager": cmp, "compiled": cmp, "cross": cmp}}}

    assert h._tolerated(row({"GM601/route": 1}, c_near))
    assert not h._tolerated(row({"GM102/defer": 1}, c_near))  # safe mends must be bitwise
    assert not h._tolerated(row({"GM601/route": 1}, c_far))
    t = h.totals([row({"GM601/route": 1}, c_near)])
    assert t["within_tolerance"] == ["x"] and "within tolerance" in h.format_totals(t)
