"""Behaviour of the `graphmend` command line and the file layer under it (graphmend.scan).

The analysis and the fixer are replaced by small fakes (a finding on every line
that contains ``print(``), so these tests pin the CLI's own behaviour: positions,
exit codes, formats, discovery, reading, parallelism and safe writing.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import stat
import subprocess
import sys
import types
from pathlib import Path

import pytest

from graphmend import __version__, cli, scan
from graphmend.analysis import FileAnalysis
from graphmend.findings import CATALOGUE, Applicability, Finding, Pos, Span

MSG = "print() inside compiled code breaks the graph"


# --------------------------------------------------------------------------- fakes


def fake_analyze(text, path="<string>", settings=None, workspace=None, external=None):
    """A GM101 finding at each `print(`; `# unsafe` / `# nofix` on the line change its fix."""
    findings = []
    for i, line in enumerate(text.split("\n"), 1):
        col = line.find("print(")
        if col < 0:
            continue
        app, reason = Applicability.SAFE, None
        if "# unsafe" in line:
            app, reason = Applicability.UNSAFE, "the printed value may be mutated later"
        elif "# nofix" in line:
            app, reason = Applicability.NONE, "print is used as an expression"
        findings.append(Finding("GM101", MSG, Span(Pos(i, col), Pos(i, col + 5)), rewrite="defer",
                                applicability=app, decline_reason=reason, gb_id="GB0059",
                                fix_title="Defer print() until after the graph"))
    return FileAnalysis(path, findings)


def as_summary(analyze):
    """The per-file half of the engine, made from an analyze function: every finding in scope."""
    from graphmend.analysis import FileSummary
    from graphmend.analysis.scope import FileScope

    def summarize(text, path="<string>", settings=None, workspace=None, module=None, select=None):
        fa = analyze(text, path, settings, workspace)
        syntax = next((f for f in fa.findings if f.code == "GM001"), None)
        scope = FileScope(module=path, entries={"<module>": "test"}, defined={"<module>"})
        return FileSummary(path, scope, {"<module>": [f for f in fa.findings if f.code != "GM001"]},
                           syntax_error=syntax)
    return summarize


def patch_analysis(monkeypatch, analyze):
    monkeypatch.setattr(scan.analysis, "analyze_source", analyze)
    monkeypatch.setattr(scan.analysis, "summarize", as_summary(analyze))
    # a patched analysis reaches worker processes only through fork; scan picks forkserver when
    # this process has another thread, which an earlier test in the same pytest worker may leave
    # behind: the workers then ran the real analysis, and these tests failed depending on order
    if "fork" in multiprocessing.get_all_start_methods():
        monkeypatch.setattr(scan, "_mp_context", lambda: multiprocessing.get_context("fork"))


def fake_fix(text, path="<string>", settings=None, unsafe=False, workspace=None, external=None, runtime=None):
    """Replaces each fixable print line by `pass`; `# breakme` makes the result not parse."""
    from graphmend.rewrite import FixResult

    lines = text.split("\n")
    applied, skipped = [], []
    for f in fake_analyze(text, path).findings:
        if f.applicability is Applicability.SAFE or (unsafe and f.applicability is Applicability.UNSAFE):
            line = lines[f.span.start.line - 1]
            lines[f.span.start.line - 1] = line[: len(line) - len(line.lstrip())] + "pass"
            applied.append(f)
        elif f.applicability is Applicability.UNSAFE:
            skipped.append((f, "unsafe fix; pass --unsafe-fixes"))
        else:
            skipped.append((f, f.decline_reason or "no fix"))
    new = "\n".join(lines)
    if "# breakme" in text and applied:
        new += "\ndef broken(:\n"
    return FixResult(new, applied, skipped, remaining=fake_analyze(new, path).findings)


@pytest.fixture
def fake(monkeypatch):
    patch_analysis(monkeypatch, fake_analyze)
    monkeypatch.setattr("graphmend.rewrite.fix_source", fake_fix)


@pytest.fixture
def proj(tmp_path, monkeypatch):
    """An empty project directory (with its own pyproject.toml) as the working directory."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *argv):
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


SRC = "import torch\n\ndef f(x):\n    print(x)\n    return x + 1\n"


# --------------------------------------------------------------------------- check: text


def test_text_output_positions_and_exit_1(fake, proj, capsys):
    (proj / "a.py").write_text(SRC)
    rc, out, err = run(capsys, "check", "a.py")
    assert rc == 1
    lines = out.splitlines()
    # line 1-based, column 1-based in the output (the engine's col 4 -> 5)
    assert lines[0] == f"a.py:4:5: GM101 [*] {MSG}"
    assert lines[-1] == "Found 1 graph break (1 fixable with `graphmend fix`)."
    assert err == ""


def test_clean_exit_0(fake, proj, capsys):
    (proj / "a.py").write_text("x = 1\n")
    rc, out, err = run(capsys, "check", ".")
    assert rc == 0
    assert out.strip() == "No graph breaks found."


def test_columns_are_code_points(fake, proj, capsys):
    (proj / "u.py").write_text("def f(x):\n    s = 'é'; print(x)\n")
    rc, out, _ = run(capsys, "check", "u.py")
    assert out.splitlines()[0].startswith("u.py:2:14: GM101")


def test_unsafe_and_declined_markers_and_summary(fake, proj, capsys):
    (proj / "a.py").write_text(
        "def f(x):\n    print(x)\n    print(x)  # unsafe\n    y = print(x)  # nofix\n")
    rc, out, _ = run(capsys, "check", "a.py")
    assert rc == 1
    lines = out.splitlines()
    assert lines[0] == f"a.py:2:5: GM101 [*] {MSG}"
    assert lines[1] == f"a.py:3:5: GM101 [unsafe] {MSG}"
    assert lines[2] == "  = unsafe fix: the printed value may be mutated later"
    assert lines[3] == f"a.py:4:9: GM101 {MSG}"
    assert lines[4] == "  = mend declined: print is used as an expression"
    assert lines[-1] == "Found 3 graph breaks (1 fixable with `graphmend fix`, 1 more with --unsafe-fixes)."

    rc, out, _ = run(capsys, "check", "--unsafe-fixes", "a.py")
    assert f"a.py:3:5: GM101 [*] {MSG}" in out
    assert out.splitlines()[-1] == "Found 3 graph breaks (2 fixable with `graphmend fix --unsafe-fixes`)."


def test_show_fixes_and_statistics(fake, proj, capsys):
    (proj / "a.py").write_text("def f(x):\n    print(x)\n    print(x)\n")
    rc, out, _ = run(capsys, "check", "--show-fixes", "a.py")
    assert "  = fix: Defer print() until after the graph" in out
    rc, out, _ = run(capsys, "check", "--statistics", "a.py")
    assert rc == 1
    assert re.search(r"^2\tGM101\t\[\*\] print-in-graph$", out, re.M)
    assert "a.py:2:5" not in out


def test_select_and_ignore(fake, proj, capsys):
    (proj / "a.py").write_text(SRC)
    assert run(capsys, "check", "--ignore", "GM101", "a.py")[0] == 0
    assert run(capsys, "check", "--select", "GM2,GM3", "a.py")[0] == 0
    assert run(capsys, "check", "--select", "gm1", "a.py")[0] == 1
    rc, _, err = run(capsys, "check", "--select", "XY9", "a.py")
    assert rc == 2 and "unknown rule selector" in err
    (proj / "pyproject.toml").write_text("[tool.graphmend]\nignore = ['GM101']\n")
    assert run(capsys, "check", "a.py")[0] == 0


def test_config_errors_are_warnings(fake, proj, capsys):
    (proj / "pyproject.toml").write_text("[tool.graphmend]\nscope = 'everything'\nbogus = 1\n")
    (proj / "a.py").write_text(SRC)
    rc, out, err = run(capsys, "check", "a.py")
    assert rc == 1  # defaults used, the file still checked
    assert "warning" in err and "scope" in err and "bogus" in err
    assert "GM101" in out


def test_explicit_config_file(fake, proj, capsys):
    (proj / "a.py").write_text(SRC)
    (proj / "graphmend.toml").write_text("ignore = ['GM1']\n")
    assert run(capsys, "check", "--config", "graphmend.toml", "a.py")[0] == 0
    rc, _, err = run(capsys, "check", "--config", "missing.toml", "a.py")
    assert rc == 2 and "missing.toml" in err


# --------------------------------------------------------------------------- check: reading


def test_unreadable_paths_exit_2_and_others_still_checked(fake, proj, capsys):
    (proj / "a.py").write_text(SRC)
    (proj / "pkg").mkdir()
    (proj / "pkg" / "dangling.py").symlink_to(proj / "nowhere.py")
    rc, out, err = run(capsys, "check", "a.py", "missing.py", "pkg")
    assert rc == 2
    assert f"a.py:4:5: GM101 [*] {MSG}" in out
    assert "missing.py: cannot read: No such file or directory" in err
    assert os.path.join("pkg", "dangling.py") in err and "broken symbolic link" in err


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads everything")
def test_permission_denied_reported(fake, proj, capsys):
    p = proj / "secret.py"
    p.write_text(SRC)
    p.chmod(0)
    try:
        rc, _, err = run(capsys, "check", ".")
    finally:
        p.chmod(0o644)
    assert rc == 2 and "secret.py: cannot read" in err


def test_non_utf8_reported_and_skipped(fake, proj, capsys):
    (proj / "a.py").write_text(SRC)
    (proj / "latin.py").write_bytes(b"# caf\xe9\nprint(1)\n")
    rc, out, err = run(capsys, "check", ".")
    assert rc == 2
    assert "a.py:4:5: GM101" in out and "latin.py:" not in out
    assert "latin.py: not valid UTF-8 (byte 0xe9 at line 1" in err


def test_bom_and_crlf(fake, proj, capsys):
    (proj / "bom.py").write_bytes(b"\xef\xbb\xbf" + SRC.encode())
    (proj / "crlf.py").write_bytes(SRC.replace("\n", "\r\n").encode())
    rc, out, err = run(capsys, "check", ".")
    assert err == ""
    assert "bom.py:4:5: GM101" in out and "crlf.py:4:5: GM101" in out


def test_stdin(fake, proj, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=__import__("io").BytesIO(SRC.encode())))
    rc, out, _ = run(capsys, "check", "-", "--stdin-filename", "x/model.py")
    assert rc == 1 and out.startswith("x/model.py:4:5: GM101")


# --------------------------------------------------------------------------- discovery


def test_discovery_excludes(fake, proj, capsys):
    (proj / "pyproject.toml").write_text(
        "[tool.graphmend]\nextend-exclude = ['generated', '*_pb2.py', 'sub/skip_me.py']\n")
    for rel in ["a.py", "generated/g.py", "x_pb2.py", ".hidden/h.py", ".venv/lib/v.py",
                "__pycache__/c.py", "sub/skip_me.py", "sub/keep.py", "notes.txt", "stub.pyi"]:
        p = proj / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(SRC)
    rc, out, _ = run(capsys, "check", ".")
    paths = sorted({line.split(":")[0] for line in out.splitlines() if ":4:5:" in line})
    assert paths == ["a.py", os.path.join("sub", "keep.py")]
    # an explicit file is always checked, even in an excluded directory
    rc, out, _ = run(capsys, "check", "generated/g.py", ".hidden/h.py")
    assert "generated/g.py:4:5" in out.replace(os.sep, "/") and ".hidden/h.py:4:5" in out
    # a directory given explicitly is walked even if its name is excluded
    rc, out, _ = run(capsys, "check", "generated")
    assert os.path.join("generated", "g.py") + ":4:5" in out
    # --exclude replaces the configured list, --extend-exclude adds to it
    rc, out, _ = run(capsys, "check", "--extend-exclude", "sub", ".")
    assert "keep.py" not in out


def test_discovery_order_is_stable_and_deduplicated(proj):
    for rel in ["b.py", "a/z.py", "a/b.py", "c.py"]:
        p = proj / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("")
    files, errors = scan.discover([".", "c.py", "./a/b.py"], scan.Settings())
    assert errors == []
    assert files == [os.path.join("a", "b.py"), os.path.join("a", "z.py"), "b.py", "c.py"]


# --------------------------------------------------------------------------- machine formats


def test_json_format(fake, proj, capsys):
    (proj / "a.py").write_text(SRC)
    rc, out, _ = run(capsys, "check", "--format", "json", "a.py")
    assert rc == 1
    data = json.loads(out)
    assert len(data) == 1
    d = data[0]
    assert (d["path"], d["code"], d["line"], d["column"]) == ("a.py", "GM101", 4, 5)
    assert d["span"]["start"] == {"line": 4, "col": 4} and d["applicability"] == "safe"
    rc, out, _ = run(capsys, "check", "--format", "json", "--ignore", "GM", "a.py")
    assert rc == 0 and json.loads(out) == []


def test_sarif_format(fake, proj, capsys):
    (proj / "a.py").write_text(SRC + "print('module level')\n")
    rc, out, _ = run(capsys, "check", "--format", "sarif", "a.py", "missing.py")
    assert rc == 2
    doc = json.loads(out)
    assert doc["version"] == "2.1.0"
    run0 = doc["runs"][0]
    driver = run0["tool"]["driver"]
    assert driver["name"] == "graphmend"
    assert [r["id"] for r in driver["rules"]] == list(CATALOGUE)
    gm101 = next(r for r in driver["rules"] if r["id"] == "GM101")
    assert gm101["helpUri"].endswith("docs/rules/GM101.md")
    results = run0["results"]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results] == [4, 6]
    region = results[0]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 4, "startColumn": 5, "endLine": 4, "endColumn": 10}
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "a.py"
    assert driver["rules"][results[0]["ruleIndex"]]["id"] == results[0]["ruleId"] == "GM101"
    inv = run0["invocations"][0]
    assert inv["executionSuccessful"] is False
    assert "missing.py" in json.dumps(inv["toolExecutionNotifications"])


def test_github_format(fake, proj, capsys):
    (proj / "a.py").write_text(SRC)
    rc, out, _ = run(capsys, "check", "--format", "github", "a.py")
    assert rc == 1
    assert out.strip() == (f"::warning file=a.py,line=4,col=5,endLine=4,endColumn=10,"
                           f"title=GM101::{MSG}")


# --------------------------------------------------------------------------- fix


def test_fix_diff_writes_nothing(fake, proj, capsys):
    p = proj / "a.py"
    p.write_text(SRC)
    before = p.read_bytes()
    mtime = p.stat().st_mtime_ns
    rc, out, err = run(capsys, "fix", "--diff", "a.py")
    assert rc == 1
    assert p.read_bytes() == before and p.stat().st_mtime_ns == mtime
    assert out.startswith("--- a.py\n+++ a.py\n")
    assert "-    print(x)\n+    pass\n" in out
    assert "Would fix 1 graph break." in err
    (proj / "b.py").write_text("x = 1\n")
    rc, out, _ = run(capsys, "fix", "--diff", "b.py")
    assert rc == 0 and out == ""


def test_fix_writes_keeps_mode_newlines_and_bom(fake, proj, capsys):
    a = proj / "a.py"
    a.write_bytes(SRC.replace("\n", "\r\n").encode())
    a.chmod(0o751)
    b = proj / "b.py"
    b.write_bytes(b"\xef\xbb\xbf" + SRC.encode())
    rc, out, err = run(capsys, "fix", ".")
    assert rc == 0, err
    assert out.strip().splitlines()[-1] == "Fixed 2 graph breaks (0 remaining)."
    assert a.read_bytes() == SRC.replace("print(x)", "pass").replace("\n", "\r\n").encode()
    assert stat.S_IMODE(a.stat().st_mode) == 0o751
    assert b.read_bytes() == b"\xef\xbb\xbf" + SRC.replace("print(x)", "pass").encode()
    assert not [p for p in proj.iterdir() if p.name.endswith(".tmp")]  # no temp files left
    assert run(capsys, "check", ".")[0] == 0


def test_fix_through_symlink_keeps_link(fake, proj, capsys):
    real = proj / "real.py"
    real.write_text(SRC)
    (proj / "pkg").mkdir()
    link = proj / "pkg" / "link.py"
    link.symlink_to(real)
    rc, _, err = run(capsys, "fix", "pkg/link.py")
    assert rc == 0, err
    assert link.is_symlink() and "pass" in real.read_text()


def test_fix_reports_remaining(fake, proj, capsys):
    p = proj / "a.py"
    p.write_text("def f(x):\n    print(x)\n    print(x)  # unsafe\n    y = print(x)  # nofix\n")
    rc, out, _ = run(capsys, "fix", "a.py")
    assert rc == 1
    assert p.read_text() == "def f(x):\n    pass\n    print(x)  # unsafe\n    y = print(x)  # nofix\n"
    lines = out.splitlines()
    # remaining findings, positions in the fixed file, with why they were not fixed
    assert f"a.py:3:5: GM101 [unsafe] {MSG}" in lines
    assert f"a.py:4:9: GM101 {MSG}" in lines
    assert "  = mend declined: print is used as an expression" in lines
    assert lines[-1] == "Fixed 1 graph break (2 remaining, 1 fixable with --unsafe-fixes)."
    rc, out, _ = run(capsys, "fix", "--unsafe-fixes", "--show-fixes", "a.py")
    assert rc == 1
    assert "1 × GM101 (print-in-graph)" in out
    assert out.splitlines()[-1] == "Fixed 1 graph break (1 remaining)."


def test_fix_refuses_result_that_does_not_parse(fake, proj, capsys):
    p = proj / "a.py"
    p.write_text(SRC + "# breakme\n")
    before = p.read_bytes()
    rc, out, err = run(capsys, "fix", "a.py")
    assert rc == 2
    assert p.read_bytes() == before
    assert "does not parse" in err and "a.py" in err
    assert f"a.py:4:5: GM101 [*] {MSG}" in out  # the finding is still reported
    assert "Fixed 0 graph breaks (1 remaining)." in out
    rc, out, err = run(capsys, "fix", "--diff", "a.py")
    assert rc == 2 and out == "" and p.read_bytes() == before


def test_fix_leaves_file_changed_meanwhile(fake, proj):
    p = proj / "a.py"
    p.write_text(SRC)
    (fx,) = scan.fix_files(["a.py"], scan.Settings(), jobs=1)
    assert fx.changed
    p.write_text(SRC + "# edited\n")
    assert "changed while" in scan.write_fix(fx)
    assert p.read_text() == SRC + "# edited\n"


# --------------------------------------------------------------------------- parallel


def _tree(root: Path, n: int = 30) -> None:
    for i in range(n):
        d = root / f"pkg{i % 4}"
        d.mkdir(exist_ok=True)
        body = "".join(f"def f{j}(x):\n    print(x)\n    return x\n" for j in range(i % 5))
        (d / f"m{i:02d}.py").write_text("import torch\n" + body)
    (root / "pkg0" / "bad.py").write_bytes(b"\xff\xfe")


def test_parallel_matches_sequential_real_analysis(proj, capsys):
    _tree(proj)
    seq = run(capsys, "check", "--jobs", "1", ".")
    par = run(capsys, "check", "--jobs", "2", ".")
    assert par == seq
    assert "bad.py: not valid UTF-8" in seq[2]
    seq = run(capsys, "check", "--format", "json", "--jobs", "1", ".")
    par = run(capsys, "check", "--format", "json", "--jobs", "2", ".")
    assert par == seq


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                    reason="the fake analysis reaches workers only through fork")
def test_parallel_matches_sequential_with_findings(fake, proj, capsys):
    _tree(proj)
    seq = run(capsys, "check", "--jobs", "1", ".")
    par = run(capsys, "check", "--jobs", "3", ".")
    assert par == seq
    assert seq[0] == 2 and seq[1].count("GM101 [*]") == sum(i % 5 for i in range(30))
    diff_seq = run(capsys, "fix", "--diff", "--jobs", "1", ".")
    diff_par = run(capsys, "fix", "--diff", "--jobs", "2", ".")
    assert diff_par == diff_seq


def test_finding_round_trip():
    f = Finding("GM201", "m", Span(Pos(1, 2), Pos(3, 4)), rewrite="where",
                applicability=Applicability.UNSAFE, entry="Model.forward",
                entry_span=Span(Pos(5, 0), Pos(9, 1)), note="n")
    assert scan.decode_finding(scan.encode_finding(f)) == f


# --------------------------------------------------------------------------- rules, version, serve, usage


def test_rules_listing(capsys):
    rc, out, _ = run(capsys, "rules")
    assert rc == 0
    for code in CATALOGUE:
        assert code in out
    rc, out, _ = run(capsys, "rules", "--format", "json")
    rows = json.loads(out)
    gm101 = next(r for r in rows if r["code"] == "GM101")
    assert gm101 == {"code": "GM101", "name": "print-in-graph", "category": "side-effect",
                     "rewrite": "defer", "fixable": True, "dynamo_id": "GB0059",
                     "summary": CATALOGUE["GM101"].summary}


def test_rule_explanation(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "graphmend.rules", types.ModuleType("graphmend.rules"))
    rc, out, _ = run(capsys, "rule", "gm101")
    assert rc == 0 and out.startswith("# GM101 print-in-graph") and "GB0059" in out
    mod = types.ModuleType("graphmend.rules")
    mod.rule_doc = lambda code: f"# {code}\n\nthe long story\n" if code == "GM201" else None
    monkeypatch.setitem(sys.modules, "graphmend.rules", mod)
    assert run(capsys, "rule", "GM201")[1] == "# GM201\n\nthe long story\n"
    assert run(capsys, "rule", "GM301")[1].startswith("# GM301 validation-guard")  # fallback
    rc, _, err = run(capsys, "rule", "GM999")
    assert rc == 2 and "unknown rule" in err


def test_version(capsys):
    assert run(capsys, "version")[:2] == (0, f"graphmend {__version__}\n")
    assert run(capsys, "--version")[:2] == (0, f"graphmend {__version__}\n")


def test_serve(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "graphmend.lsp.server", None)  # as if it did not exist
    rc, _, err = run(capsys, "serve", "--stdio")
    assert rc == 2 and "language server" in err
    seen = []
    mod = types.ModuleType("graphmend.lsp.server")
    mod.main = lambda args: seen.append(args) or 0
    monkeypatch.setitem(sys.modules, "graphmend.lsp.server", mod)
    assert run(capsys, "serve", "--stdio")[0] == 0 and seen == [["--stdio"]]


def test_usage_errors(capsys):
    assert run(capsys)[0] == 2
    assert run(capsys, "check", "--jobs", "0", ".")[0] == 2
    assert run(capsys, "check", "--format", "xml", ".")[0] == 2
    assert run(capsys, "check", "--help")[0] == 0


def test_python_dash_m(tmp_path):
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    (tmp_path / "empty").mkdir()

    def pm(*args):
        return subprocess.run([sys.executable, "-m", "graphmend", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)

    r = pm("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"graphmend {__version__}"
    r = pm("check", "empty")
    assert r.returncode == 0 and r.stdout.strip() == "No graph breaks found."
    r = pm("check", "nope.py")
    assert r.returncode == 2 and "nope.py: cannot read" in r.stderr
    r = pm("rules", "--format", "json")
    assert r.returncode == 0 and len(json.loads(r.stdout)) == len(CATALOGUE)


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                    reason="the fake analysis reaches workers only through fork")
def test_worker_crash_is_recovered(proj, capsys, monkeypatch):
    parent = os.getpid()

    def crashing(text, path="<string>", settings=None, workspace=None, external=None):
        if "CRASH" in text and os.getpid() != parent:
            os._exit(3)  # a worker dies hard (as on a segfault)
        return fake_analyze(text, path, settings, workspace)

    patch_analysis(monkeypatch, crashing)
    for i in range(12):
        (proj / f"m{i:02d}.py").write_text(SRC + ("# CRASH\n" if i == 5 else ""))
    rc, out, err = run(capsys, "check", "--jobs", "2", ".")
    assert rc == 1, err
    assert out.count("GM101 [*]") == 12  # every file reported, the crashed chunk redone here


def test_engine_exception_is_reported_not_raised(proj, capsys, monkeypatch):
    def boom(text, path="<string>", settings=None, workspace=None, external=None):
        if "BOOM" in text:
            raise RuntimeError("engine bug")
        return fake_analyze(text, path, settings, workspace)

    patch_analysis(monkeypatch, boom)
    (proj / "a.py").write_text(SRC)
    (proj / "b.py").write_text("# BOOM\n")
    rc, out, err = run(capsys, "check", ".")
    assert rc == 2
    assert "a.py:4:5: GM101" in out
    assert "b.py: internal error while analyzing: RuntimeError: engine bug" in err


def test_syntax_errors_counted_apart(proj, capsys, monkeypatch):
    def analyze(text, path="<string>", settings=None, workspace=None, external=None):
        fa = fake_analyze(text, path, settings, workspace)
        if "def (" in text:
            fa.findings = [Finding("GM001", "Syntax error: invalid syntax", Span(Pos(1, 4), Pos(1, 5)))]
        return fa

    patch_analysis(monkeypatch, analyze)
    (proj / "bad.py").write_text("def (:\n")
    rc, out, _ = run(capsys, "check", "--select", "GM2", ".")  # GM001 shown though not selected
    assert rc == 1
    assert out.splitlines() == ["bad.py:1:5: GM001 Syntax error: invalid syntax",
                                "Found no graph breaks; 1 file could not be parsed (GM001)."]
    (proj / "a.py").write_text(SRC)
    rc, out, _ = run(capsys, "check", ".")
    assert out.splitlines()[-1] == ("Found 1 graph break (1 fixable with `graphmend fix`). "
                                    "1 file could not be parsed (GM001).")
    assert run(capsys, "check", "--ignore", "GM001", "bad.py")[0] == 0


def test_fix_stdin(fake, proj, capsys, monkeypatch):
    import io
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=io.BytesIO(SRC.encode())))
    rc, out, err = run(capsys, "fix", "-", "--stdin-filename", "m.py")
    assert rc == 0, err
    assert out == SRC.replace("print(x)", "pass")
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=io.BytesIO(SRC.encode())))
    rc, out, _ = run(capsys, "fix", "--diff", "-")
    assert rc == 1 and "+    pass" in out
