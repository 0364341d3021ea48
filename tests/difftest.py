"""Differential testing of mends: run original and mended code side by side, in eager mode and
under torch.compile with a counting backend, and compare everything a user could observe."""

from __future__ import annotations

import contextlib
import io
import logging
import uuid
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import torch

from graphmend.config import Settings
from loading import load_path
from graphmend.rewrite import fix_source


def load_module(src: str, tmp: Path, stem: str):
    """Write `src` to a fresh file in `tmp` and import it under a unique name."""
    name = f"gm_{stem}_{uuid.uuid4().hex[:8]}"
    path = tmp / f"{name}.py"
    path.write_text(src)
    if "import _graphmend_runtime as graphmend" in src:  # vendored: the copy `fix` writes beside it
        vendor_copy(tmp)
    return load_path(path, name)


def vendor_copy(tmp: Path):
    """Write the vendored runtime into `tmp` (as `graphmend fix` does) and import it; a copy
    already imported in this process is reused (the same text)."""
    import importlib
    import sys

    from graphmend.rewrite import runtime
    (tmp / runtime.VENDOR_FILE).write_text(runtime.vendored_text())
    if "_graphmend_runtime" not in sys.modules:
        sys.path.insert(0, str(tmp))
        try:
            importlib.import_module("_graphmend_runtime")
        finally:
            sys.path.remove(str(tmp))
    return sys.modules["_graphmend_runtime"]


class Counter:
    """A backend that records every FX graph Dynamo hands it, then runs it (eager) or
    compiles it with inductor."""

    def __init__(self, inner: str = "eager"):
        self.graphs = []
        self.inner = inner

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        if self.inner == "inductor":
            from torch._inductor.compile_fx import compile_fx
            return compile_fx(gm, example_inputs)
        if self.inner == "aot_eager":
            from torch._dynamo.backends.debugging import aot_eager
            return aot_eager(gm, example_inputs)
        return gm.forward


@dataclass
class Observed:
    result: object = None
    error: tuple | None = None
    stdout: str = ""
    records: list = field(default_factory=list)
    warns: list = field(default_factory=list)

    def same_as(self, other: "Observed") -> list[str]:
        diffs = []
        if (self.error is None) != (other.error is None) or self.error != other.error:
            diffs.append(f"error {self.error} != {other.error}")
        elif not _equal(self.result, other.result):
            diffs.append(f"result {self.result!r} != {other.result!r}")
        if self.stdout != other.stdout:
            diffs.append(f"stdout {self.stdout!r} != {other.stdout!r}")
        if self.records != other.records:
            diffs.append(f"log records {self.records} != {other.records}")
        if self.warns != other.warns:
            diffs.append(f"warnings {self.warns} != {other.warns}")
        return diffs


def _equal(a, b) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.nan_to_num(), b.nan_to_num()) \
            and torch.equal(a.isnan(), b.isnan())
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.items = []

    def emit(self, record):
        if not record.name.startswith("gm."):  # the tests' loggers, not torch's or filelock's
            return
        self.items.append((record.name, record.levelname, record.getMessage()))


def observe(fn, *args) -> Observed:
    obs = Observed()
    h = _Records()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(h)
    root.setLevel(logging.DEBUG)
    out = io.StringIO()
    try:
        with warnings.catch_warnings(record=True) as w, contextlib.redirect_stdout(out):
            warnings.simplefilter("always")
            try:
                obs.result = fn(*args)
            except Exception as e:  # noqa: BLE001 - compared, not handled
                obs.error = (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        obs.warns = [(x.category.__name__, str(x.message)) for x in w
                     if "/torch/" not in x.filename.replace("\\", "/")]
    finally:
        root.removeHandler(h)
        root.setLevel(old_level)
    obs.stdout = out.getvalue()
    obs.records = h.items
    return obs


def mend(src: str, unsafe: bool = True) -> str:
    """Mend every function of `src` (scope "module": the tests compile plain functions)."""
    return fix_source(src, settings=Settings(scope="module"), unsafe=unsafe).text


def compiled(fn, backend: Counter, fullgraph: bool = False):
    torch._dynamo.reset()
    return torch.compile(fn, backend=backend, fullgraph=fullgraph)


def findings_by_line(source: str, filename: str, scope: str = "module") -> dict[int, list]:
    """The findings of a check of `source` (as `filename`), by their first line."""
    from graphmend.analysis import analyze_source

    out: dict[int, list] = {}
    for f in analyze_source(source, filename, Settings(scope=scope)).findings:
        out.setdefault(f.span.start.line, []).append(f)
    return out


def marked_lines(source: str, marks) -> dict[str, int]:
    """For each text of `marks`, the (last) line of `source` that holds it."""
    return {mark: i for i, line in enumerate(source.splitlines(), 1) for mark in marks if mark in line}


def case_block(source: str, case: str) -> tuple[range, list[int]]:
    """The lines of the `if case == "<case>":` block of a test's source (up to the next such `if`
    or a `return`), and those of them marked `# reported`."""
    lines = source.splitlines()
    start = next(i for i, s in enumerate(lines, 1) if s.strip() == f'if case == "{case}":')
    end = next((i for i, s in enumerate(lines[start:], start + 1) if s.strip().startswith(("if case ==", "return"))),
               len(lines))
    return range(start, end), [i for i in range(start, end) if lines[i - 1].endswith("# reported")]


def _reported(lines: list[str], span: range) -> list[int]:
    return [i for i in span if "# reported" in lines[i - 1]]


def case_span(source: str, case: str, until: tuple = ("if case ==",)) -> tuple[range, list[int]]:
    """The lines of the `if case == "<case>":` block of a test's source, its returns included (up to
    the next line that starts with one of `until`), and those of them marked `# reported` (the
    comment may go on: `# reported: breaks only when ...`)."""
    lines = source.splitlines()
    start = next(i for i, s in enumerate(lines, 1) if s.strip() == f'if case == "{case}":')
    end = next((i for i, s in enumerate(lines[start:], start + 1) if s.strip().startswith(until)), len(lines) + 1)
    return range(start, end), _reported(lines, range(start, end))


def function_span(source: str, name: str) -> tuple[range, list[int]]:
    """The lines of `def <name>(` (top-level, or a method) up to the next `def` as far indented or
    less, and those marked `# reported`."""
    lines = source.splitlines()
    start = next(i for i, s in enumerate(lines, 1) if s.lstrip().startswith(f"def {name}("))
    indent = len(lines[start - 1]) - len(lines[start - 1].lstrip())
    end = next((i for i, s in enumerate(lines[start:], start + 1)
                if s[:indent].strip() == "" and s[indent:].startswith("def ")), len(lines) + 1)
    return range(start, end), _reported(lines, range(start, end))



def assert_case_breaks(source: str, case: str, findings, until: tuple, *broke: set) -> None:
    """The `if case == "<case>":` block's findings are on the lines marked `# reported`, and so
    are the lines Dynamo broke on in each run (`broke`: each run's graph-break-log lines)."""
    assert_span_breaks(*case_span(source, case, until), findings, *broke)


def assert_span_breaks(block: range, reported: list[int], findings, *broke: set) -> None:
    """The findings on the lines of `block` are on the `reported` lines, and so are the lines
    Dynamo broke on in each run (`broke`: each run's graph-break-log lines)."""
    assert sorted({f.span.start.line for f in findings if f.span.start.line in block}) == reported, (block, findings)
    for lines in broke:
        assert sorted(n for n in lines if n in block) == reported, (block, lines)
