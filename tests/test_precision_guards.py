"""False alarms of the transformers precision table, removed at their cause, each beside the
variant that really breaks (which must still be reported).

Every case is a small function analysed statically and run under torch.compile with a counting
backend, once per argument set: the finding must be present exactly when Dynamo breaks there.
"""

from __future__ import annotations

import logging
import textwrap

import pytest
import torch

from difftest import Counter, load_module
from graphmend.analysis import analyze_source


def graphs(fn, *args) -> int:
    counter = Counter()
    torch._dynamo.reset()
    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
    try:
        out = torch.compile(fn, backend=counter)(*args)
    finally:
        torch._dynamo.reset()
    assert torch.equal(out, fn(*args))
    return len(counter.graphs)


def codes(text: str) -> list[tuple[str, int]]:
    return [(fd.code, fd.span.start.line) for fd in analyze_source(text, "case.py").findings]


# Whisper's decoder (modeling_whisper.py:1111-1119): the past length is a tensor only when
# cache_position is given, and the arange sized by it runs only when cache_position is None.
PAST_LENGTH = """\
from typing import Optional

import torch


def f(x, cache_position: Optional[torch.Tensor] = None, past_len: Optional[int] = None):
    x = x * 2
    past = 0
    if cache_position is not None:
        past = cache_position[0]
    elif past_len is not None:
        past = past_len
    if cache_position is None:
        cache_position = torch.arange(past, past + x.shape[1])  # f: int bounds
    return x + cache_position


def g(x, cache_position: Optional[torch.Tensor] = None):
    x = x * 2
    past = 0
    if cache_position is not None:
        past = cache_position[0]
    # no test on cache_position here: the tensor past length reaches the arange
    return x + torch.arange(past, past + x.shape[1])  # g: tensor bounds


def h(x, cache_position: Optional[torch.Tensor] = None):
    x = x * 2
    past = 0
    if cache_position is not None:
        past = cache_position[0]
    if cache_position is None:
        cache_position = x.sum(0)
    if cache_position is not None:  # the tensor side: the arange reads it
        return x + torch.arange(past, past + x.shape[1])  # h: tensor bounds
    return x


compiled = torch.compile(f), torch.compile(g), torch.compile(h)
"""


def line_of(text: str, marker: str) -> int:
    return next(i + 1 for i, s in enumerate(text.splitlines()) if s.endswith(marker))


def test_past_length_correlated_with_none_test(tmp_path):
    got = codes(PAST_LENGTH)
    assert ("GM401", line_of(PAST_LENGTH, "# f: int bounds")) not in got
    # the real breaks stay reported: no None test, and a test that proves the tensor side
    assert ("GM401", line_of(PAST_LENGTH, "# g: tensor bounds")) in got
    assert ("GM401", line_of(PAST_LENGTH, "# h: tensor bounds")) in got
    mod = load_module(PAST_LENGTH, tmp_path, "past_length")
    x = torch.randn(2, 4)
    # f: no break on any path (the arange only ever sees Python ints)
    assert graphs(mod.f, x) == 1
    assert graphs(mod.f, x, None, 3) == 1
    assert graphs(mod.f, x, torch.arange(1, 5)) == 1
    # g: the tensor past length is read into Python (GB0033)
    assert graphs(mod.g, x, torch.arange(1, 5)) == 2
    assert graphs(mod.h, x, torch.arange(1, 5)) == 2


# grounding-dino's get_reference_points (modeling_grounding_dino.py:1510-1513): both linspaces
# take a size read from a tensor. Dynamo breaks at the first one; the break is inside a loop, so it
# gives up on the whole frame and never traces the second (which precision.py therefore counts
# apart, "in skipped functions"). With the first gone, the second breaks: both findings are real.
LOOP = """\
import torch


def points(shapes: torch.Tensor, v):
    out = []
    for level, (height, width) in enumerate(shapes):
        a = torch.linspace(0.5, height - 0.5, height)  # first
        b = torch.linspace(0.5, width - 0.5, width)  # second
        out.append(a.sum() * v[level] + b.sum())
    return torch.stack(out)


def second_only(shapes: torch.Tensor, v):
    out = []
    for level, (height, width) in enumerate(shapes):
        b = torch.linspace(0.5, width - 0.5, width)  # alone
        out.append(b.sum() * v[level])
    return torch.stack(out)


def f(x):
    shapes = torch.as_tensor([(4, 5), (2, 3)], dtype=torch.long)
    return points(shapes, x * 2) + 1


def g(x):
    shapes = torch.as_tensor([(4, 5), (2, 3)], dtype=torch.long)
    return second_only(shapes, x * 2) + 1


compiled = torch.compile(f), torch.compile(g)
"""


def test_both_sizes_read_in_a_loop_are_reported(tmp_path):
    got = codes(LOOP)
    for marker in ("# first", "# second", "# alone"):
        assert ("GM401", line_of(LOOP, marker)) in got, marker
    mod = load_module(LOOP, tmp_path, "loop_sizes")
    x = torch.randn(2)
    skipped = []

    class Skips(logging.Handler):
        def emit(self, record):
            text = record.getMessage()
            if "frame skipped:" in text:
                skipped.append(text.split("frame skipped:", 1)[1].split("(")[0].strip())

    handler = Skips()
    torch._logging.set_logs(graph_breaks=True)
    logging.getLogger("torch._dynamo").addHandler(handler)
    try:
        assert graphs(mod.g, x) >= 2  # the second linspace alone breaks
    finally:
        logging.getLogger("torch._dynamo").removeHandler(handler)
        torch._logging.set_logs()
    assert "second_only" in skipped  # Dynamo named the frame it gave up on
