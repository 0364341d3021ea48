"""[Route] GM601: expert-dispatch loops, original vs mended on inputs that route tokens to some,
none or all experts, with top-k ties, inf/nan, fp16; outputs within the stated tolerance, one FX
graph under fullgraph=True, and the precise decline reasons."""

from __future__ import annotations

import textwrap

import pytest
import torch

from difftest import Counter, compiled, load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from graphmend.findings import Applicability
from graphmend.rewrite import fix_source
from graphmend.rules import route

MENDED = [ex for ex in route.EXAMPLES if ex.fixed is not None]
# the tolerance of the rule's docstring: a few ulps of the dtype (the benchmark uses the same)
TOL = {torch.float32: (1e-5, 1e-6), torch.float16: (2e-3, 2e-3)}


def _moe_class(mod):
    classes = [v for v in vars(mod).values() if isinstance(v, type) and issubclass(v, torch.nn.Module)
               and v.__module__ == mod.__name__]
    return classes[-1]  # the MoE block is defined after its expert


def _pair(ex, tmp_path, dtype=torch.float32):
    orig = load_module(ex.source, tmp_path, "orig")
    mended_src = fix_source(ex.source, unsafe=True).text
    mended = load_module(mended_src, tmp_path, "mended")
    torch.manual_seed(0)
    a = _moe_class(orig)().eval().to(dtype)
    b = _moe_class(mended)().eval().to(dtype)
    b.load_state_dict(a.state_dict())
    return a, b


def _inputs(model, dtype, kind: str):
    torch.manual_seed(1)
    top1 = type(model).__name__ == "Top1Moe"
    shape = (2, 5, 8) if top1 else (10, 8)
    x = torch.randn(*shape).to(dtype)
    gate = model.router if top1 else model.gate
    with torch.no_grad():
        if kind == "some-experts-unused":  # every token picks experts 0 (and 1): 2 and 3 get none
            x = x.abs() + 0.1
            gate.weight.zero_()
            gate.weight[0] = 1.0
            gate.weight[1] = 0.5
            gate.weight[2:] = -1.0
        elif kind == "ties":  # equal logits for every expert: topk / argmax break ties
            gate.weight.zero_()
        elif kind == "unused-expert-overflows":  # expert 3 gets no token and overflows on all of them
            x = x.abs() + 0.1
            gate.weight.zero_()
            gate.weight[0], gate.weight[1], gate.weight[2] = 1.0, 0.5, 0.25
            gate.weight[3] = -1.0
            last = list(model.experts.values())[-1] if isinstance(model.experts, torch.nn.ModuleDict) \
                else model.experts[-1]
            for p in last.parameters():
                p.mul_(1e30 if dtype == torch.float32 else 1e4)
        elif kind == "nan-token":
            x.view(-1, 8)[3] = float("nan")
    return x


def _out(r):
    return r if isinstance(r, torch.Tensor) else r[0]


def _assert_close(a: torch.Tensor, b: torch.Tensor):
    assert a.shape == b.shape and a.dtype == b.dtype
    assert torch.equal(a.isnan(), b.isnan()), "nan in other places"
    assert torch.equal(a.isinf(), b.isinf()), "inf in other places"
    rtol, atol = TOL[a.dtype]
    torch.testing.assert_close(a, b, rtol=rtol, atol=atol, equal_nan=True)


KINDS = ["random", "some-experts-unused", "ties", "unused-expert-overflows", "nan-token"]


@pytest.mark.parametrize("ex", MENDED, ids=[e.name.split(":")[0] for e in MENDED])
@pytest.mark.parametrize("kind", KINDS)
def test_mended_matches_original(ex, kind, tmp_path):
    a, b = _pair(ex, tmp_path)
    x = _inputs(a, torch.float32, kind)
    _inputs(b, torch.float32, kind)  # the same gate/expert changes on the mended copy
    with torch.no_grad():
        want = _out(a(x))
        got = _out(b(x))
        _assert_close(want, got)
        if kind == "unused-expert-overflows":
            assert torch.isfinite(want).all() and torch.isfinite(got).all(), \
                "an unrouted expert's inf leaked into the mended output (masked by multiply, not where?)"
        if kind in ("some-experts-unused", "unused-expert-overflows"):
            # the arithmetic of the routed rows is the same here: bitwise equal
            assert torch.equal(want, got)
        counter = Counter()
        out = _out(compiled(b, counter, fullgraph=True)(x))
        assert len(counter.graphs) == 1
        _assert_close(got, out)


@pytest.mark.parametrize("ex", MENDED[:1], ids=["mixtral"])
def test_fp16(ex, tmp_path):
    a, b = _pair(ex, tmp_path, torch.float16)
    x = _inputs(a, torch.float16, "random")
    with torch.no_grad():
        _assert_close(_out(a(x)), _out(b(x)))


@pytest.mark.parametrize("ex", MENDED, ids=[e.name.split(":")[0] for e in MENDED])
def test_original_breaks(ex, tmp_path):
    """The examples are real breaks: the original is more than one graph."""
    a, _ = _pair(ex, tmp_path)
    counter = Counter()
    with torch.no_grad():
        compiled(a, counter)(_inputs(a, torch.float32, "random"))
    assert len(counter.graphs) > 1


def test_fix_is_unsafe_and_states_the_cost():
    f = [f for f in analyze_source(route.EXAMPLES[0].source).findings if f.code == "GM601"][0]
    assert f.applicability is Applicability.UNSAFE
    assert "E x K x T" in f.fix_title and "arithmetic" in f.decline_reason and "inf/nan" in f.decline_reason
    top1 = [f for f in analyze_source(route.EXAMPLES[3].source).findings if f.code == "GM601"][0]
    assert "E x T" in top1.fix_title
    assert fix_source(route.EXAMPLES[0].source).text == route.EXAMPLES[0].source  # safe fixes only


def _reasons(src: str) -> list[str]:
    return [f.decline_reason for f in analyze_source(textwrap.dedent(src)).findings if f.code == "GM601"]


HEAD = """
import torch
from torch import nn
from somewhere import ForeignExpert


class Mlp(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return self.fc(x)


class Moe(nn.Module):
    def __init__(self, d=8, num_experts=4):
        super().__init__()
        self.num_experts = num_experts
        self.experts = nn.ModuleList([Mlp(d) for _ in range(num_experts)])
        self.foreign = nn.ModuleList([ForeignExpert(d) for _ in range(num_experts)])

    def forward(self, h, weights, expert_mask):
        out = torch.zeros_like(h)
"""


@pytest.mark.parametrize("body,why", [
    ("""
        hit = (expert_mask.sum(dim=(-1, -2)) > 0).nonzero(as_tuple=True)[0].tolist()
        for e in hit:
            idx, top_x = torch.where(expert_mask[e])
            out.index_add_(0, top_x, self.experts[e](h[top_x]) * weights[top_x, idx, None])
        return out, len(hit)
""", "the hit list `hit` is also used"),
    ("""
        for e in range(self.num_experts):
            idx, top_x = torch.where(expert_mask[e])
            out.index_add_(0, top_x, self.foreign[e](h[top_x]) * weights[top_x, idx, None])
        return out
""", "cannot see what `self.foreign` holds"),
    ("""
        for e in range(self.num_experts):
            idx, top_x = torch.where(expert_mask[e])
            out.index_add_(1, top_x, self.experts[e](h[top_x]) * weights[top_x, idx, None])
        return out
""", "along a dimension other than 0"),
    ("""
        for e in range(self.num_experts):
            idx, top_x = torch.where(expert_mask[e])
            y = self.experts[e](h[top_x])
            out.index_add_(0, top_x, y * y.sum(dim=0))
        return out
""", "may act across tokens"),
    ("""
        for e in range(self.num_experts):
            idx, top_x = torch.where(expert_mask[e])
            y = self.experts[e](h[top_x]) * weights[top_x, idx, None]
            out.index_add_(0, top_x, y)
        return out, y
""", "`y`, assigned in the loop, is read after it"),
    ("""
        for e in range(self.num_experts):
            idx, top_x = torch.where(expert_mask[e])
            y = self.experts[e](h[top_x]) * weights[top_x, idx, None]
            if y.max() > 10:
                break
            out.index_add_(0, top_x, y)
        return out
""", "may act across tokens"),
])
def test_declines_with_reason(body, why):
    reasons = _reasons(HEAD + textwrap.indent(textwrap.dedent(body), "        "))
    assert reasons and all(r and why in r for r in reasons), reasons
    assert all(r.startswith("[Route] declines") for r in reasons)


TOPK_SAMPLING = """\
import torch
import torch.nn.functional as F


def sample(model, tokens: torch.Tensor, steps: int, top_k=None):
    for _ in range(steps):
        logits = model(tokens)[:, -1, :]
        if top_k is not None:
            v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
            logits[logits < v[:, [-1]]] = -float("Inf")
        probs = F.softmax(logits, dim=-1)
        tokens = torch.cat((tokens, probs.argmax(-1, keepdim=True)), dim=1)
    return tokens
"""


def test_a_masked_store_in_a_loop_is_no_expert_dispatch(tmp_path):
    """monai's top-k sampling loop (realcode round 7): `logits[logits < v[:, [-1]]] = -inf` is a
    masked store (an index_put Dynamo traces), not an expert's selection; nothing is reported,
    and Dynamo compiles the loop into one graph."""
    from test_callers import break_lines

    assert analyze_source(TOPK_SAMPLING, "sample.py", Settings(scope="module")).findings == []
    mod = load_module(TOPK_SAMPLING, tmp_path, "sample_run")
    emb = torch.nn.Embedding(8, 8)
    assert break_lines(lambda t: mod.sample(emb, t, 3, top_k=2), torch.tensor([[1, 2]]), path=mod.__file__) == set()


MASKED_COPY = """\
import torch


class Resample(torch.nn.Module):
    def forward(self, new_samples, samples, names):
        prob = torch.clamp(new_samples.log_weights - samples.log_weights, max=0.0).exp()
        idx = torch.rand(*prob.shape) <= prob
        for name in names:
            field, new_field = getattr(samples, name), getattr(new_samples, name)
            field[idx] = new_field[idx]
        return samples
"""


def test_the_same_mask_on_every_pass_is_no_expert_dispatch(tmp_path):
    """pyro's Metropolis-Hastings copy (realcode round 8): one acceptance mask, applied to each
    field a loop picks by name with getattr. It was reported as GM601 "expert dispatch"; it is a
    boolean-mask read (GM402), where Dynamo breaks."""
    from test_callers import logged_break_lines

    found = analyze_source(MASKED_COPY, str(tmp_path / "copy.py")).findings
    assert [(f.code, f.span.start.line) for f in found] == [("GM402", 10)]
    mod = load_module(MASKED_COPY, tmp_path, "copy_run")

    class S:
        def __init__(self, w):
            self.log_weights, self.a, self.b = w, w * 10, w * 100

    torch.manual_seed(0)
    new, old = S(torch.zeros(4)), S(torch.full((4,), -1.0))
    # the break is in a loop, so Dynamo skips the frame and explain() lists no break: the log does
    assert logged_break_lines(mod.Resample(), new, old, ["a", "b"], path=mod.__file__) == {10}


PARAM_MASK = """\
import torch


class Spam(torch.nn.Module):
    def forward(self, params, threshold: float):
        out = []
        for p in params:
            grad = p * 2
            sq = p * p
            mask = grad.pow(2) > (threshold * sq)
            grad[mask] = grad[mask].sign() * torch.sqrt(sq[mask] * threshold)
            out.append(grad)
        return out
"""


def test_a_masked_update_per_parameter_is_no_expert_dispatch(tmp_path):
    """pytorch-optimizer's SPAM (realcode round 11): a mask per parameter, a masked update from
    tensor methods and torch functions. No expert takes the selected values, so no dispatch:
    boolean-mask reads (GM402), where Dynamo breaks, not GM601 "expert dispatch"."""
    from test_callers import logged_break_lines

    found = analyze_source(PARAM_MASK, str(tmp_path / "spam.py")).findings
    assert {(f.code, f.span.start.line) for f in found} == {("GM402", 11)} and len(found) == 2
    mod = load_module(PARAM_MASK, tmp_path, "spam_run")
    ps = [torch.tensor([1.0, -3.0, 0.5]), torch.tensor([2.0, 0.1])]
    assert logged_break_lines(mod.Spam(), ps, 0.5, path=mod.__file__) == {11}
    # the experts' loop with its selection renamed (DBRX's `token_list = token_idx`) stays GM601
    dbrx = MASKED_DBRX
    assert {f.code for f in analyze_source(dbrx, str(tmp_path / "dbrx.py")).findings} == {"GM601"}


MASKED_DBRX = """\
import torch
from torch import nn


class Experts(nn.Module):
    def __init__(self):
        super().__init__()
        self.experts = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

    def forward(self, x, expert_mask):
        out = torch.zeros_like(x)
        for expert_idx in range(2):
            topk_idx, token_idx = torch.where(expert_mask[expert_idx])
            token_list = token_idx
            expert_tokens = x[token_list]
            out.index_add_(0, token_idx, self.experts[expert_idx](expert_tokens))
        return out
"""
