"""`s.split(sep)` with `sep` a parameter annotated `str` or defaulting to a string is str.split,
no evidence that `s` is a tensor (diffusers' `int(layer.split(delimiter)[...][-1])` with
`delimiter="_"`, tensordict's `key.split(separator)` with `separator: str`: realcode trees, both
false findings before). A tensor's `x.split(size)` with an int size stays evidence. Checked
statically and run under Dynamo (its graph-break log)."""

from __future__ import annotations

import torch

from difftest import load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import torch


def layer_id(layer, x, delimiter="_"):
    return x * int(layer.split(delimiter)[-1])


def nested(key, x, separator: str):
    if key == ".".join(key.split(separator)):
        return x + 1
    return x


def chunks(t, x, size: int):
    first = t.split(size)[0]
    return x * int(first.sum())  # reported


def run(x):
    return layer_id("down_3", x) + nested("a.b", x, ".") + chunks(torch.arange(4.0), x, 2)
'''


def test_a_string_separator_is_no_tensor_evidence(tmp_path):
    found = analyze_source(SOURCE, "str_split.py", Settings(scope="module")).findings
    lines = SOURCE.splitlines()
    reported = [i for i, s in enumerate(lines, 1) if s.endswith("# reported")]
    assert sorted(f.span.start.line for f in found) == reported, [(f.code, f.span.start.line) for f in found]
    mod = load_module(SOURCE, tmp_path, "str_split")
    broke = logged_break_lines(mod.run, torch.ones(2), path=mod.__file__)
    assert sorted(broke) == reported, broke
