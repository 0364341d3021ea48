"""End to end in Neovim (headless): the Lua setup of docs/editors/neovim.md (the blocks marked
`<!-- nvim-test: ... -->`, run verbatim as init.lua) starts `python3 -m graphmend serve` with
Neovim's built-in client; tests/nvim/e2e.lua then drives it like a user (keymaps, the code
action picker, :commands, :write) and writes what Neovim ended up with as JSON.

Written for Neovim 0.7.2 (Debian bookworm; `scripts/install-neovim`), skipped without `nvim`.
Expectations come from the engine itself (`graphmend check --format json`, `fix_source`), for
the copy of tests/lsp_fixtures the server sees.
"""

from __future__ import annotations

import ast
import difflib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphmend.config import load_settings
from graphmend.rewrite.apply import fix_source
from graphmend.lsp.actions import INLINE_NOTE
from graphmend.rewrite import runtime

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "editors" / "neovim.md"
DRIVER = ROOT / "tests" / "nvim" / "e2e.lua"
FIXTURES = ROOT / "tests" / "lsp_fixtures"
NVIM = shutil.which("nvim")
NVIM_TIMEOUT_S = 90
WARN = 2  # vim.diagnostic.severity.WARN
ERROR = 1

pytestmark = pytest.mark.skipif(
    NVIM is None, reason="Neovim (`nvim`) is not on PATH; scripts/install-neovim installs it")


# ---------------------------------------------------------------------------- the docs' Lua

def doc_blocks(kind: str) -> dict[str, str]:
    """The ```lua blocks of the Neovim page marked `<!-- nvim-{kind}: NAME -->`."""
    text = DOC.read_text(encoding="utf-8")
    pattern = rf"<!-- nvim-{kind}: ([\w-]+) -->\n```lua\n(.*?)\n```"
    return {m.group(1): m.group(2) + "\n" for m in re.finditer(pattern, text, re.S)}


def init_lua() -> str:
    """Sections 1, 3 and 4 of the docs, in order, as a user's init.lua."""
    blocks = doc_blocks("test")
    missing = {"client", "keymaps", "fix-on-save"} - set(blocks)
    assert not missing, f"{DOC} lost its tested Lua blocks {sorted(missing)}"
    return "".join(blocks[name] for name in ("client", "keymaps", "fix-on-save"))


# ---------------------------------------------------------------------------- running Neovim

class Run:
    """One headless Neovim session in a copy of the fixture project."""

    def __init__(self, tmp: Path, scenario: str):
        self.tmp = tmp
        self.scenario = scenario
        self.project = tmp / "project"
        shutil.copytree(FIXTURES, self.project)
        if not (self.project / "pyproject.toml").exists():  # the root marker the docs look for
            (self.project / "pyproject.toml").write_text('[project]\nname = "fixture"\n')
        (self.project / "pkg").mkdir(exist_ok=True)  # one level down: the root is found by walking up
        self.file = self.project / "pkg" / "model.py"
        shutil.move(self.project / "model.py", self.file)
        self.original = self.file.read_text(encoding="utf-8")
        self.server_log = tmp / "server.log"
        self.out = tmp / "result.json"
        self.home = tmp / "home"
        self.result: dict = {}
        self.stderr = self.stdout = ""
        self.seconds = 0.0

    def python3_shim(self) -> Path:
        """`python3` (what the docs' cmd runs) = this interpreter; the server logs at debug
        level to a file."""
        bin_dir = self.tmp / "bin"
        bin_dir.mkdir()
        shim = bin_dir / "python3"
        py, log = shlex.quote(sys.executable), shlex.quote(str(self.server_log))
        shim.write_text(
            "#!/bin/sh\n"
            f'if [ "$#" -eq 3 ] && [ "$1 $2 $3" = "-m graphmend serve" ]; then\n'
            f'  exec {py} "$@" --log-level debug 2>>{log}\n'
            "fi\n"
            f'exec {py} "$@"\n')
        shim.chmod(0o755)
        return bin_dir

    def run(self) -> dict:
        init = self.tmp / "init.lua"
        init.write_text(init_lua(), encoding="utf-8")
        bin_dir = self.python3_shim()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("NVIM", "VIM", "MYVIMRC", "XDG_"))}
        env.update(
            PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.home / "config"), XDG_DATA_HOME=str(self.home / "data"),
            XDG_CACHE_HOME=str(self.home / "cache"), XDG_STATE_HOME=str(self.home / "state"),
            NVIM_LOG_FILE=str(self.tmp / "nvim.log"),
            GRAPHMEND_NVIM_SCENARIO=self.scenario, GRAPHMEND_NVIM_FILE=str(self.file),
            GRAPHMEND_NVIM_OUT=str(self.out), GRAPHMEND_NVIM_TIMEOUT_MS="30000")
        cmd = [NVIM, "--headless", "--clean", "-n", "-u", str(init),
               "-c", "lua vim.lsp.set_log_level('debug')", "-c", f"luafile {DRIVER}"]
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, cwd=self.project, env=env, capture_output=True, text=True,
                               timeout=NVIM_TIMEOUT_S, stdin=subprocess.DEVNULL)
            rc, self.stdout, self.stderr = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            rc = None
            self.stdout = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout or ""
            self.stderr = (e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) else e.stderr or ""
        self.seconds = time.monotonic() - t0
        if self.out.exists():
            self.result = json.loads(self.out.read_text(encoding="utf-8"))
        print(self.report())  # shown by pytest when the test fails
        if rc != 0 or not self.result or self.result.get("error"):
            pytest.fail(f"Neovim {'timed out after %ds' % NVIM_TIMEOUT_S if rc is None else f'exited {rc}'}"
                        f" in scenario {self.scenario}: {self.result.get('error') or self.stderr[-3000:]}"
                        "\n(see the captured stdout for Neovim's stderr and the logs)")
        return self.result

    def report(self) -> str:
        def tail(path: Path, n: int = 8000) -> str:
            return path.read_text(errors="replace")[-n:] if path.exists() else "(none)"
        lsp_log = self.home / "cache" / "nvim" / "lsp.log"
        brief = {k: v for k, v in self.result.items() if k not in ("lines",)}
        return (f"=== nvim {self.scenario}: {self.seconds:.1f} s; driver ms: {self.result.get('timings')}\n"
                f"--- nvim stdout:\n{self.stdout[-4000:]}\n--- nvim stderr:\n{self.stderr[-4000:]}\n"
                f"--- result (without lines):\n{json.dumps(brief, indent=1, ensure_ascii=False)[-8000:]}\n"
                f"--- server log ({self.server_log}):\n{tail(self.server_log)}\n"
                f"--- Neovim LSP log ({lsp_log}):\n{tail(lsp_log, 12000)}\n")

    # ------------------------------------------------------------------ expectations

    def check(self, text: str) -> list[dict]:
        """The engine's findings for `text` as the server sees it (its path, its pyproject)."""
        p = subprocess.run(
            [sys.executable, "-m", "graphmend", "check", "--format", "json", "--exit-zero",
             "--stdin-filename", str(self.file), "-"],
            input=text, cwd=self.project, capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)

    def fixed(self) -> tuple[str, list]:
        settings, errors = load_settings(self.project)
        assert not errors, errors
        # Neovim 0.7 announces no documentChanges: the server cannot create the vendored runtime
        # through the edit, so its mends carry the runtime inline (and their titles say so)
        r = fix_source(self.original, str(self.file), settings, runtime="inline")
        return r.text, r.remaining


def byte_col(line: str, col: int) -> int:
    """Neovim's column (bytes of UTF-8) of a code point offset."""
    return len(line[:col].encode("utf-8"))


def as_nvim(findings: list[dict], text: str) -> list[tuple]:
    """(code, 0-based line, byte column, end line, end byte column, severity), Neovim's view."""
    lines = text.split("\n")
    out = []
    for f in findings:
        s, e = f["span"]["start"], f["span"]["end"]
        out.append((f["code"], s["line"] - 1, byte_col(lines[s["line"] - 1], s["col"]),
                    e["line"] - 1, byte_col(lines[e["line"] - 1], e["col"]),
                    ERROR if f["code"] == "GM001" else WARN))
    return sorted(out)


def got(diags: list[dict]) -> list[tuple]:
    return sorted((d["code"], d["lnum"], d["col"], d["end_lnum"], d["end_col"], d["severity"])
                  for d in diags)


def buffer_text(result: dict) -> str:
    return "\n".join(result["lines"]) + "\n"


def assert_session(run: Run, result: dict) -> None:
    """What every scenario must have: the docs' client, on the project root, with the
    diagnostics the engine finds, and no error or warning shown to the user."""
    assert result["filetype"] == "python"
    client = result["client"]
    assert client["cmd"] == ["python3", "-m", "graphmend", "serve"]
    assert client["root_dir"] == str(run.project)  # found by walking up from pkg/
    assert client["attached_clients"] == 1
    assert client["offset_encoding"] == "utf-16"
    assert {"K", "\\ca", "\\cm"} <= set(result["maps"]), result["maps"]
    assert got(result["diagnostics_before"]) == as_nvim(run.check(run.original), run.original)
    shown = [m for m in result["messages"]
             if (m["source"] == "notify" and (m["level"] or 0) >= 3)  # vim.log.levels.WARN
             or (m["source"] == "showMessage" and m["level"] in (1, 2))]  # Error, Warning
    assert not shown, shown


# ---------------------------------------------------------------------------- tests

def test_quick_fix_and_hover(tmp_path):
    """K explains the first print() break; \\ca lists its quick fixes; choosing
    `GraphMend (GM101): ...` (resolved through codeAction/resolve) mends just that call."""
    run = Run(tmp_path, "quickfix")
    result = run.run()
    assert_session(run, result)
    expected = run.check(run.original)
    gm101 = min((f for f in expected if f["code"] == "GM101"), key=lambda f: f["line"])
    lines = run.original.split("\n")
    print_line = lines[gm101["line"] - 1]
    assert print_line.strip().startswith("print(")

    # hover: the request, and the floating window K opens
    hover = result["hover"]
    assert isinstance(hover, dict) and hover["kind"] == "markdown", hover
    assert "GM101" in hover["value"] and "Dynamo" in hover["value"], hover["value"]
    assert "GM101" in "\n".join(result["hover_window"]), result["hover_window"]

    # the picker: the fix (its title from the engine) and the ignore action, for this line only
    titles = [a["title"] for a in result["offered"]]
    fix_title = f"GraphMend (GM101): {gm101['fix_title']}"
    fix_title = next((t for t in titles if t.startswith(fix_title)), fix_title)  # (runtime inline ...)
    assert fix_title in titles, titles
    assert "GraphMend: Ignore GM101 on this line" in titles, titles
    assert all("GM101" in t or not t.startswith("GraphMend (") for t in titles), titles
    # Neovim advertises resolveSupport for "edit": the server lists the fix without its edit
    # and Neovim fetched it with codeAction/resolve before applying it
    assert result["client"]["resolve_provider"] is True
    assert [a["has_edit"] for a in result["offered"] if a["title"] == fix_title] == [False]

    # the buffer: parses, the print call became graphmend.print with the same arguments, the
    # runtime was bound once (Neovim 0.7 announces no documentChanges, so it cannot create the
    # vendored copy: the runtime comes inline, and the title said so), and nothing else changed
    new = buffer_text(result)
    ast.parse(new)
    block = runtime.inline_block()
    if block in new:
        assert new.count(block) == 1 and fix_title.endswith(INLINE_NOTE)
        rest = new.replace(block, "", 1).split("\n")
    else:
        assert new.count("import _graphmend_runtime as graphmend\n") == 1
        rest = new.replace("import _graphmend_runtime as graphmend\n", "", 1).split("\n")
    ops = [op for op in difflib.SequenceMatcher(None, lines, rest, autojunk=False).get_opcodes()
           if op[0] != "equal"]
    changed = [op for op in ops if op[0] != "insert" or any(s.strip() for s in rest[op[3]:op[4]])]
    assert len(changed) == 1 and changed[0][0] == "replace", ops  # blank lines may come with the block
    _, i1, i2, j1, j2 = changed[0]
    assert (i1, i2, j2 - j1) == (gm101["line"] - 1, gm101["line"], 1), ops
    mended = rest[j1]
    indent = print_line[:len(print_line) - len(print_line.lstrip())]
    assert mended.startswith(indent + "graphmend.print("), mended
    old_call, new_call = ast.parse(print_line.strip()).body[0].value, ast.parse(mended.strip()).body[0].value
    assert ast.unparse(new_call.func) == "graphmend.print"
    assert [ast.dump(a) for a in new_call.args] == [ast.dump(a) for a in old_call.args]
    assert [ast.dump(k) for k in new_call.keywords] == [ast.dump(k) for k in old_call.keywords]

    # the diagnostics: that GM101 is gone, the others remain (where the engine puts them now)
    after = got(result["diagnostics_after"])
    assert after == as_nvim(run.check(new), new)
    before_codes = sorted(d["code"] for d in result["diagnostics_before"])
    before_codes.remove("GM101")
    assert sorted(d[0] for d in after) == before_codes
    assert result["modified"] is True


@pytest.mark.parametrize("scenario", ["mend_all", "fix_on_save", "command"])
def test_mend_all(tmp_path, scenario):
    """Mend the whole file three ways: \\cm (graphmend.mend_all: the source.fixAll.graphmend
    action, resolved and applied), :write with the BufWritePre autocmd, and :GraphMendFixAll
    (workspace/executeCommand, applied through Neovim's workspace/applyEdit handler). Each must
    leave exactly what `graphmend fix` (fix_source) produces."""
    run = Run(tmp_path, scenario)
    result = run.run()
    assert_session(run, result)
    want, remaining = run.fixed()
    assert want != run.original
    new = buffer_text(result)
    if new != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), new.splitlines(True), "fix_source", "buffer"))
        pytest.fail(f"the buffer is not what fix_source gives:\n{diff}")
    after = got(result["diagnostics_after"])
    assert after == as_nvim(run.check(new), new)
    assert sorted(d[0] for d in after) == sorted(f.code for f in remaining)
    if scenario == "fix_on_save":
        assert run.file.read_text(encoding="utf-8") == want  # mended before it was written
        assert result["modified"] is False
    else:
        assert run.file.read_text(encoding="utf-8") == run.original  # the server never writes
        assert result["modified"] is True
    if scenario == "command":
        log = "\n".join(result["log_window"])
        assert result["log_window_buftype"] == "nofile"
        assert "GraphMend" in log and "ready" in log, log


def test_doc_lua_compiles(tmp_path):
    """Every marked Lua block of the Neovim page compiles (LuaJIT, Neovim's Lua); the ones
    for newer Neovim or for nvim-lspconfig cannot run here."""
    blocks = {**doc_blocks("test"), **doc_blocks("compile")}
    assert {"start", "config", "lspconfig", "keymap08"} <= set(blocks), sorted(blocks)
    files = []
    for name, code in blocks.items():
        f = tmp_path / f"{name}.lua"
        f.write_text(code, encoding="utf-8")
        files.append(str(f))
    lua = ("local bad = {} for _, f in ipairs(vim.split(os.getenv('BLOCKS'), '\\n')) do "
           "local ok, err = loadfile(f) if not ok then table.insert(bad, err) end end "
           "if #bad > 0 then io.stderr:write(table.concat(bad, '\\n') .. '\\n') vim.cmd('cquit') end "
           "vim.cmd('qall!')")
    env = {**os.environ, "BLOCKS": "\n".join(files), "HOME": str(tmp_path)}
    p = subprocess.run([NVIM, "--headless", "--clean", "-n", "-u", "NONE", "-c", f"lua {lua}"],
                       env=env, capture_output=True, text=True, timeout=NVIM_TIMEOUT_S,
                       stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr
