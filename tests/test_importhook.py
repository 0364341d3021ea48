"""The import hook (`graphmend run`, `graphmend.probe.importhook.install`): modules under the
scope are mended as they are imported, nothing else is touched, and nothing is written.

The fixtures (tests/importhook_fixtures/) are two copies of a tiny package whose `Net.forward`
breaks the graph five times (print, a validation raise, logger.warning, a data-dependent branch,
and a print in `helpers.scale`, which only `forward` reaches and which is imported BEFORE the
module that reaches it). `gm_hookpkg` is put under the scope, `gm_otherpkg` is not.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graphmend.probe import importhook

torch = pytest.importorskip("torch")

FIXTURES = Path(__file__).parent / "importhook_fixtures"
HOOKED, OTHER = "gm_hookpkg", "gm_otherpkg"


def _listing(root: Path) -> dict[str, tuple[int, int]]:
    """Every file and directory under root: (mtime, size) of files; directories by name only
    (their mtime moves when Python writes the OTHER package's __pycache__, as it may)."""
    return {str(p.relative_to(root)): (0, 0) if p.is_dir() else (p.stat().st_mtime_ns, p.stat().st_size)
            for p in sorted(root.rglob("*"))}


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEND_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # Python may write bytecode: the hook must not
    env.update(extra)
    return env


def _run(cmd: list[str], cwd: Path, **env) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, env=_env(**env), capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def _result(proc) -> dict:
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A copy of the fixtures; a plain run, then two `graphmend run --scope gm_hookpkg` runs."""
    tmp = tmp_path_factory.mktemp("importhook")
    work = tmp / "fixtures"
    shutil.copytree(FIXTURES, work, ignore=shutil.ignore_patterns("__pycache__"))
    # A valid, UNMENDED .pyc of the scoped package: the hook must not serve it instead
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(work / HOOKED)], check=True)
    cache = tmp / "cache"
    out = {}
    for name in ("plain", "hook1", "hook2"):
        (tmp / name).mkdir()
    script = [sys.executable, str(work / "run_pkg.py")]
    out["plain"] = _result(_run(script + [str(tmp / "plain"), HOOKED, OTHER], work,
                                PYTHONDONTWRITEBYTECODE="1"))
    before = _listing(work)
    for name in ("hook1", "hook2"):
        report = tmp / f"{name}.json"
        proc = _run([sys.executable, "-m", "graphmend", "run", "--scope", HOOKED, "--unsafe-fixes",
                     "--cache-dir", str(cache), "--report", str(report), "--",
                     *script, str(tmp / name), HOOKED, OTHER], work)
        out[name] = _result(proc)
        out[name + "_stderr"] = proc.stderr
        out[name + "_report"] = json.loads(report.read_text())
    out["before"], out["after"] = before, _listing(work)
    out["tmp"], out["work"], out["cache"] = tmp, work, cache
    return out


def _records(report: dict) -> dict:
    return {r["module"]: r for r in report["records"]}


def test_scoped_package_has_fewer_graphs_same_outputs_and_messages(runs):
    plain, hook = runs["plain"][HOOKED], runs["hook1"][HOOKED]
    assert plain["graphs"] == 5 and not plain["forward_mended"]
    assert hook["graphs"] == 1  # every break mended, the one in helpers.scale too
    assert hook["forward_mended"] and hook["scale_mended"]
    assert not hook["unused_mended"]  # not reached from any compiled entry
    # the same messages, in order, eager and compiled (log records at the same line numbers)
    assert hook["eager_msgs"] == plain["eager_msgs"]
    assert hook["compiled_msgs"] == plain["compiled_msgs"] == plain["eager_msgs"]
    a = torch.load(runs["tmp"] / "plain" / f"{HOOKED}.pt")
    b = torch.load(runs["tmp"] / "hook1" / f"{HOOKED}.pt")
    for phase in ("eager", "compiled"):
        assert torch.equal(a[phase], b[phase])
    assert torch.equal(b["eager"], b["compiled"])


def test_package_outside_the_scope_is_untouched(runs):
    plain, hook = runs["plain"][OTHER], runs["hook1"][OTHER]
    assert hook["graphs"] == plain["graphs"] == 5
    assert not (hook["forward_mended"] or hook["scale_mended"])
    assert hook["compiled_msgs"] == plain["compiled_msgs"]
    a = torch.load(runs["tmp"] / "plain" / f"{OTHER}.pt")
    b = torch.load(runs["tmp"] / "hook1" / f"{OTHER}.pt")
    assert torch.equal(a["compiled"], b["compiled"])
    recs = _records(runs["hook1_report"])
    assert not [m for m in recs if not m.startswith(HOOKED)]
    # Python itself still wrote the other package's bytecode: the hook did not switch that off
    assert (runs["work"] / OTHER / "__pycache__").is_dir()


def test_records_report_and_summary(runs):
    recs = _records(runs["hook1_report"])
    assert set(recs) == {HOOKED, f"{HOOKED}.helpers", f"{HOOKED}.model"}
    model, helpers = recs[f"{HOOKED}.model"], recs[f"{HOOKED}.helpers"]
    assert sorted(model["codes"]) == ["GM101", "GM102", "GM201", "GM301"] and model["applied"] == 4
    assert model["path"] == str(runs["work"] / HOOKED / "model.py")
    # helpers was compiled before model; model's forward reaches scale: mended after the fact
    assert helpers["late"] == ["scale"] and helpers["applied"] == 1 and not helpers["late_missed"]
    assert not any(r["error"] for r in recs.values())
    assert not any(r["cached"] for r in recs.values())
    assert runs["hook1_report"]["returncode"] == 0
    assert re.search(r"graphmend run: mended 2 modules \(5 fixes\), 0 from cache, 0 failed",
                     runs["hook1_stderr"])


def test_second_run_hits_the_cache_with_the_same_result(runs):
    recs = _records(runs["hook2_report"])
    assert all(r["cached"] for r in recs.values()), recs
    assert recs[f"{HOOKED}.helpers"]["late"] == ["scale"], recs
    assert "mended 2 modules (5 fixes), 2 from cache, 0 failed" in runs["hook2_stderr"], runs["hook2_stderr"]
    assert runs["hook2"] == runs["hook1"], (runs["hook1"], runs["hook2"])
    a = torch.load(runs["tmp"] / "hook1" / f"{HOOKED}.pt")
    b = torch.load(runs["tmp"] / "hook2" / f"{HOOKED}.pt")
    assert torch.equal(a["compiled"], b["compiled"])
    assert any(runs["cache"].rglob("*.json"))


def test_nothing_is_written_next_to_the_code(runs):
    before, after = runs["before"], runs["after"]
    mine = lambda d: {k: v for k, v in d.items()  # noqa: E731
                      if not k.startswith(f"{OTHER}{os.sep}__pycache__")}
    assert mine(after) == mine(before)  # the scoped package's stale .pyc files included
    assert any(k.startswith(f"{HOOKED}{os.sep}__pycache__{os.sep}") for k in before)


def test_line_numbers_point_at_the_original_file(runs):
    src = (runs["work"] / HOOKED / "model.py").read_text().splitlines()
    if_line = next(i for i, s in enumerate(src, 1) if "if (x < 0).all():" in s)
    line, text = runs["hook1"][HOOKED]["raise_frame"]
    # the mended guard is one call where the `if ...: raise` was: its frame names that statement
    assert line == if_line and text == src[if_line - 1].strip()
    assert runs["plain"][HOOKED]["raise_frame"][0] == if_line + 1
    # log records name the user's line, eager and compiled, as without the hook
    logs = [m for m in runs["hook1"][HOOKED]["compiled_msgs"] if m[0] == "log"]
    assert logs and src[logs[0][3] - 1].strip().startswith("logger.warning(")


def test_refuses_torch_graphmend_and_the_stdlib(capsys):
    for bad in ("torch", "torch.nn", "graphmend", "os", "json.decoder"):
        with pytest.raises(ValueError):
            importhook.check_scope([bad])
    with pytest.raises(ValueError, match="torch itself is never mended"):
        importhook.install(["transformers", "torch"])
    assert not any(isinstance(f, importhook.MendingFinder) for f in sys.meta_path)
    assert importhook.main(["--scope", "torch", "--", sys.executable, "-c", "pass"]) == 2
    assert "torch itself is never mended" in capsys.readouterr().err
    assert not importhook.in_scope("torch.nn", ["torch"])
    assert importhook.in_scope("a.b.c", ["a.b"]) and not importhook.in_scope("a.bc", ["a.b"])


def test_run_chains_sitecustomize_and_imports_a_private_graphmend(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import os\nos.environ['GM_CHAINED'] = 'yes'\n")
    code = ("import os, sys, graphmend; from graphmend.probe import importhook as h; "
            "print(os.environ.get('GM_CHAINED'), graphmend.__file__, "
            "[f.scope for f in sys.meta_path if isinstance(f, h.MendingFinder)] == [['nopkg']])")
    proc = _run([sys.executable, "-m", "graphmend", "run", "--scope", "nopkg", "--",
                 sys.executable, "-c", code], tmp_path, PYTHONPATH=str(site))
    chained, gm_file, installed = proc.stdout.split()
    assert chained == "yes" and installed == "True"
    # graphmend comes from a private directory holding only a link to the package
    assert "graphmend-run-" in gm_file and gm_file.endswith(os.path.join("lib", "graphmend", "__init__.py"))
    assert "graphmend run: mended 0 modules (0 fixes), 0 from cache, 0 failed" in proc.stderr


def test_exit_code_is_the_commands(tmp_path):
    rc = importhook.main(["--scope", "nopkg", "--quiet", "--", sys.executable, "-c", "raise SystemExit(3)"])
    assert rc == 3


# ----------------------------------------------------------------------------- in process


@pytest.fixture
def pkg_copy(tmp_path, monkeypatch):
    work = tmp_path / "fx"
    shutil.copytree(FIXTURES, work, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.syspath_prepend(str(work))
    yield work
    importhook.uninstall()
    for name in [n for n in sys.modules if n == HOOKED or n.startswith(HOOKED + ".")]:
        del sys.modules[name]


def _run_net(mod):
    torch.manual_seed(0)
    net = mod.Net().eval()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    import contextlib
    import io
    with torch.no_grad(), contextlib.redirect_stdout(io.StringIO()) as buf:
        torch._dynamo.reset()
        y = torch.compile(net, backend=backend)(torch.ones(2, 4))
    return len(graphs), y, buf.getvalue()


def test_install_mends_in_process(pkg_copy):
    seen = []
    finder = importhook.install([HOOKED], unsafe=True, use_cache=False, report=seen.append)
    assert sys.meta_path[0] is finder
    import gm_hookpkg
    graphs, y, out = _run_net(gm_hookpkg)
    assert graphs == 1 and "forward torch.Size([2, 4])" in out
    recs = {r.module: r for r in finder.records}
    assert recs[f"{HOOKED}.model"].applied == 4 and recs[f"{HOOKED}.helpers"].late == ["scale"]
    assert {r.module for r in seen} == set(recs)
    assert gm_hookpkg.model.__file__ == str(pkg_copy / HOOKED / "model.py")
    # the hook's mends use the installed runtime: no copy is written, none is imported
    import graphmend.runtime
    assert gm_hookpkg.model.graphmend is graphmend.runtime
    assert gm_hookpkg.helpers.graphmend is graphmend.runtime  # bound by the late mend's patch
    assert not list(pkg_copy.rglob("_graphmend_runtime.py"))
    importhook.uninstall(finder)
    assert finder not in sys.meta_path


@pytest.mark.parametrize("failure", ["raises", "does not parse"])
def test_a_module_that_cannot_be_mended_loads_unchanged(pkg_copy, monkeypatch, failure):
    from graphmend.rewrite import apply

    real = apply.fix_source

    def broken(text, path, *a, **kw):
        if failure == "raises":
            raise RuntimeError("boom")
        res = real(text, path, *a, **kw)
        res.text = "def broken(:\n"
        return res

    monkeypatch.setattr(apply, "fix_source", broken)
    finder = importhook.install([HOOKED], unsafe=True, use_cache=False)
    import gm_hookpkg  # the import itself must work
    recs = {r.module: r for r in finder.records}
    model = recs[f"{HOOKED}.model"]
    assert model.error and ("RuntimeError: boom" in model.error if failure == "raises"
                            else "does not parse" in model.error)
    assert model.applied == 0
    assert "graphmend" not in gm_hookpkg.model.Net.forward.__code__.co_names
    graphs, y, out = _run_net(gm_hookpkg)  # the unmended module works as before
    assert graphs == 5 and "forward torch.Size([2, 4])" in out
    assert recs[f"{HOOKED}.helpers"].late_missed  # its late mend failed too, and says so
    assert "mended 0 modules (0 fixes), 0 from cache, 1 failed" in importhook.summary_line(finder.records)


def test_line_map_numbers_an_inline_block_past_the_end():
    from graphmend.config import Settings
    from graphmend.rewrite import fix_source

    src = (FIXTURES / HOOKED / "model.py").read_text()
    res = fix_source(src, "model.py", Settings(), unsafe=True, runtime="inline")
    lmap, exact, n = importhook.line_map(src, res.text)
    new_lines = res.text.splitlines()
    begin = next(i for i, s in enumerate(new_lines, 1) if s.startswith("# --- graphmend runtime v"))
    assert lmap[begin] > n  # no original line
    fwd = next(i for i, s in enumerate(new_lines, 1) if "def forward" in s)
    assert exact[fwd] and src.splitlines()[lmap[fwd] - 1] == new_lines[fwd - 1]
    code = importhook.compile_mapped(src, res.text, "model.py")
    net = next(c for c in code.co_consts if hasattr(c, "co_consts") and c.co_name == "Net")
    forward = next(c for c in net.co_consts if hasattr(c, "co_name") and c.co_name == "forward")
    assert forward.co_firstlineno == src.splitlines().index("    def forward(self, x):") + 1


ESCAPE_PKG = '''import torch


class Block(torch.nn.Module):
    """Scaling :math:`s_BACKSLASHmathrm{global}` (an invalid escape sequence, as in FrEIA's all_in_one_block.py)."""

    def forward(self, x):
        print("block")
        if x.ndim is 1:  # a compile-time SyntaxWarning, as higher's `len(v) is 1` (realcode round 30)
            x = x + 0
        return x * 2
'''


def test_a_mended_module_shows_no_compile_time_warning_of_its_text(tmp_path):
    """FrEIA (realcode round 16): the installed package imports from its .pyc, so Python never
    warns of its docstrings' invalid escapes; the mended build must not either (the hook's syntax
    check of the mended text printed "invalid escape sequence"; its compile of the mended tree
    printed higher's `"is" with a literal`)."""
    pkg = tmp_path / "gm_escpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(ESCAPE_PKG.replace("BACKSLASH", chr(92)))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(pkg)], check=True, capture_output=True)
    code = "import gm_escpkg, torch; print(gm_escpkg.Block()(torch.ones(1)).item())"
    plain = _run([sys.executable, "-W", "always", "-c", code], tmp_path)
    hooked = _run([sys.executable, "-m", "graphmend", "run", "--scope", "gm_escpkg", "--no-cache", "--",
                   sys.executable, "-W", "always", "-c", code], tmp_path)
    assert "invalid escape" not in plain.stderr
    assert "mended 1 module (1 fix)" in hooked.stderr, hooked.stderr
    assert "invalid escape" not in hooked.stderr, hooked.stderr
    assert "with a literal" not in plain.stderr and "with a literal" not in hooked.stderr, hooked.stderr
    assert hooked.stdout == plain.stdout
