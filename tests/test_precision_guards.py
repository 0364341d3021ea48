"""False alarms of the transformers precision table, removed at their cause, each beside the
variant that really breaks (which must still be reported).

Every case is a small function analysed statically and run under torch.compile with a counting
backend, once per argument set: the finding must be present exactly when Dynamo breaks there.
"""

from __future__ import annotations

import logging

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


def by_site(text: str) -> dict:
    """(code, line) -> finding."""
    return {(fd.code, fd.span.start.line): fd for fd in analyze_source(text, "case.py").findings}


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


# x-transformers (x_transformers.py:3646): layer dropout draws `random()` only when the module is
# training and the rate is positive; `and` short-circuits before the call otherwise. Dynamo breaks
# (it gives up on the frame: the call is in a loop) only in training with a positive rate.
LAYERDROP = """\
from random import random

import torch


class Stack(torch.nn.Module):
    def __init__(self, layer_dropout=0.0):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.layer_dropout = layer_dropout

    def forward(self, x):
        layer_dropout = self.layer_dropout
        for _ in range(3):
            x = self.lin(x)
            if self.training and layer_dropout > 0. and random() < layer_dropout:  # drop
                continue
            x = x * 2
        return x


def plain(x):
    x = x * 2
    if random() < 2.0:  # always
        x = x + 1
    return x * 3


compiled = torch.compile(plain)
"""


def test_short_circuited_call_is_conditional_on_training(tmp_path):
    found = by_site(LAYERDROP)
    drop = found[("GM403", line_of(LAYERDROP, "# drop"))]
    assert drop.condition is not None and drop.condition.training is True
    assert "training" in drop.condition.text
    # the rate is named too: in training with rate 0 the call is short-circuited (asserted below)
    assert "`layer_dropout > 0.0`" in drop.condition.text and "value" in drop.condition.kinds
    always = found[("GM403", line_of(LAYERDROP, "# always"))]  # no condition: it always runs
    assert always.condition is None
    mod = load_module(LAYERDROP, tmp_path, "layerdrop")
    x = torch.randn(2, 4)
    torch.manual_seed(0)
    assert graphs(mod.Stack(0.5).eval(), x) == 1  # eval: short-circuited, one graph
    assert graphs(mod.Stack(0.0).train(), x) == 1  # rate 0: short-circuited
    # training with a positive rate: Dynamo gives up on the frame (no graph at all, runs eagerly)
    counter = Counter()
    torch._dynamo.reset()
    try:
        import random as rnd
        rnd.seed(0)
        torch.compile(mod.Stack(0.5).train(), backend=counter)(x)
    finally:
        torch._dynamo.reset()
    assert len(counter.graphs) != 1
    assert graphs(mod.plain, torch.randn(3)) == 2


# torchdiffeq (misses of the real-code corpus): tensors the analysis did not see as tensors.
# interp.py:38, a Google-style docstring (`t0: scalar float64 Tensor ...`); misc.py:107, the
# `.all()` of an elementwise comparison; misc.py:60/71, `norm(y).abs()` with `norm` a callable
# argument (only a tensor has `.abs()`). Dynamo breaks at each (a tensor's truth, GB0170). The
# asserts format their message, as torchdiffeq's do: with no message or a constant one, torch 2.13
# rewrites `assert <tensor>` into torch._assert and does not break (rewrite_assert_with_torch_assert).
ODE = """\
import torch


def interp(coefficients, t0, t1, t):
    \"\"\"Evaluate.

    Args:
        coefficients: list of Tensor coefficients.
        t0: scalar float64 Tensor giving the start of the interval.
        t1: scalar float64 Tensor giving the end of the interval.
        t: scalar float64 Tensor giving the desired interpolation point.
    \"\"\"
    assert (t0 <= t) & (t <= t1), 'invalid interpolation: {}, {}, {}'.format(t0, t, t1)  # doc
    return coefficients[0] * (t - t0)


def increasing(t):
    assert (t[1:] > t[:-1]).all(), '{} must be strictly increasing'.format('t')  # all
    return t


def select(y0, norm):
    scale = torch.abs(y0) + 1.0
    d0 = norm(y0 / scale).abs()
    d1 = norm(y0 * 2).abs()
    if d0 < 1e-5 or d1 < 1e-5:  # or
        return y0 * 0
    return y0 * 2


def f(x):
    t = torch.linspace(0, 1, 4) + x.sum() * 0
    return interp([x * 2], t[0], t[3], t[1]) + increasing(t).sum() + select(x, lambda v: v.pow(2).mean().sqrt())


def coeffs(coefficients, t):
    \"\"\"Args:
        coefficients: list of Tensor coefficients.
    \"\"\"
    if coefficients:  # list
        return t * 3
    return t * 2


compiled = torch.compile(f), torch.compile(coeffs)
"""


def test_torchdiffeq_tensor_conditions_are_found(tmp_path):
    got = codes(ODE)
    assert ("GM301", line_of(ODE, "# doc")) in got
    assert ("GM301", line_of(ODE, "# all")) in got
    assert ("GM201", line_of(ODE, "# or")) in got
    assert ("GM201", line_of(ODE, "# list")) not in got  # "list of Tensor" is no tensor
    mod = load_module(ODE, tmp_path, "ode")
    x = torch.randn(3)
    for fn, a in ((mod.interp, ([x * 2], torch.tensor(0.0), torch.tensor(1.0), torch.tensor(0.5))),
                  (mod.increasing, (torch.linspace(0, 1, 4),)),
                  (mod.select, (x, lambda v: v.pow(2).mean().sqrt()))):
        def g(*args, fn=fn):
            args = [a * 1 if isinstance(a, torch.Tensor) else a for a in args]  # intermediates
            return fn(*args) * 1
        assert graphs(g, *a) >= 2, fn.__name__  # a break (the formatted message may add one)
    assert graphs(mod.coeffs, [x], x) == 1


# torchdiffeq rk_common.py:236-238: `self.step_t = step_t` (a tensor), then
# `bisect.bisect(self.step_t.tolist(), ...)` in the same method. Dynamo breaks at the `.tolist()`
# of a float tensor (and again at bisect, a function it skips).
SELF_ATTR = """\
import bisect

import torch


class Solver(torch.nn.Module):
    def forward(self, t, step):
        t = t * 1
        step_t = torch.abs(step)
        self.step_t = step_t
        self.index = min(bisect.bisect(self.step_t.tolist(), t[0]), len(self.step_t) - 1)  # tolist
        return t * 2
"""


def test_tensor_stored_on_self_then_read(tmp_path):
    assert ("GM401", line_of(SELF_ATTR, "# tolist")) in codes(SELF_ATTR)
    mod = load_module(SELF_ATTR, tmp_path, "self_attr")
    assert graphs(mod.Solver(), torch.linspace(0, 1, 4), torch.tensor([0.5, 0.2])) >= 2


# An assert on a tensor that Dynamo (torch 2.13) turns into torch._assert itself: one test
# expression and no message or a constant one. `not`, `and` and a computed message still break.
ASSERTS = {
    "bare": ("assert (x > 0).all()", False),
    "constant message": ("assert (x > 0).all(), 'x must be positive'", False),
    "comparison": ("assert x.sum() > 0, 'positive sum'", False),
    "not": ("assert not (x < 0).any(), 'x must be positive'", True),
    "and": ("assert (x > 0).all() and (x < 10).all(), 'x in range'", True),
    "f-string message": ("assert (x > 0).all(), f'x must be positive, got {x.shape}'", True),
    "named message": ("assert (x > 0).all(), MSG", True),
}


@pytest.mark.parametrize("name", list(ASSERTS))
def test_gm301_on_an_assert_exactly_when_dynamo_breaks(name, tmp_path):
    stmt, breaks = ASSERTS[name]
    src = (f"import torch\n\nMSG = 'x must be positive'\n\n\n@torch.compile\ndef f(x):\n    {stmt}\n"
           "    return x + 1\n")
    reported = ("GM301", 8) in codes(src)
    mod = load_module(src.replace("@torch.compile\n", ""), tmp_path, "asserts")
    n = graphs(mod.f, torch.ones(3))
    assert (n > 1) is breaks, (name, n)
    assert reported is breaks, (name, codes(src))
    # and the check is still there when compiled: a failing input raises with the message
    torch._dynamo.reset()
    with pytest.raises((AssertionError, RuntimeError), match="positive|range|assertion error"):
        torch.compile(mod.f, backend="eager")(-torch.ones(3))
    torch._dynamo.reset()


# torchdiffeq rk_common.py:291-344: `on_step_t` is False unless a grid was given, and a tensor
# comparison when one was; `if on_step_t:` later breaks only on that path. The finding says so
# (a conditional finding, "breaks only when `len(step_t)` is nonzero"), and Dynamo agrees: one
# graph with an empty grid, a break with a grid point inside the step.
GRID = """\
import torch


def step(y: torch.Tensor, t0: torch.Tensor, dt: torch.Tensor, step_t: torch.Tensor,
         jump_t: torch.Tensor):
    on_step_t = False
    if len(step_t):
        next_t = step_t[0]
        on_step_t = (t0 < next_t) & (next_t < t0 + dt)
    on_jump_t = False
    if len(jump_t):
        next_j = jump_t[0]
        on_jump_t = (t0 < next_j) & (next_j < t0 + dt)
        if on_jump_t:  # jump
            on_step_t = False
    y = y * 2
    if on_step_t:  # grid
        y = y + 1
    return y * 3


def always(y: torch.Tensor, t0, flag: bool):
    on = False
    if flag:
        on = y.sum() > 0
    else:
        on = y.mean() > 0
    if on:  # both sides
        y = y + 1
    return y * 3


compiled = torch.compile(step), torch.compile(always)
"""


def test_branch_on_a_name_that_is_a_tensor_on_one_path_only(tmp_path):
    found = by_site(GRID)
    grid = found[("GM201", line_of(GRID, "# grid"))]
    assert grid.condition is not None and "value" in grid.condition.kinds
    assert grid.condition.text == "`len(step_t)` is nonzero"
    assert "breaks only when `len(step_t)` is nonzero" in grid.message
    jump = found[("GM201", line_of(GRID, "# jump"))]
    assert jump.condition is None  # on_jump_t was just made a tensor on this path: it always breaks
    both = found[("GM201", line_of(GRID, "# both sides"))]
    assert both.condition is None  # a tensor on either side of `if flag`
    mod = load_module(GRID, tmp_path, "grid")
    y, t0, dt = torch.randn(3), torch.tensor(0.0), torch.tensor(1.0)
    empty = torch.tensor([])
    assert graphs(mod.step, y, t0, dt, empty, empty) == 1  # the condition does not hold
    assert graphs(mod.step, y, t0, dt, torch.tensor([0.5]), empty) == 2  # it holds: a break
    assert graphs(mod.always, y, t0, True) == 2 and graphs(mod.always, y, t0, False) == 2


# st-moe-pytorch's safe_one_hot (st_moe_pytorch.py:91-94): builtin max() of a tensor and a number is
# a tensor under Dynamo (torch.clamp), so the number of classes one_hot gets is read from a tensor
# (GB0033 at the one_hot line, measured); with two Python ints it is a number and traces.
ONE_HOT = """\
import torch
import torch.nn.functional as F


def safe_one_hot(indexes, max_length):
    max_index = indexes.max() + 1
    one_hot_classes = max(max_index + 1, max_length)
    return F.one_hot(indexes, one_hot_classes)[..., :max_length].float() * 2  # tensor classes


def int_one_hot(indexes, max_length):
    one_hot_classes = max(max_length + 1, 3)
    return F.one_hot(indexes, one_hot_classes)[..., :max_length].float() * 2  # int classes


compiled = torch.compile(safe_one_hot), torch.compile(int_one_hot)
"""


def test_one_hot_sized_by_builtin_max_of_a_tensor(tmp_path):
    found = codes(ONE_HOT)
    # cut to max_length, it is GM606 (rules/one_hot.py mends it); the break is at the same line
    assert ("GM606", line_of(ONE_HOT, "# tensor classes")) in found
    assert all(line != line_of(ONE_HOT, "# int classes") for _, line in found)
    mod = load_module(ONE_HOT, tmp_path, "one_hot")
    idx = torch.tensor([0, 2, 1])
    assert graphs(mod.safe_one_hot, idx, 4) > 1
    assert graphs(mod.int_one_hot, idx, 4) == 1


# torchdiffeq rk_common.py:222-232: with no grid the step and jump times are `torch.tensor([])`,
# and `unique()` of an empty tensor has a static shape: Dynamo traces it (measured for nonzero,
# unique, masked_select, bincount, argwhere too). The finding names when it breaks.
EMPTY = """\
import torch


def check(x: torch.Tensor, step_t=None, jump_t=None):
    if step_t is None:
        step_t = torch.tensor([], dtype=x.dtype)
    else:
        step_t = step_t.to(x.dtype)
    if jump_t is None:
        jump_t = torch.tensor([], dtype=x.dtype)
    else:
        jump_t = jump_t.to(x.dtype)
    counts = torch.cat([step_t, jump_t]).unique(return_counts=True)[1]  # grids
    return x * 2 + counts.sum() * 3


def always(x: torch.Tensor, step_t=None):
    empty = torch.tensor([], dtype=x.dtype)
    grid = torch.cat([empty, x])
    return x * 2 + grid.nonzero().sum() * 3  # data


compiled = torch.compile(check), torch.compile(always)
"""


def test_dynamic_shape_op_on_a_tensor_empty_on_some_paths(tmp_path):
    found = by_site(EMPTY)
    grids = found[("GM402", line_of(EMPTY, "# grids"))]
    assert grids.condition is not None
    assert grids.condition.text == "`step_t is not None or jump_t is not None`"
    assert found[("GM402", line_of(EMPTY, "# data"))].condition is None
    mod = load_module(EMPTY, tmp_path, "empty")
    x = torch.randn(3)
    assert graphs(mod.check, x) == 1  # both empty: no break
    assert graphs(mod.check, x, torch.tensor([0.5])) == 2
    assert graphs(mod.check, x, None, torch.tensor([0.5])) == 2
    assert graphs(mod.always, x) == 2


# torchsde's BrownianInterval (brownian_interval.py:470-483): `t0 (float or Tensor)` in the
# docstring, `tol: Union[float, Tensor]` style annotations. A break that needs such a parameter to
# be a tensor says so; Dynamo agrees: floats give one graph, tensors break.
EITHER = """\
from typing import Union

import torch


def interval(x: torch.Tensor, t0, t1, tol: Union[float, torch.Tensor] = 0.0):
    \"\"\"Args:
        t0 (float or Tensor): Initial time.
        t1 (Tensor or float): Terminal time.
    \"\"\"
    x = x * 2
    if t0 > t1:  # order
        x = x + 1
    if tol < 0.0:  # tol
        x = x - 1
    return x * 3


def mixed(x: torch.Tensor, t0: Union[float, torch.Tensor]):
    x = x * 2
    if (x.sum() > t0).item():  # with a tensor
        x = x + 1
    return x * 3


compiled = torch.compile(interval), torch.compile(mixed)
"""


def test_a_break_that_needs_a_number_or_tensor_parameter_to_be_a_tensor(tmp_path):
    found = by_site(EITHER)
    order = found[("GM201", line_of(EITHER, "# order"))]
    assert order.condition is not None and order.condition.text == "`t0` or `t1` is a tensor"
    tol = found[("GM201", line_of(EITHER, "# tol"))]
    assert tol.condition is not None and tol.condition.text == "`tol` is a tensor"
    assert all(f.condition is None for (code, line), f in found.items() if line == line_of(EITHER, "# with a tensor"))
    assert any(line == line_of(EITHER, "# with a tensor") for _, line in found)
    mod = load_module(EITHER, tmp_path, "either")
    x = torch.randn(3)
    assert graphs(mod.interval, x, 0.0, 1.0, 0.1) == 1  # Python numbers: traced
    assert graphs(mod.interval, x, torch.tensor(0.0), torch.tensor(1.0), 0.1) == 2
    assert graphs(mod.interval, x, 0.0, 1.0, torch.tensor(0.1)) == 2
    assert graphs(mod.mixed, x, 0.5) == 2


# kornia's colour jitter (color_jiggle.py:95): `params: Dict[str, torch.Tensor]`, then
# `params["order"].tolist()` reads a tensor (GB0033, measured). A mapping's item is a tensor only
# where a method is called on it: XLM annotates `cache: Optional[Dict[str, torch.Tensor]]` and
# keeps an int under "slen". Items of `List[Tensor]` are tensors when iterated or indexed.
CONTAINERS = """\
from typing import Dict, List, Optional

import torch


def order_of(x: torch.Tensor, params: Dict[str, torch.Tensor]):
    x = x * 2
    order = params["order"].tolist()  # tolist
    for i in order:
        x = x * (i + 1)
    return x


def xlm(x: torch.Tensor, cache: Optional[Dict[str, torch.Tensor]] = None):
    slen = x.shape[1]
    if cache is not None:
        _slen = slen - cache["slen"]
        x = x[:, -_slen:]  # slen
    return x * 2


def each(x: torch.Tensor, ts: List[torch.Tensor]):
    for t in ts:
        if t.sum() > 0:  # items
            x = x + t
    return x * 2


compiled = torch.compile(order_of), torch.compile(xlm), torch.compile(each)
"""


def test_items_of_parameters_annotated_as_containers_of_tensors(tmp_path):
    found = codes(CONTAINERS)
    assert ("GM401", line_of(CONTAINERS, "# tolist")) in found
    assert ("GM201", line_of(CONTAINERS, "# items")) in found
    assert all(line != line_of(CONTAINERS, "# slen") for _, line in found)
    mod = load_module(CONTAINERS, tmp_path, "containers")
    x = torch.randn(2, 4)
    assert graphs(mod.order_of, x, {"order": torch.tensor([2, 0, 1])}) > 1
    assert graphs(mod.xlm, x, {"slen": 1}) == 1
    # a break inside the loop: Dynamo skips the frame (no graph at all), anything but one graph
    assert graphs(mod.each, x, [torch.ones(4), -torch.ones(4)]) != 1


# gpytorch (the realcode corpus' first run): kernel.py:340 `x1_eq_x2 = torch.equal(x1, x2)` breaks
# at the call although no branch reads it; memoize.py's `pickle.dumps(kwargs)` breaks (a skipped
# function); exact_gp.py:388 compares torch.broadcast_shapes(...), a torch.Size, with shapes;
# settings.py:44 `if torch.is_tensor(dtype): dtype = dtype.dtype` leaves a dtype, not a tensor.
GPYTORCH = """\
import pickle

import torch


def equal(x: torch.Tensor, y: torch.Tensor):
    x = x * 2
    same = torch.equal(x, y)  # equal
    return x * 3, same


def memo(x: torch.Tensor, kwargs):
    x = x * 2
    key = pickle.dumps(kwargs)  # pickle
    return x * 3, key


def shapes(x: torch.Tensor, y: torch.Tensor):
    batch_shape = x.shape[:-1]
    if batch_shape != y.shape[:-1]:
        batch_shape = torch.broadcast_shapes(batch_shape, y.shape[:-1])
    if batch_shape != y.shape[:-1]:  # shapes
        y = y.expand(*batch_shape, y.shape[-1])
    return x + y


def value(x: torch.Tensor, dtype):
    if torch.is_tensor(dtype):
        dtype = dtype.dtype
    if dtype == torch.float:  # dtype
        return x * 2
    return x * 3


compiled = torch.compile(equal), torch.compile(memo), torch.compile(shapes), torch.compile(value)
"""


def test_gpytorch_false_alarms_and_misses(tmp_path):
    found = codes(GPYTORCH)
    assert ("GM401", line_of(GPYTORCH, "# equal")) in found
    assert ("GM403", line_of(GPYTORCH, "# pickle")) in found
    assert all(line not in (line_of(GPYTORCH, "# shapes"), line_of(GPYTORCH, "# dtype")) for _, line in found)
    mod = load_module(GPYTORCH, tmp_path, "gpy")
    x = torch.randn(2, 3)
    counter = Counter()
    torch._dynamo.reset()
    try:
        torch.compile(mod.equal, backend=counter)(x, x.clone())
        assert len(counter.graphs) == 2
        counter.graphs.clear()
        torch._dynamo.reset()
        torch.compile(mod.memo, backend=counter)(x, {"a": 1})
        assert len(counter.graphs) == 2
    finally:
        torch._dynamo.reset()
    assert graphs(mod.shapes, x, torch.randn(1, 3)) == 1
    assert graphs(mod.value, x, torch.randn(2)) == 1 and graphs(mod.value, x, torch.float) == 1


# A tensor as the multiplier of a fused operator: (call, whether Dynamo breaks there), over
# `a, b` (3-vectors), `c` (positive), `m, p, q` (2x2), `bt` (a 2x2x2 batch), `v` (a 2-vector), `t`
# (a 0-dim tensor). Every entry of the analysis' tables is here; the in-place forms that trace too.
SCALAR_KWARG_CASES = [
    ("torch.add(a, b, alpha=t)", True), ("torch.sub(a, b, alpha=t)", True),
    ("torch.subtract(a, b, alpha=t)", True), ("torch.rsub(a, b, alpha=t)", True),
    ("torch.addcmul(a, b, c, value=t)", True), ("torch.addmm(m, p, q, alpha=t)", True),
    ("torch.addmm(m, p, q, beta=t)", True), ("torch.addmv(v, m, v, beta=t)", True),
    ("torch.baddbmm(bt, bt, bt, alpha=t)", True), ("torch.addbmm(m, bt, bt, alpha=t)", True),
    ("torch.addr(m, v, v, alpha=t)", True),
    ("(a * 1).add(b, alpha=t)", True), ("(a * 1).sub(b, alpha=t)", True), ("(a * 1).sub_(b, alpha=t)", True),
    ("(a * 1).addcmul(b, c, value=t)", True), ("(a * 1).addcdiv(b, c, value=t)", True),
    ("(m * 1).addmm(p, q, beta=t)", True), ("(m * 1).addmm_(p, q, alpha=t)", True),
    ("(bt * 1).baddbmm(bt, bt, alpha=t)", True),
    # traced: the in-place forms below and torch.addcdiv, and a Python number anywhere
    ("(a * 1).add_(b, alpha=t)", False), ("(a * 1).addcmul_(b, c, value=t)", False),
    ("(a * 1).addcdiv_(b, c, value=t)", False), ("torch.addcdiv(a, b, c, value=t)", False),
    ("torch.add(a, b, alpha=0.5)", False),
]


@pytest.mark.parametrize("call,breaks", SCALAR_KWARG_CASES, ids=[c for c, _ in SCALAR_KWARG_CASES])
def test_a_tensor_as_a_fused_operators_multiplier(call, breaks, tmp_path):
    """torchode's `torch.add(self.atol, ..., alpha=self.rtol)` (a buffer): GM401, declined (the
    written-out product rounds differently), exactly where Dynamo breaks."""
    from graphmend.analysis.detect import SCALAR_KWARG_FUNCS, SCALAR_KWARG_METHODS

    src = ("import torch\n\n\ndef f(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, m: torch.Tensor,\n"
           "      p: torch.Tensor, q: torch.Tensor, bt: torch.Tensor, v: torch.Tensor, t: torch.Tensor):\n"
           "    a, m, v, bt = a * 1, m * 1, v * 1, bt * 1  # a graph before the call\n"
           f"    return ({call}) * 2\n")
    from graphmend.config import Settings

    found = {(fd.code, fd.span.start.line): fd
             for fd in analyze_source(src, "case.py", settings=Settings(scope="module")).findings}
    assert (("GM401", 7) in found) is breaks, found
    if breaks:
        assert "rounds once" in found[("GM401", 7)].decline_reason
    mod = load_module(src, tmp_path, "fused")
    g = torch.Generator().manual_seed(0)
    args = [torch.randn(3, generator=g), torch.randn(3, generator=g), torch.rand(3, generator=g) + 1,
            *(torch.randn(2, 2, generator=g) for _ in range(3)), torch.randn(2, 2, 2, generator=g),
            torch.randn(2, generator=g), torch.tensor(0.5)]
    assert graphs(mod.f, *args) == (2 if breaks else 1)
    # the tables hold exactly the breaking entries measured here
    name = call.split("(")[0] if call.startswith("torch.") else call.split(").")[1].split("(")[0]
    table = SCALAR_KWARG_FUNCS if call.startswith("torch.") else SCALAR_KWARG_METHODS
    kw = call.split(", ")[-1].split("=")[0]
    assert (kw in table.get(name, ()) and "=t)" in call) is breaks


PAREN_IF = """\
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    y = y * 2
    if (
        (x < 0.1).any()
        or ~torch.isfinite(y).any()
    ):
        y = y + 1
    return y
"""


def test_a_condition_opened_by_a_parenthesis_on_the_if_line(tmp_path):
    """torchmetrics' pearson.py: `if (` on its own line, the or-chain below it. Dynamo names the
    `if` line; the finding's span starts there (and still covers the condition)."""
    from graphmend.config import Settings

    found = analyze_source(PAREN_IF, "case.py", settings=Settings(scope="module")).findings
    assert [(f.code, f.span.start.line, f.span.end.line) for f in found] == [("GM201", 6, 8)]
    mod = load_module(PAREN_IF, tmp_path, "paren_if")
    torch._dynamo.reset()
    ex = torch._dynamo.explain(mod.f)(torch.tensor([0.5, 2.0]), torch.ones(2))
    torch._dynamo.reset()
    lines = {fr.lineno for r in ex.break_reasons for fr in (r.user_stack or ())[-1:]}
    assert lines == {6}
