"""What a call of a module-level function gives (analysis/dataflow.py `returns_tensor`): a
tensor when every return of the function is one, in this file or in a module the workspace
finds; then a Python test of the result is a data-dependent branch (torchdiffeq's
`accept_step = _compute_error_ratio(...) <= 1; if accept_step:`, the ratio from misc.py).

Each case is checked statically and run under torch.compile with a counting backend.
"""

from __future__ import annotations

import importlib
import logging
import sys
from pathlib import Path

import pytest
import torch

from difftest import Counter
from graphmend.analysis import analyze_source, incremental
from graphmend.analysis.workspace import Workspace
from graphmend.config import Settings
from graphmend.lsp.checker import check

HELPERS = """\
import torch


def ratio(err, y0, y1):
    tol = 1e-6 + 1e-3 * torch.max(y0.abs(), y1.abs())
    return (err / tol).abs()


def maybe_ratio(err, scale=None):
    if scale is None:
        return 0.0
    return (err / scale).abs()
"""

STEP = """\
import torch
{imports}


def _local_ratio(err, y):
    tol = 1e-6 + y.abs()
    return (err / tol).abs().max()


@torch.compile
def step(y, err):
    accept = {call} <= 1  # the call
    if accept:  # the branch
        return y * 2
    return y / 2
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / f"{name}.py"
    p.write_text(text)
    return p


def _codes(path: Path, tmp_path: Path) -> list[tuple[str, int]]:
    found = analyze_source(path.read_text(), str(path), workspace=Workspace([str(tmp_path)])).findings
    return [(f.code, f.span.start.line) for f in found]


def _graphs(tmp_path: Path, name: str, *args) -> int:
    """Graphs of `step` from module `name` (run without its decorator) under a counting backend."""
    run = f"{name}_run"
    _write(tmp_path, run, (tmp_path / f"{name}.py").read_text().replace("@torch.compile\n", ""))
    sys.path.insert(0, str(tmp_path))
    try:
        sys.modules.pop(run, None)
        fn = importlib.import_module(run).step
        counter = Counter()
        torch._dynamo.reset()
        logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
        out = torch.compile(fn, backend=counter)(*args)
        assert torch.equal(out, fn(*args))
        return len(counter.graphs)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("helpers", None)
        torch._dynamo.reset()


BRANCH = 13  # the line of `if accept:`


@pytest.mark.parametrize("imports, call, name", [
    ("", "_local_ratio(err, y)", "same_file"),
    ("from helpers import ratio", "ratio(err, y, y * 2).max()", "other_file_then_max"),
    ("from helpers import ratio", "ratio(err, y, y * 2).sum()", "other_file"),
])
def test_a_tensor_returned_by_a_function_makes_the_branch_data_dependent(tmp_path, imports, call, name):
    _write(tmp_path, "helpers", HELPERS)
    main = _write(tmp_path, f"main_{name}", STEP.format(imports=imports, call=call))
    assert ("GM201", BRANCH) in _codes(main, tmp_path)
    assert _graphs(tmp_path, f"main_{name}", torch.ones(3), torch.full((3,), 1e-4)) > 1


def test_the_result_of_an_imported_function_alone_is_a_tensor(tmp_path):
    """`ratio(...)` with no tensor method after it: only the callee's returns say it is a tensor."""
    _write(tmp_path, "helpers", HELPERS)
    src = STEP.format(imports="from helpers import ratio", call="ratio(err, y, y * 2)")
    main = _write(tmp_path, "main_alone", src)
    assert ("GM201", BRANCH) in _codes(main, tmp_path)
    assert _graphs(tmp_path, "main_alone", torch.ones(1), torch.full((1,), 1e-4)) > 1
    # without the workspace finding helpers.py, nothing proves it (precision first: no finding)
    found = analyze_source(main.read_text(), str(main), workspace=Workspace([])).findings
    assert ("GM201", BRANCH) not in [(f.code, f.span.start.line) for f in found]


def test_a_function_that_may_return_a_number_is_not_a_tensor(tmp_path):
    _write(tmp_path, "helpers", HELPERS)
    src = STEP.format(imports="from helpers import maybe_ratio", call="maybe_ratio(err)")
    main = _write(tmp_path, "main_maybe", src)
    assert ("GM201", BRANCH) not in _codes(main, tmp_path)
    assert _graphs(tmp_path, "main_maybe", torch.ones(3), torch.full((3,), 1e-4)) == 1  # 0.0 <= 1


def test_editing_the_callee_re_walks_the_caller(tmp_path):
    """The caller's finding depends on the callee's body: the incremental check re-walks it."""
    src = STEP.format(imports="", call="_local_ratio(err, y)").replace(".abs().max()", ".abs()      ")
    path = _write(tmp_path, "main_inc", src)
    ws, settings = Workspace([str(tmp_path)]), Settings()
    c0 = check(src, str(path), 0, settings, ws, {})
    assert ("GM201", BRANCH) in [(f.code, f.span.start.line) for f in c0.findings]
    new = src.replace("    return (err / tol).abs()      ", "    return float(1 + len(err))    ")
    assert new != src
    c1 = check(new, str(path), 1, settings, ws, {}, c0)
    assert c1.rewalked is not None and "step" in c1.rewalked
    full = check(new, str(path), 1, settings, ws, {})
    assert [(f.code, f.span.start.line) for f in c1.findings] == [(f.code, f.span.start.line) for f in full.findings]
    assert ("GM201", BRANCH) not in [(f.code, f.span.start.line) for f in c1.findings]


def test_cli_resolves_modules_of_a_checked_package_that_is_not_installed(tmp_path):
    """`graphmend check src/torchsolver` from elsewhere: `from .misc import ratio` is found in the
    checked tree (its import root, src/, is searched first), as torchdiffeq's rk_common.py
    imports `_compute_error_ratio` from misc.py; and so is a base class in a sibling module."""
    import json
    import subprocess
    pkg = tmp_path / "src" / "torchsolver"  # a name that starts with "torch", not torch's
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "misc.py").write_text(HELPERS)
    (pkg / "base.py").write_text("from torch import nn\n\n\nclass Block(nn.Module):\n    pass\n")
    (pkg / "step.py").write_text(
        "import torch\n\nfrom .base import Block\nfrom .misc import ratio\n\n\n"
        "class Step(Block):\n    def forward(self, y, err):\n"
        "        accept = ratio(err, y, y * 2) <= 1\n"
        "        if accept:  # line 10\n            return y * 2\n        return y / 2\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.run([sys.executable, "-m", "graphmend", "check", "--no-cache", "--exit-zero",
                           "--format", "json", str(tmp_path / "src" / "torchsolver")],
                          cwd=elsewhere, capture_output=True, text=True, timeout=120)
    found = [(Path(f["path"]).name, f["line"], f["code"]) for f in json.loads(proc.stdout)]
    assert ("step.py", 10, "GM201") in found, (found, proc.stderr)


def test_the_editor_resolves_the_open_files_package_like_the_cli(tmp_path):
    """The server's check adds the open file's import root to the workspace's search path, so
    the editor shows what `graphmend check` shows for a package graphmend cannot import; the
    analyses made before the path grew are not reused incrementally."""
    pkg = tmp_path / "src" / "torchsolver"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "misc.py").write_text(HELPERS)
    src = STEP.format(imports="from .misc import ratio", call="ratio(err, y, y * 2)")
    path = pkg / "step.py"
    path.write_text(src)
    other = tmp_path / "other" / "script.py"
    other.parent.mkdir()
    other.write_text("import torch\n")
    ws, settings = Workspace([str(tmp_path)]), Settings()
    c0 = check(other.read_text(), str(other), 0, settings, ws, {})
    assert ws.generation == 1 and c0.state.generation == 1
    c1 = check(src, str(path), 0, settings, ws, {})
    assert ws.generation == 2 and str(tmp_path / "src") in ws.search_path
    assert ("GM201", BRANCH) in [(f.code, f.span.start.line) for f in c1.findings]
    assert incremental.update(c0.state, "import torch\n\n", str(other), settings, ws, {}) is None  # stale
    c2 = check(src, str(path), 1, settings, ws, {}, c1)
    assert c2.rewalked is not None  # same generation: incremental
