"""benchmarks/still_breaking.py: the breaks of a mended run on lines the fix wrote, and only those."""

from __future__ import annotations

from pathlib import Path

from loading import load_path

SB = load_path(Path(__file__).resolve().parent.parent / "benchmarks" / "still_breaking.py",
               "graphmend_bench_still_breaking", reuse=True)


def _frame(rel: str, line: int) -> dict:
    return {"short": "transformers/" + rel, "line": line, "source": f"line {line}"}


def test_counts_breaks_on_written_lines_only(tmp_path):
    orig, mended = tmp_path / "o" / "transformers", tmp_path / "m" / "transformers"
    (orig / "models").mkdir(parents=True)
    (mended / "models").mkdir(parents=True)
    (orig / "models" / "a.py").write_text("def f(x):\n    if x.sum() > 0:\n        x = x * 2\n    return x\n")
    (mended / "models" / "a.py").write_text("def f(x):\n    x = torch.where(x.sum() > 0, x * 2, x)\n    return x\n")
    (mended / "_graphmend_runtime.py").write_text("def helper():\n    pass\n")  # a file the fix added
    res = {"break_reasons": [
        {"summary": "data-dependent", "gb": "GB0170", "user_stack": [_frame("models/a.py", 2)]},   # written
        {"summary": "unchanged", "gb": "GB0059", "user_stack": [_frame("models/a.py", 3)]},        # `return x`
        # a caller frame on a written line, the break deeper in code the fix did not touch: not counted
        {"summary": "deeper", "gb": "GB0059", "user_stack": [_frame("models/a.py", 2), _frame("models/a.py", 3)]},
    ], "log_breaks": [{"summary": "in the helper", "gb": "GB0291", "skipped": False,
                       "user_stack": [_frame("models/a.py", 3), _frame("_graphmend_runtime.py", 2)]}]}
    got = SB.still_breaking(orig, mended, res)
    assert [(g["file"], g["line"], g["gb"]) for g in got] == [
        ("transformers/_graphmend_runtime.py", 2, "GB0291"), ("transformers/models/a.py", 2, "GB0170")]
    assert SB.still_breaking(orig, mended, {"break_reasons": res["break_reasons"][1:2]}) == []
