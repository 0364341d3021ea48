"""The live probe: Dynamo run for real in a child process on small fixture models (CPU, eager
backend), its failures contained (timeout, cancel, memory, the user's exceptions), logs imported,
and mends verified. Fixtures: tests/probe_fixtures/ (a small project with [tool.graphmend.probe])."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from graphmend.probe import cli as probe_cli
from graphmend.probe.config import load_probe_settings, probe_settings_from_dict
from graphmend.probe.logs import collapse_stack, parse_log, read_log, real_function
from graphmend.probe.runner import group_members, pid_alive, run_probe
from graphmend.probe.verify import verify

FIX = Path(__file__).parent / "probe_fixtures"
PY = sys.executable


def marker(path: Path, tag: str) -> int:
    """The line of `path` carrying the comment marker `tag` (e.g. "BREAK:print")."""
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if f"# {tag}" in line:
            return i
    raise AssertionError(f"no marker {tag} in {path}")


def def_line(path: Path, name: str) -> int:
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith(f"def {name}("):
            return i
    raise AssertionError(name)


MODELS = FIX / "fixpkg" / "models.py"
BAD = FIX / "fixpkg" / "bad.py"


def expected_sites() -> set:
    return {
        (str(MODELS), marker(MODELS, "BREAK:print"), "describe", "GB0059"),
        (str(MODELS), marker(MODELS, "BREAK:logger"), "forward", "GB0291"),
        (str(MODELS), marker(MODELS, "BREAK:branch"), "forward", "GB0170"),
    }


def sites(breaks) -> set:
    return {(b["file"], b["line"], b["function"], b["gb_id"]) for b in breaks}


@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    """One real probe of fixpkg.models, with a TORCH_TRACE of the same run."""
    trace = tmp_path_factory.mktemp("trace")
    stages: list[str] = []
    r = run_probe("fixpkg.models:probe", python=PY, cwd=str(FIX), device="cpu", backend="eager",
                  timeout_s=120, runs=3, on_stage=stages.append,
                  extra_env={"TORCH_TRACE": str(trace)})
    return r, trace, stages


# --------------------------------------------------------------------------- what Dynamo did


def test_breaks_found_with_files_and_lines(probed):
    r, _, stages = probed
    assert r["ok"], r["error"]
    assert r["error"] is None and r["device"] == "cpu" and r["backend"] == "eager"
    assert r["torch"].startswith("2.")
    assert r["graphs"] == 4 and r["breaks"] == 3 and r["recompiles"] == 0
    assert sites(r["break_list"]) == expected_sites()
    assert all(b["in_workspace"] for b in r["break_list"])
    assert r["entry_file"] == str(MODELS) and r["entry_line"] == def_line(MODELS, "probe")
    # the print break: its user stack runs from forward's call of describe() into describe
    pb = next(b for b in r["break_list"] if b["gb_id"] == "GB0059")
    assert [(f["function"], f["line"]) for f in pb["user_stack"]][-2:] == [
        ("forward", marker(MODELS, "CALL:describe")), ("describe", marker(MODELS, "BREAK:print"))]
    assert "print" in pb["reason"] and pb["gb_type"] == "Failed to trace builtin operator"
    assert "compiling with eager (first call)" in stages and stages[-1] == "done"


def test_resume_functions_mapped_to_the_real_function(probed):
    r, _, _ = probed
    # Dynamo compiles the code after a break as `torch_dynamo_resume_in_forward_at_N`: the logger
    # and branch breaks happen there, and are reported in `forward`, at forward's real lines.
    dumped = json.dumps([r["break_list"], r["graph_list"], r["explain"]])
    assert "torch_dynamo_resume" not in dumped
    ex = r["explain"]
    assert ex["graph_count"] == 4 and ex["graph_break_count"] == 3
    explained = {(b["line"], b["function"]) for b in ex["break_reasons"]}
    assert (marker(MODELS, "BREAK:branch"), "forward") in explained  # raw: a resume function
    assert real_function("torch_dynamo_resume_in_forward_at_24") == "forward"
    assert real_function("torch_dynamo_resume_in_torch_dynamo_resume_in_f_at_3_at_5") == "f"
    frames = [{"file": "/p/m.py", "line": 3, "function": "f"},
              {"file": "/p/m.py", "line": 9, "function": "torch_dynamo_resume_in_f_at_3"}]
    assert collapse_stack(frames) == [{"file": "/p/m.py", "line": 9, "function": "f"}]


def test_messages_and_timings(probed):
    r, _, _ = probed
    expected = ["print: describe (2, 8)", "log: WARNING fixpkg.models: net forward ran"]
    assert r["messages"] == expected and r["messages_second"] == expected
    assert "describe (2, 8)" in r["stdout_tail"]
    t = r["timings"]
    assert t["compile_s"] > 0 and t["first_call_s"] >= t["compile_s"]
    assert abs(t["cold_start_s"] - (t["first_call_s"] - t["compile_s"])) < 1e-5
    assert t["steady_runs"] == 3 and t["steady_median_ms"] > 0
    assert r["outputs_path"] is None and r["duration_s"] > 0


# --------------------------------------------------------------------------- logs


def test_torch_trace_of_the_same_run_gives_the_same_sites(probed):
    r, trace, _ = probed
    assert any(trace.iterdir()), "TORCH_TRACE wrote nothing"
    got = read_log(str(trace), workspace=str(FIX))
    assert got["ok"] and got["kind"] == "torch_trace"
    assert sites(got["break_list"]) == sites(r["break_list"])
    assert got["graphs"] >= r["graphs"]  # the trace also holds explain's graphs


def _rel_sites(breaks) -> set:
    out = set()
    for b in breaks:
        rel = b["file"].replace("\\", "/").split("probe_fixtures/")[-1]
        out.add((rel, b["line"], b["function"], b["gb_id"]))
    return out


def test_torch_logs_text_log_imported():
    # made by tests/probe_fixtures/make_logs.py with TORCH_LOGS=graph_breaks,recompiles (torch 2.13)
    log = FIX / "logs" / "graph_breaks.log"
    got = read_log(str(log))
    assert got["ok"] and got["kind"] == "torch_logs"
    want = {("fixpkg/models.py", ln, fn, gid) for (_, ln, fn, gid) in expected_sites()}
    assert _rel_sites(got["break_list"]) == want
    assert got["breaks"] == 8 and got["recompiles"] == 6  # a second shape recompiles each frame
    assert _rel_sites(parse_log(str(log))) == want
    assert "torch_dynamo_resume" not in json.dumps(got["break_list"])
    with pytest.raises(FileNotFoundError):
        parse_log(str(FIX / "logs" / "no-such.log"))
    assert read_log(str(FIX / "logs" / "no-such.log"))["error"]["kind"] == "bad-log"


def test_import_log_cli(capsys):
    rc = probe_cli.main_import_log([str(FIX / "logs" / "graph_breaks.log"), "--project", str(FIX)])
    out = capsys.readouterr().out
    assert rc == 1
    assert f"models.py:{marker(MODELS, 'BREAK:print')}: dynamo GB0059 Failed to trace builtin" in out
    assert "8 graph breaks at 3 sites, 6 recompiles" in out
    rc = probe_cli.main_import_log([str(FIX / "logs" / "graph_breaks.log"), "--json"])
    assert rc == 1 and len(json.loads(capsys.readouterr().out)["break_list"]) == 3
    assert probe_cli.main_import_log([str(FIX / "logs" / "no-such.log")]) == 2


# --------------------------------------------------------------------------- failures contained


def test_hanging_entry_killed_at_timeout_with_its_process_group(tmp_path):
    pidfile = tmp_path / "sleep.pid"
    t0 = time.monotonic()
    r = run_probe("fixpkg.hang:probe", python=PY, cwd=str(FIX), timeout_s=3,
                  extra_env={"GM_FIXTURE_PIDFILE": str(pidfile)})
    took = time.monotonic() - t0
    assert not r["ok"] and r["error"]["kind"] == "timeout"
    assert 3 <= took < 3 + 5, took
    assert r["error"]["file"] == str(FIX / "fixpkg" / "hang.py")
    assert r["error"]["line"] == def_line(FIX / "fixpkg" / "hang.py", "probe")
    grandchild = int(pidfile.read_text())  # `sleep 300`, started by the entry's module
    deadline = time.monotonic() + 3
    while pid_alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(grandchild), "the entry's grandchild survived the timeout"


def test_cancel_ends_the_run_and_its_process_group(tmp_path):
    pidfile = tmp_path / "sleep.pid"
    cancel = threading.Event()
    out: dict = {}
    th = threading.Thread(target=lambda: out.update(run_probe(
        "fixpkg.hang:probe", python=PY, cwd=str(FIX), timeout_s=120, cancel=cancel,
        extra_env={"GM_FIXTURE_PIDFILE": str(pidfile)})))
    th.start()
    deadline = time.monotonic() + 60
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    grandchild = int(pidfile.read_text())
    t0 = time.monotonic()
    cancel.set()
    th.join(timeout=15)
    assert not th.is_alive() and time.monotonic() - t0 < 5
    assert out["error"]["kind"] == "cancelled"
    deadline = time.monotonic() + 3
    while pid_alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(grandchild)


def test_exception_in_the_entry_reported_at_the_users_line():
    r = run_probe("fixpkg.bad:boom", python=PY, cwd=str(FIX), timeout_s=60)
    e = r["error"]
    assert not r["ok"] and e["kind"] == "exception"
    assert (e["file"], e["line"]) == (str(BAD), marker(BAD, "ERROR:build"))
    assert "ValueError: bad size -1" in e["message"] and "Traceback" in e["traceback"]


def test_exception_in_compiled_forward_reported_at_the_users_line():
    r = run_probe("fixpkg.bad:forward_boom", python=PY, cwd=str(FIX), timeout_s=60)
    e = r["error"]
    assert e["kind"] == "exception" and "missing_layer" in e["message"]
    assert (e["file"], e["line"]) == (str(BAD), marker(BAD, "ERROR:forward"))


def test_import_error_and_bad_entries():
    broken = FIX / "fixpkg" / "broken.py"
    r = run_probe("fixpkg.broken:probe", python=PY, cwd=str(FIX), timeout_s=60)
    assert r["error"]["kind"] == "import"
    assert (r["error"]["file"], r["error"]["line"]) == (str(broken), marker(broken, "ERROR:import"))
    assert "fixpkg_this_dependency_is_missing" in r["error"]["message"]
    r = run_probe("fixpkg.no_such_module:probe", python=PY, cwd=str(FIX), timeout_s=60)
    assert r["error"]["kind"] == "bad-entry" and "no_such_module" in r["error"]["message"]
    r = run_probe("fixpkg.bad:not_a_pair", python=PY, cwd=str(FIX), timeout_s=60)
    assert r["error"]["kind"] == "bad-entry"
    assert (r["error"]["file"], r["error"]["line"]) == (str(BAD), def_line(BAD, "not_a_pair"))
    r = run_probe("no_colon", python=PY, cwd=str(FIX), timeout_s=60)
    assert r["error"]["kind"] == "bad-entry"


def test_memory_limit_stops_the_run():
    r = run_probe("fixpkg.bad:hog", python=PY, cwd=str(FIX), timeout_s=60, memory_mb=1024)
    assert not r["ok"] and r["error"]["kind"] == "memory", r["error"]
    assert "1024 MiB" in r["error"]["message"]
    assert (r["error"]["file"], r["error"]["line"]) == (str(BAD), def_line(BAD, "hog"))


def _python_without_torch():
    for cand in ("/usr/bin/python3", shutil.which("python3") or ""):
        if cand and os.path.exists(cand) and os.path.realpath(cand) != os.path.realpath(PY):
            ok = subprocess.run([cand, "-c", "import sys; assert sys.version_info >= (3, 8)\n"
                                 "import importlib.util as u; raise SystemExit(u.find_spec('torch') is not None)"],
                                capture_output=True, timeout=30)
            if ok.returncode == 0:
                return cand
    return None


def test_interpreter_without_torch():
    r = run_probe("fixpkg.models:probe", python=str(FIX / "no" / "python"), cwd=str(FIX))
    assert r["error"]["kind"] == "no-torch" and "cannot run" in r["error"]["message"]
    py = _python_without_torch()
    if py is None:
        pytest.skip("no interpreter without torch here")
    r = run_probe("fixpkg.models:probe", python=py, cwd=str(FIX), timeout_s=60)
    assert r["error"]["kind"] == "no-torch", r["error"]
    assert r["error"]["file"] == str(MODELS)


# --------------------------------------------------------------------------- verify


@pytest.fixture(scope="module")
def verified():
    stages: list[str] = []
    before = (FIX / "fixpkg" / "mendable.py").read_bytes()
    v = verify("fixpkg.mendable:probe", python=PY, cwd=str(FIX), device="cpu", backend="eager",
               timeout_s=120, scope=["fixpkg"], runs=3, on_stage=stages.append)
    assert (FIX / "fixpkg" / "mendable.py").read_bytes() == before  # mended in memory only
    return v, stages


def test_verify_fewer_graphs_equal_outputs_and_messages(verified):
    v, stages = verified
    assert v["ok"], v["error"]
    assert v["graphs"] == [3, 1] and v["breaks"] == [2, 0] and v["recompiles"] == [0, 0]
    assert v["outputs_equal"] is True and v["max_abs_diff"] == 0.0
    assert v["messages_equal"] is True and v["messages_diff"] == []
    assert v["original"]["messages"] == [
        "log: WARNING fixpkg.mendable: small forward: 3 rows", "print: helper sees torch.Size([3, 8])"]
    assert v["fixes_applied"] == 2
    assert [(m["module"], sorted(m["codes"])) for m in v["mended_modules"]] == [
        ("fixpkg.mendable", ["GM101", "GM102"])]
    assert v["mended"]["break_list"] == []
    for k in ("compile_s", "cold_start_s", "first_call_s", "steady_median_ms"):
        assert all(x is not None and x >= 0 for x in v[k]), k
    assert any(s.startswith("mended: installing the mending import hook") for s in stages)
    text = "\n".join(probe_cli.verify_report(v))
    assert "outputs: bitwise equal" in text and "messages: equal" in text


def test_verify_reports_a_failing_side():
    v = verify("fixpkg.bad:boom", python=PY, cwd=str(FIX), scope=["fixpkg"], runs=1, timeout_s=60)
    assert not v["ok"] and v["error"]["side"] == "original" and v["error"]["kind"] == "exception"
    assert v["mended"] is None


# --------------------------------------------------------------------------- CLI and settings


def test_cli_probe_report(probed, monkeypatch, capsys):
    r, _, _ = probed
    import graphmend.probe.runner as runner
    seen = {}

    def fake(entry, **kw):
        seen.update(kw, entry=entry)
        return r
    monkeypatch.setattr(runner, "run_probe", fake)
    monkeypatch.chdir(FIX)
    assert probe_cli.main_probe([]) == 1  # the entry and settings come from the pyproject
    out = capsys.readouterr().out
    assert seen["entry"] == "fixpkg.models:probe" and seen["backend"] == "eager"
    assert seen["runs"] == 3 and seen["memory_mb"] == 4096 and seen["cwd"] == str(FIX)
    for (_, line, fn, gid) in expected_sites():
        assert f"fixpkg/models.py:{line}: dynamo {gid} " in out
    assert "4 graphs, 3 breaks (3 sites), 0 recompiles" in out
    assert probe_cli.main_probe(["--json", "--runs", "0", "--backend", "aot_eager"]) == 1
    assert json.loads(capsys.readouterr().out)["graphs"] == 4
    assert seen["runs"] == 0 and seen["backend"] == "aot_eager"


def test_cli_probe_error_end_to_end():
    p = subprocess.run([PY, "-m", "graphmend", "probe", "fixpkg.bad:boom", "--timeout", "60"],
                       cwd=FIX, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, p.stderr
    assert f"fixpkg/bad.py:{marker(BAD, 'ERROR:build')}: error: exception: " in p.stdout


def test_cli_probe_without_an_entry(tmp_path, capsys):
    assert probe_cli.main_probe(["--project", str(tmp_path)]) == 2
    assert "no entry" in capsys.readouterr().err
    assert probe_cli.main_probe(["not-an-entry", "--project", str(tmp_path)]) == 2


def test_probe_settings():
    s, errors = load_probe_settings(FIX)
    assert errors == []
    assert (s.entry, s.device, s.backend, s.timeout, s.memory_mb, s.runs, s.scope) == (
        "fixpkg.models:probe", "cpu", "eager", 120.0, 4096, 3, ["fixpkg"])
    assert s.root == str(FIX) and s.interpreter() == sys.executable and not s.unsafe
    assert s.output_mb == 512  # the default cap
    s, errors = probe_settings_from_dict({"device": "tpu", "timeout": "x", "memory-mb": 0,
                                          "python": ".venv/bin/python", "bogus": 1, "output-mb": 0})
    assert s.device == "auto" and s.timeout == 120.0 and s.memory_mb is None and s.output_mb is None
    assert len(errors) == 3 and any("bogus" in e for e in errors)
    s2, errors2 = probe_settings_from_dict({"output-mb": 64})
    assert s2.output_mb == 64 and errors2 == []
    assert probe_settings_from_dict({"output-mb": "lots"})[1]  # a clear error, the default kept
    s.root = "/proj"
    assert s.interpreter() == "/proj/.venv/bin/python"
    s.entry = "examples.tiny_model:probe"
    assert s.default_scope() == ["examples"]


def test_server_side_modules_do_not_import_torch():
    code = ("import sys; import graphmend.probe.runner, graphmend.probe.verify, "
            "graphmend.probe.logs, graphmend.probe.cli, graphmend.probe.config; "
            "raise SystemExit('torch' in sys.modules)")
    assert subprocess.run([PY, "-c", code], timeout=60).returncode == 0


def test_nothing_left_in_the_process_group(probed):
    # The child and whatever it started (compile workers, the user's processes) are gone.
    r, _, _ = probed
    assert r["returncode"] == 0 and r["pid"] > 0
    assert group_members(r["pid"]) == []


def test_compare_bitwise_close_and_when_close_is_enough(tmp_path):
    """`outputs_close`: every differing tensor within its dtype's tolerance (fp16 2e-3); enough
    under inductor (a whole graph and a split one fuse and round differently) or with unsafe
    fixes, not under eager/aot_eager with safe fixes only, where a safe mend is bitwise equal."""
    import torch
    from graphmend.probe.child import compare
    from graphmend.probe.verify import outputs_agree
    base = torch.linspace(-2, 2, 64, dtype=torch.float16)
    ulp = torch.nextafter(base, torch.full_like(base, 10))  # one fp16 ulp up (<= 0.00195 here)
    cases = {"same": (base, 0), "ulp": (ulp, 1), "far": (base + 0.5, 2),
             "int": (torch.arange(4), 3)}
    paths = {}
    for name, (t, _) in cases.items():
        a = {"out": base if name != "int" else torch.arange(4), "n": 3}
        b = {"out": t if name != "int" else torch.arange(4) + 1, "n": 3}
        pa, pb = tmp_path / f"{name}_a.pt", tmp_path / f"{name}_b.pt"
        torch.save(a, pa)
        torch.save(b, pb)
        paths[name] = compare(str(pa), str(pb))
    assert paths["same"]["outputs_equal"] is True and paths["same"]["outputs_close"] is True
    assert paths["ulp"]["outputs_equal"] is False and paths["ulp"]["outputs_close"] is True
    assert 0 < paths["ulp"]["max_abs_diff"] <= 0.002
    assert paths["far"]["outputs_close"] is False and paths["int"]["outputs_close"] is False
    ulp_v = {**paths["ulp"], "backend": "inductor", "unsafe": False}
    assert outputs_agree(ulp_v)
    assert not outputs_agree({**ulp_v, "backend": "eager"})
    assert outputs_agree({**ulp_v, "backend": "eager", "unsafe": True})
    assert not outputs_agree({**paths["far"], "backend": "inductor"})
    text = "\n".join(probe_cli.verify_report({**ulp_v, "entry": "m:f", "scope": ["m"], "runs": 1}))
    assert "within the dtype's tolerance, not bitwise" in text and "inductor fuses" in text
