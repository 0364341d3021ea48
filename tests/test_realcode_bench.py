"""The scoring of benchmarks/realcode.py (the real-code corpus part of the suite) on child results
written out by hand: which Dynamo break sites count, recall, precision on executed lines, false
alarms, mended-but-still-breaking. The part itself needs its own 1.3 GB venv and tens of minutes,
so CI does not run it (docs/benchmarks.md, section 6); this checks that its figures mean what the
table says. No torch import."""

from __future__ import annotations

from pathlib import Path

from loading import load_path

ROOT = Path(__file__).resolve().parent.parent
SITE = Path("/sp")


def _bench():
    return load_path(ROOT / "benchmarks" / "realcode.py", "graphmend_bench_realcode_test", reuse=True)


def _frame(file, line):
    return {"file": f"/sp/{file}", "line": line, "source": ""}


ORIGINAL = {
    "ok": True, "breaks": 2,
    # nonzero in pkg/b.py:10, called from pkg/a.py:5; a backward in the harness (outside the package)
    "break_reasons": [{"summary": "Dynamic shape operator", "gb": "GB0036",
                       "user_stack": [_frame("pkg/a.py", 5), _frame("pkg/b.py", 10)]},
                      {"summary": "Unsupported Tensor.backward() call", "gb": None,
                       "user_stack": [{"file": "/elsewhere/train.py", "line": 3}]}],
    "explain": {"break_reasons": [{"summary": "generic_jump TensorVariable()", "gb": None,
                                   "user_stack": [_frame("pkg/a.py", 12)]}]},
    # a logger call before any tensor op of its frame: no graph, so only the log names it
    "graph_break_log": [{"file": "/sp/pkg/a.py", "line": 20, "gb": "GB0291", "reason": "CALL"}],
    "coverage": {"/sp/pkg/a.py": [5, 12, 20, 30], "/sp/pkg/b.py": [10]},
}


def _f(file, line, code, fixable=False, end=None):
    return {"file": file, "line": line, "end_line": end or line, "code": code, "fixable": fixable,
            "message": code}


FINDINGS = [
    _f("pkg/a.py", 5, "GM403"),                 # on a caller frame of a break: confirmed, not a site hit
    _f("pkg/b.py", 9, "GM402", end=10),         # spans the nonzero site
    _f("pkg/a.py", 12, "GM201", fixable=True),  # the branch, mended below
    _f("pkg/a.py", 20, "GM102", fixable=True),  # the logger, mended but still breaking below
    _f("pkg/a.py", 30, "GM401"),                # executed, no break there: a false alarm
    _f("pkg/a.py", 40, "GM401"),                # never executed: not scored
]
MENDED = {"ok": True, "breaks": 1, "break_reasons": [], "explain": {"break_reasons": []},
          "graph_break_log": [{"file": "/sp/pkg/a.py", "line": 20, "gb": "GB0291", "reason": "CALL"}]}


def test_sites_recall_precision_and_still_breaking():
    r = _bench().evaluate(ORIGINAL, MENDED, FINDINGS, ("pkg",), SITE)
    assert (r["sites"], r["named_sites"], r["found"], r["recall"]) == (4, 3, 3, 1.0)
    assert [(s["file"], s["line"]) for s in r["other_sites"]] == [("<outside pkg>", 0)]
    assert (r["findings_executed"], r["confirmed"], r["precision"]) == (5, 4, 0.8)
    assert [(f["file"], f["line"], f["code"]) for f in r["false_alarms"]] == [("pkg/a.py", 30, "GM401")]
    assert [(f["line"], f["code"]) for f in r["still_breaking"]] == [(20, "GM102")]


def test_a_site_no_finding_spans_is_a_miss():
    findings = [f for f in FINDINGS if f["code"] != "GM402"]
    r = _bench().evaluate(ORIGINAL, None, findings, ("pkg",), SITE)
    assert (r["found"], r["recall"]) == (2, round(2 / 3, 3))
    assert [(m["file"], m["line"], m["kind"]) for m in r["misses"]] == [("pkg/b.py", 10, "GB0036")]
    assert r["still_breaking"] == []  # no mended run: nothing is claimed either way


def test_report_totals_and_lists():
    bench = _bench()
    row = {"name": "toy", "dist": "pkg==1", "original": ORIGINAL, "mended": MENDED, "hook": {"fixes": 2},
           **bench.evaluate(ORIGINAL, MENDED, FINDINGS, ("pkg",), SITE)}
    data = {"rows": [row], "totals": bench.totals([row])}
    t = data["totals"]
    assert (t["breaks_before"], t["breaks_after"], t["false_alarms"], t["still_breaking"]) == (2, 1, 1, 1)
    md = bench.markdown(data)
    assert "| toy | pkg==1 | 2 -> 1 | 1 -> 1 | 3 | 3/3 (100%) |" in md
    assert "- pkg/a.py:30 GM401" in md and "Mended but still breaking:" in md


def test_skipped_frames_and_unmet_conditions_are_apart(tmp_path):
    # torchdiffeq's _runge_kutta_step: a break in its loop (line 3) makes Dynamo skip the frame, so
    # a finding after the loop (line 5) never sees Dynamo; a resume function skips the rest of `g`
    # from its line on. x-transformers' layer dropout: "breaks only when the module is training".
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(
        "def f(t):\n    for a in t:\n        if a == 1.:\n            pass\n    if t.sum() > 0:\n        pass\n"
        "\n\ndef g(x):\n    x = x + 1\n    y = x.item()\n    if x.any():\n        pass\n")
    site = tmp_path
    fr = lambda line, fn: {"file": f"{site}/pkg/m.py", "line": line, "function": fn}  # noqa: E731
    orig = {"ok": True, "breaks": 2,
            "break_reasons": [{"summary": "generic_jump TensorVariable()", "gb": "GB0170",
                               "user_stack": [{"file": f"{site}/pkg/m.py", "line": 3}]}],
            "skipped_functions": [{"skipped": True, "skipped_frame": fr(1, "f")},
                                  {"skipped": True, "skipped_frame": fr(11, "torch_dynamo_resume_in_g_at_11")},
                                  {"skipped": True, "skipped_frame": {"file": "/elsewhere/x.py", "line": 1,
                                                                      "function": "h"}}],
            "coverage": {f"{site}/pkg/m.py": [1, 2, 3, 5, 10, 11, 12]}}
    findings = [_f("pkg/m.py", 3, "GM201"), _f("pkg/m.py", 5, "GM201"), _f("pkg/m.py", 12, "GM201"),
                _f("pkg/m.py", 10, "GM403"), {**_f("pkg/m.py", 11, "GM403"), "condition": {"training": True}}]
    bench = _bench()
    assert bench.skipped_regions(orig, ("pkg",), site) == [("pkg/m.py", 1, 6, "f"), ("pkg/m.py", 11, 13, "g")]
    r = bench.evaluate(orig, None, findings, ("pkg",), site)  # an eval run
    assert [(f["line"], f["function"]) for f in r["masked_by_skip"]] == [(5, "f"), (12, "g")]
    assert [f["line"] for f in r["conditional_not_met"]] == [11]
    assert [f["line"] for f in r["false_alarms"]] == [10]  # before the resume point: still scored
    assert (r["findings_executed"], r["confirmed"]) == (2, 1)
    r = bench.evaluate(orig, None, findings, ("pkg",), site, training=True)  # in training it is scored
    assert r["conditional_not_met"] == []
    assert sorted(f["line"] for f in r["masked_by_skip"]) == [5, 11, 12]


def test_conditions_the_scoring_cannot_evaluate_are_apart_unless_they_broke():
    # torchdiffeq's `if on_step_t:` "breaks only when `len(self.step_t)` is nonzero" (no grid in the
    # run: no break) and x-transformers' layer dropout in a training run with rate 0 ("the module is
    # training and `layer_dropout > 0.0`"): apart, listed with the condition. A conditional finding
    # whose site broke is confirmed; one with only a training condition the run met is scored.
    grid = {"kinds": ["value"], "text": "`len(self.step_t)` is nonzero", "training": None}
    drop = {"kinds": ["training", "value"], "text": "the module is training and `layer_dropout > 0.0`",
            "training": True}
    train_only = {"kinds": ["training"], "text": "the module is training", "training": True}
    findings = [{**_f("pkg/a.py", 30, "GM201"), "condition": grid},
                {**_f("pkg/a.py", 20, "GM403"), "condition": drop},
                {**_f("pkg/a.py", 12, "GM201"), "condition": grid},   # broke there: confirmed
                {**_f("pkg/a.py", 5, "GM403"), "condition": train_only}]  # caller frame: confirmed
    bench = _bench()
    r = bench.evaluate({**ORIGINAL, "graph_break_log": []}, None, findings, ("pkg",), SITE, training=True)
    assert [f["line"] for f in r["conditional_undecided"]] == [30, 20]
    assert r["false_alarms"] == [] and (r["findings_executed"], r["confirmed"]) == (2, 2)
    row = {"name": "toy", "dist": "pkg==1", "original": ORIGINAL, "mended": None, **r}
    md = bench.markdown({"rows": [row], "totals": bench.totals([row])})
    assert "- pkg/a.py:30 GM201 breaks only when `len(self.step_t)` is nonzero (toy)" in md
    assert "2 conditional findings that did not break" in md
    # the same finding without its value condition is a false alarm
    r = bench.evaluate({**ORIGINAL, "graph_break_log": []}, None,
                       [{**_f("pkg/a.py", 30, "GM201"), "condition": train_only}], ("pkg",), SITE, training=True)
    assert [f["line"] for f in r["false_alarms"]] == [30] and r["conditional_undecided"] == []
    # a package's setting (skrl's `self.cfg.time_limit_bootstrap`, off in the run, realcode round
    # 34) is not read by the scoring either: apart
    cfg = {"kinds": ["training", "config"], "training": True,
           "text": "the module is training and `self.cfg.time_limit_bootstrap` is true"}
    r = bench.evaluate({**ORIGINAL, "graph_break_log": []}, None,
                       [{**_f("pkg/a.py", 30, "GM201"), "condition": cfg}], ("pkg",), SITE, training=True)
    assert r["false_alarms"] == [] and [f["line"] for f in r["conditional_undecided"]] == [30]


def test_a_second_package_of_the_entry_is_scored_with_it():
    """gpytorch's computations run in linear_operator: a break there has no frame in gpytorch. With
    `also=("linear_operator",)` the entry checks both, and such a break is a site of its own
    (found or missed), not `<outside gpytorch>` (listed apart)."""
    orig = {"ok": True, "breaks": 1, "graph_break_log": [], "explain": {"break_reasons": []},
            "break_reasons": [{"summary": "Attempted to call function marked as skipped", "gb": "GB0007",
                               "user_stack": [_frame("lo/memoize.py", 58)]}],
            "coverage": {"/sp/lo/memoize.py": [58]}}
    bench = _bench()
    alone = bench.evaluate(orig, None, [], ("pkg",), SITE)  # outside the packages: apart, no miss
    assert alone["misses"] == [] and [(m["file"], m["line"]) for m in alone["other_sites"]] == [("<outside pkg>", 0)]
    both = bench.evaluate(orig, None, [_f("lo/memoize.py", 58, "GM403")], ("pkg", "lo"), SITE)
    assert (both["named_sites"], both["found"], both["misses"]) == (1, 1, [])
    assert (both["findings_executed"], both["confirmed"]) == (1, 1)


def test_corpus_markers_name_every_package():
    import realcode_corpus  # benchmarks/ is on the path through `loading`
    e = realcode_corpus.ENTRIES["gpytorch-predict"]
    assert e.packages == ("gpytorch", "linear_operator")
    assert e.marker == "/gpytorch/,/gpytorch.py,/linear_operator/,/linear_operator.py"
    assert set(e.packages) <= set(e.check)


def test_a_single_module_distribution_is_the_package():
    """rtdl-num-embeddings is one file, `rtdl_num_embeddings.py` (realcode round 35; round 33's
    rtdl-revisiting-models too): its breaks and findings are the package's, not `<outside ...>`."""
    import realcode_corpus
    e = realcode_corpus.ENTRIES["rtdl-num-bins-encoding"]
    assert "/rtdl_num_embeddings.py" in e.marker.split(",")
    orig = {"ok": True, "breaks": 1, "graph_break_log": [], "explain": {"break_reasons": []},
            "break_reasons": [{"summary": "Dynamic shape operator", "gb": "GB0036",
                               "user_stack": [_frame("rtdl_num_embeddings.py", 720)]}],
            "coverage": {"/sp/rtdl_num_embeddings.py": [720]}}
    r = _bench().evaluate(orig, None, [_f("rtdl_num_embeddings.py", 720, "GM402")], e.packages, SITE)
    assert (r["named_sites"], r["found"], r["confirmed"], r["other_sites"]) == (1, 1, 1, [])
    r = _bench().evaluate(orig, None, [], ("rtdl_num",), SITE)  # another package's name: outside
    assert r["named_sites"] == 0 and [s["file"] for s in r["other_sites"]] == ["<outside rtdl_num>"]


def test_a_logged_break_outside_the_packages_is_listed_not_scored():
    """opacus (realcode round 10): the backward hooks it registers break in torch's own
    module.py (GB0083), a log record with no frame in the package; it was dropped. It is one of
    the entry's breaks, of a kind GraphMend does not name: listed apart. A logged break of a named
    kind outside the packages (the user's own code) is neither listed nor a miss."""
    log = [{"file": "/usr/lib/torch/nn/modules/module.py", "line": 1829, "gb": "GB0083",
            "reason": "Module-level backwards hooks require compiled autograd."},
           {"file": "/elsewhere/train.py", "line": 7, "gb": "GB0170", "reason": "generic_jump"}]
    r = _bench().evaluate({**ORIGINAL, "graph_break_log": ORIGINAL["graph_break_log"] + log}, None,
                          FINDINGS, ("pkg",), SITE)
    assert (r["named_sites"], r["found"]) == (3, 3)
    outside = [s for s in r["other_sites"] if s["file"] == "<outside pkg>"]
    assert len(outside) == 1 and outside[0]["count"] == 2  # the backward (explain) and the hook (log)


def test_a_named_break_outside_the_packages_is_no_miss():
    """torchmin (realcode round 13) calls torch/optim/lbfgs.py's `_cubic_interpolate`, whose
    data-dependent branches break inside torch: a named kind (GB0170), but no frame of the
    package. It was scored as a miss; GraphMend neither can nor should mend torch. Listed apart."""
    torch_jump = {"summary": "generic_jump TensorVariable()", "gb": "GB0170",
                  "user_stack": [{"file": "/usr/lib/torch/optim/lbfgs.py", "line": 18}]}
    orig = {**ORIGINAL, "break_reasons": ORIGINAL["break_reasons"] + [torch_jump]}
    r = _bench().evaluate(orig, None, FINDINGS, ("pkg",), SITE)
    assert (r["named_sites"], r["found"], r["recall"]) == (3, 3, 1.0)
    assert r["misses"] == [] and [s["file"] for s in r["other_sites"]] == ["<outside pkg>"]


def test_shared_ids_are_attributed_by_their_text():
    """GB0467 (setattr on an unsupported type) is GM405's when it sets requires_grad; GB0208 (a
    torch.* op returning a non-tensor) is GM403's for fork_rng; other causes of the same ids are
    not GraphMend's (realcode round 15: sinkhorn-transformer's reversible layers)."""
    b = _bench()
    assert b.attribute("GB0467", "setattr(TensorVariable(), requires_grad, ConstantVariable(bool: True))") == "GM405"
    assert b.attribute("GB0467", "setattr(UserDefinedObjectVariable(Foo), x, ...)") is None
    assert b.attribute("GB0208", "op: call_function; target: <function fork_rng at 0x7f>") == "GM403"
    assert b.attribute("GB0208", "op: call_function; target: <built-in method _get_tracing_state>") is None
    assert b.attribute("GB0225", "fn=TorchInGraphFunctionVariable(<built-in method tensor>)") == "GM405"
