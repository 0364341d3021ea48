"""GM606 (rules/one_hot.py): `one_hot(i, max(i.max() + 1, n))[..., :n]`, the `safe_one_hot` helper
of lucidrains' MoE packages, against its mend `(i.unsqueeze(-1) == arange(n)).long()`: run original
vs mended on index tensors (in range, at and beyond the width, several shapes), outputs compared
bitwise with dtype and shape; compiled with a counting backend, the mended code is one graph
under fullgraph=True and the original breaks; where one_hot raises (negative indexes) the mended
code returns zeros, which is why the fix is unsafe."""

from __future__ import annotations

import logging

import pytest
import torch

from difftest import Counter, load_module
from graphmend.analysis import analyze_source
from graphmend.findings import Applicability
from graphmend.rewrite import fix_source
from graphmend.rules import one_hot

SRC = one_hot.EXAMPLES[0].source
LOCAL = """\
import torch
import torch.nn.functional as F


def safe_one_hot(indexes, max_length):
    max_index = indexes.max() + 1
    one_hot_classes = max(max_index + 1, max_length)
    return F.one_hot(indexes, one_hot_classes)[..., :max_length]


@torch.compile
def route(scores, capacity: int):
    position = scores.argsort(dim=-1)
    return safe_one_hot(position, capacity).float() * 2
"""


def graphs(fn, *args, fullgraph=False):
    counter = Counter()
    torch._dynamo.reset()
    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
    try:
        out = torch.compile(fn, backend=counter, fullgraph=fullgraph)(*args)
    finally:
        torch._dynamo.reset()
    return out, len(counter.graphs)


def inputs():
    g = torch.Generator().manual_seed(0)
    for shape in ((2, 5), (3, 4, 6), (7,)):
        yield torch.randn(*shape, generator=g)


@pytest.mark.parametrize("src", [SRC, LOCAL], ids=["inline-max", "named-max"])
def test_mended_equals_original_and_is_one_graph(src, tmp_path):
    (f,) = analyze_source(src).findings
    assert f.code == "GM606" and f.applicability is Applicability.UNSAFE
    fixed = fix_source(src, unsafe=True)
    assert fixed.text != src and "one_hot" not in fixed.text.split("def route")[0].split("return", 1)[1]
    assert fix_source(fixed.text, unsafe=True).text == fixed.text  # idempotent
    assert analyze_source(fixed.text).findings == []
    orig = load_module(src, tmp_path, "oh_orig")
    mend = load_module(fixed.text, tmp_path, "oh_mend")
    for scores in inputs():
        for capacity in (1, 3, scores.shape[-1], scores.shape[-1] + 2):  # below, at and past the width
            a = orig.safe_one_hot(scores.argsort(dim=-1), capacity)
            b = mend.safe_one_hot(scores.argsort(dim=-1), capacity)
            assert a.dtype == b.dtype == torch.long and a.shape == b.shape and torch.equal(a, b)
            out_o, n_o = graphs(lambda s: orig.safe_one_hot(s.argsort(dim=-1), capacity).float() * 2, scores)
            out_m, n_m = graphs(lambda s: mend.safe_one_hot(s.argsort(dim=-1), capacity).float() * 2, scores,
                                fullgraph=True)
            assert torch.equal(out_o, out_m)
            assert n_m == 1 and n_o > 1


def test_where_one_hot_raises_the_mend_returns_zeros(tmp_path):
    fixed = fix_source(SRC, unsafe=True).text
    orig = load_module(SRC, tmp_path, "oh_neg_orig")
    mend = load_module(fixed, tmp_path, "oh_neg_mend")
    idx = torch.tensor([[0, -1, 2]])
    with pytest.raises(RuntimeError):
        orig.safe_one_hot(idx, 3)
    assert torch.equal(mend.safe_one_hot(idx, 3), torch.tensor([[[1, 0, 0], [0, 0, 0], [0, 0, 1]]]))


@pytest.mark.parametrize("body,why", [
    ("return F.one_hot(i, i.max() + 1)[..., :n]", "at least the width"),
    ("return F.one_hot(i, max(i.max() + 1, n))[..., 1:n]", None),
    ("n = n + 1\n    return F.one_hot(i, max(i.max() + 1, n))[..., :n]", "bound once"),
    ("return F.one_hot(i * 2, max(i.max() + 1, n))[..., :n]", "reads it twice"),
])
def test_declines_what_it_cannot_prove(body, why):
    src = f"import torch\nimport torch.nn.functional as F\n\n\n@torch.compile\ndef f(i, n: int):\n    {body}\n"
    found = analyze_source(src).findings
    if why is None:  # not the pattern: the one_hot stays a plain GM401
        assert [x.code for x in found] == ["GM401"]
        return
    (f,) = found
    assert f.code == "GM606" and f.applicability is Applicability.NONE and why in f.decline_reason
    assert fix_source(src, unsafe=True).text == src
