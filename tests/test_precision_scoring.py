"""Which functions benchmarks/precision.py counts as skipped whole by Dynamo (their findings are
reported apart: their breaks cannot show while the function runs eagerly). No torch import.

torch 2.13 gives up on a frame when a graph break falls inside one of its for/while loops
("graph break in loop ... Skipping the frame and falling back to eager"): the code of that loop
after the break never reaches Dynamo. tests/test_precision_guards.py measures that on a small
function; here the scoring must name that frame, not the outermost one of the stack."""

from __future__ import annotations

import logging

import pytest
from pathlib import Path

from loading import load_path

ROOT = Path(__file__).resolve().parent.parent

SRC = '''\
class Model:
    def forward(self, shapes):
        x = 1
        return self.points(shapes) + x

    @staticmethod
    def points(shapes):
        out = []
        for h, w in shapes:
            out.append(linspace(h) + linspace(w))
        return out

    def other(self, mask):
        return mask.shape
'''


def _prec():
    return load_path(ROOT / "benchmarks" / "precision.py", "graphmend_bench_precision_test", reuse=True)


def _res(tmp_path, record):
    pkg = tmp_path / "transformers" / "models" / "m"
    pkg.mkdir(parents=True)
    (pkg / "modeling_m.py").write_text(SRC)
    return {"transformers_file": str(tmp_path / "transformers" / "__init__.py"),
            "skipped_functions": [record]}


def _fr(line, fn):
    return {"short": "transformers/models/m/modeling_m.py", "line": line, "function": fn}


def test_loop_break_skips_the_frame_holding_the_loop(tmp_path):
    rec = {"site": _fr(10, "points"), "skipped": True,
           "user_stack": [{"short": "harness.py", "line": 1}, _fr(4, "forward"), _fr(10, "points")]}
    got = _prec().skipped_functions(_res(tmp_path, rec))
    assert got == [("transformers/models/m/modeling_m.py", 7, 11, "points")]


def test_break_outside_loops_skips_the_compiled_frame(tmp_path):
    rec = {"site": _fr(14, "other"), "skipped": True,
           "user_stack": [_fr(4, "forward"), _fr(14, "other")]}
    got = _prec().skipped_functions(_res(tmp_path, rec))
    assert got == [("transformers/models/m/modeling_m.py", 2, 4, "forward")]


def test_frame_named_by_dynamo_wins_and_duplicates_fall_back_to_the_site(tmp_path):
    # Dynamo's "frame skipped: points (FILE line 6)": the line of its decorator
    named = {"site": _fr(14, "other"), "skipped": True, "user_stack": [_fr(4, "forward"), _fr(14, "other")],
             "skipped_frame": _fr(6, "points")}
    assert _prec().skipped_functions(_res(tmp_path, named)) == [
        ("transformers/models/m/modeling_m.py", 7, 11, "points")]
    dup = {"site": _fr(10, "points"), "skipped": True, "user_stack": []}
    assert _prec().skipped_functions(_res(tmp_path / "d", dup)) == [
        ("transformers/models/m/modeling_m.py", 7, 11, "points")]


def test_child_records_the_frame_dynamo_names():
    child = load_path(ROOT / "benchmarks" / "_model_child.py", "graphmend_bench_child_test", reuse=True)
    log = child._BreakLog()
    text = ("Graph break in user code at /x/transformers/models/m/modeling_m.py:10\n"
            "Graph Break Reason: Failed to handle graph break gracefully. Skipping the function and falling "
            "back to eager. Graph break encountered:\ngraph break in loop\n  Developer debug context: frame "
            "skipped: points (/x/transformers/models/m/modeling_m.py line 6)\n")
    log.emit(logging.LogRecord("torch._dynamo.__graph_breaks", logging.DEBUG, "", 0, text, None, None))
    assert log.breaks[0]["skipped"]
    assert log.breaks[0]["skipped_frame"] == {"file": "/x/transformers/models/m/modeling_m.py",
                                              "short": "transformers/models/m/modeling_m.py",
                                              "line": 6, "function": "points"}


def test_a_resume_function_is_skipped_from_its_line_on(tmp_path):
    rec = {"site": _fr(10, "points"), "skipped": True, "user_stack": [_fr(10, "points")],
           "skipped_frame": _fr(9, "torch_dynamo_resume_in_points_at_9")}
    assert _prec().skipped_functions(_res(tmp_path, rec)) == [
        ("transformers/models/m/modeling_m.py", 9, 11, "points")]


def test_value_conditions_are_apart_unless_the_site_broke():
    # a conditional finding whose condition names a value test the run does not report
    # ("breaks only when `len(self.step_t)` is nonzero") is apart when it did not break; the same
    # finding without that condition is a false alarm; one that broke is confirmed
    short = "transformers/models/m/modeling_m.py"
    res = {"transformers_file": "/nowhere/transformers/__init__.py", "dtype": "fp32",
           "coverage": {short: [3, 4]},
           "break_reasons": [{"summary": "generic_jump", "gb": "GB0170",
                              "user_stack": [{"short": short, "line": 4, "function": "f"}]}]}
    cond = {"kinds": ["value"], "text": "`len(self.step_t)` is nonzero"}
    f3 = {"file": short, "line": 3, "end_line": 3, "code": "GM201", "message": "m", "condition": cond}
    f4 = {**f3, "line": 4, "end_line": 4}
    prec = _prec()
    r = prec.evaluate(res, [f3, f4])
    assert [(c["line"], c["condition"]) for c in r["conditional_not_met"]] == [(3, cond["text"])]
    assert r["false_alarms"] == [] and (r["findings_executed"], r["confirmed"]) == (1, 1)
    r = prec.evaluate(res, [{**f3, "condition": None}])
    assert [fa["line"] for fa in r["false_alarms"]] == [3]


def _logged_breaks(tmp_path, name: str, text: str, *args):
    """The child's parsed graph_breaks records (every break's stack logged) of compiling `f` of
    a module written from `text`, and the module's path."""
    import torch

    child = load_path(ROOT / "benchmarks" / "_model_child.py", "graphmend_bench_child_test", reuse=True)
    src = tmp_path / f"{name}.py"
    src.write_text(text)
    mod = load_path(src, name)
    log = child._BreakLog()
    logger = logging.getLogger("torch._dynamo")
    torch._logging.set_logs(graph_breaks=True)
    child.log_every_break_stack()
    logger.addHandler(log)
    try:
        torch._dynamo.reset()
        torch.compile(mod.f, backend="eager")(*args)
    finally:
        logger.removeHandler(log)
        torch._logging.set_logs()
        torch._dynamo.reset()
        from torch._dynamo.utils import graph_break_dup_warning_checker
        graph_break_dup_warning_checker.__dict__.pop("add", None)  # the class's method again
    return log.breaks, str(src)


def test_child_logs_the_stack_of_a_break_at_a_line_that_broke_before(tmp_path):
    """Dynamo gives a break's user stack once per kind and innermost frame: deepctr-torch's
    `DataLoader(...)` after its `TensorDataset(...)` both break in Dynamo's constructor polyfill,
    and the second came without the stack that places it in the package (realcode round 33). The
    child logs every break's stack."""
    import torch

    breaks, src = _logged_breaks(tmp_path, "gm_two_datasets",
                                 "import torch.utils.data as D\n\n\ndef f(x):\n    a = D.TensorDataset(x)\n"
                                 "    x = x * 2\n    b = D.TensorDataset(x)\n    return x + 1, a, b\n",
                                 torch.ones(2))
    lines = {fr["line"] for b in breaks for fr in b["user_stack"] if fr["file"] == src}
    assert {5, 7} <= lines, breaks


def test_child_logs_the_compiled_subclass_init_a_base_init_broke_in(tmp_path):
    """A subclass `__init__` Dynamo compiles on its own after its caller broke in it is missing
    from the stack Dynamo logs for its own break in the base class's `__init__`; the child puts it
    in, so the harness sees the frame broke at `super().__init__()` and the `warnings.warn` after
    it ran eagerly (higher's DifferentiableRprop, realcode round 30)."""
    import torch

    text = ("import warnings\n\n\nclass Base:\n    def __init__(self, x):\n        _log()\n"
            "        self.x = x\n\n\nclass Sub(Base):\n    def __init__(self, *args, **kwargs):\n"
            "        super().__init__(*args, **kwargs)\n        warnings.warn('sub')\n\n\n"
            "def f(x):\n    return Sub(x).x + 1\n\n\ndef _log():\n    print('base')\n")
    with pytest.warns(UserWarning, match="sub"):
        breaks, src = _logged_breaks(tmp_path, "gm_sub_init", text, torch.ones(2))
    at = [{(fr["line"], fr["function"]) for fr in b["user_stack"] if fr["file"] == src} for b in breaks]
    assert all((6, "__init__") in s for s in at), breaks  # every record is the base's print (in `_log`)
    assert any((12, "__init__") in s for s in at), breaks  # the subclass frame, at super().__init__
    assert not any((13, "__init__") in s for s in at), breaks  # its warning never broke
    # in its place: below its eager caller `f`, above the base `__init__` Dynamo inlined into it
    [order] = [[(fr["line"], fr["function"]) for fr in b["user_stack"] if fr["file"] == src]
               for b in breaks if (12, "__init__") in {(fr["line"], fr["function"]) for fr in b["user_stack"]}]
    assert order == [(17, "f"), (12, "__init__"), (6, "__init__"), (21, "_log")], order
