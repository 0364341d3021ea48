"""GM404 (rules/sdpa.py): `with torch.backends.cuda.sdp_kernel(...)` against its mend
`with graphmend.sdp_kernel(...)` (torch.nn.attention.sdpa_kernel of the same backends): run
original vs mended eagerly and compiled with a counting backend, for every combination of the
flags (outputs compared bitwise; where no enabled backend can run on the CPU, the same exception
and message); the original runs without a graph around the attention, the mended code is one
graph under fullgraph=True; the mended code no longer triggers torch's FutureWarning."""

from __future__ import annotations

import itertools
import logging
import warnings
from collections import namedtuple

import pytest
import torch

from difftest import Counter, load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from graphmend.findings import Applicability
from graphmend.rewrite import fix_source

SRC = """\
import torch
import torch.nn.functional as F


def attend(q, k, v, config):
    q = q * 2
    with torch.backends.cuda.sdp_kernel(**config._asdict()):
        out = F.scaled_dot_product_attention(q, k, v)
    return out + 1


def attend_flags(q, flash, math, mem):
    with torch.backends.cuda.sdp_kernel(flash, math, mem):
        return F.scaled_dot_product_attention(q, q, q) * 2
"""

Config = namedtuple("Config", ["enable_flash", "enable_math", "enable_mem_efficient"])


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sdpa")
    mended = fix_source(SRC, str(tmp / "attend.py"), Settings(scope="module")).text
    assert fix_source(mended, str(tmp / "attend.py"), Settings(scope="module")).text == mended  # idempotent
    return load_module(SRC, tmp, "sdpa_orig"), load_module(mended, tmp, "sdpa_mended"), mended


def _run(fn, *args, backend=None, fullgraph=False):
    """(output or (exception type, message), FutureWarnings seen)."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            if backend is not None:
                torch._dynamo.reset()
                fn = torch.compile(fn, backend=backend, fullgraph=fullgraph)
            out = fn(*args)
        except Exception as e:  # noqa: BLE001 - compared between original and mended
            out = (type(e), str(e))
        finally:
            torch._dynamo.reset()
    return out, [w for w in seen if issubclass(w.category, FutureWarning)]


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    return a == b


def _same_compiled(compiled, eager) -> bool:
    """A compiled run gives the eager result; an op that raises while Dynamo traces it raises
    Dynamo's TorchRuntimeError, a RuntimeError carrying the op's message (as for any op in a
    graph, mended or not)."""
    if isinstance(eager, tuple) and isinstance(compiled, tuple) and compiled[0] is not eager[0]:
        return issubclass(compiled[0], eager[0]) and eager[1] in compiled[1]
    return _same(compiled, eager)


def test_found_safe_and_one_import_line(pair):
    _, _, mended = pair
    # nothing here is compiled code by itself; under module scope both calls are found
    found = analyze_source(SRC, "attend.py", Settings(scope="module")).findings
    assert [(f.code, f.span.start.line, f.applicability) for f in found] == [
        ("GM404", 7, Applicability.SAFE), ("GM404", 13, Applicability.SAFE)]
    assert mended.count("graphmend.sdp_kernel(") == 2
    added = [ln for ln in mended.splitlines() if ln not in SRC.splitlines()]
    assert added == ["import _graphmend_runtime as graphmend",
                     "    with graphmend.sdp_kernel(**config._asdict()):",
                     "    with graphmend.sdp_kernel(flash, math, mem):"]


@pytest.mark.parametrize("flags", list(itertools.product([False, True], repeat=3)))
def test_original_and_mended_agree_and_the_mended_one_is_one_graph(pair, flags):
    orig, mended, _ = pair
    torch.manual_seed(0)
    q = torch.randn(1, 2, 4, 8)
    config = Config(*flags)
    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
    for fn_name, args in (("attend", (q, q, q, config)), ("attend_flags", (q, *flags))):
        eager_o, warned_o = _run(getattr(orig, fn_name), *args)
        eager_m, warned_m = _run(getattr(mended, fn_name), *args)
        assert _same(eager_o, eager_m), (fn_name, flags, eager_o, eager_m)
        assert warned_o and not warned_m  # torch's deprecation, gone with the deprecated call
        c_o, c_m = Counter(), Counter()
        comp_o, _ = _run(getattr(orig, fn_name), *args, backend=c_o)
        comp_m, _ = _run(getattr(mended, fn_name), *args, backend=c_m)
        assert _same(comp_o, eager_o) and _same_compiled(comp_m, eager_m), (comp_o, comp_m)
        if isinstance(eager_m, torch.Tensor):
            # the original never puts the attention in a graph; the mended code is one graph
            assert not any("scaled_dot_product_attention" in str(g.code) for g in c_o.graphs)
            assert len(c_m.graphs) == 1 and "scaled_dot_product_attention" in str(c_m.graphs[0].code)
            full, _ = _run(getattr(mended, fn_name), *args, backend=Counter(), fullgraph=True)
            assert _same(full, eager_m)
            broken, _ = _run(getattr(orig, fn_name), *args, backend=Counter(), fullgraph=True)
            assert not isinstance(broken, torch.Tensor)  # fullgraph=True refuses the original


def test_declines_an_argument_sdp_kernel_does_not_take():
    src = SRC.replace("sdp_kernel(flash, math, mem)", "sdp_kernel(flash, math, mem, True, False)")
    found = [f for f in analyze_source(src, "attend.py", Settings(scope="module")).findings if f.span.start.line == 13]
    assert found[0].applicability is Applicability.NONE
    assert "more than 4 positional arguments" in found[0].decline_reason
