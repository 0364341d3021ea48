"""[Where] with the tensor read into Python in the condition (`h.mean().item() > 0.5`,
`float(t) > c`, `bool(t)`, `t.any().item()`, `int(t)`): the branch is mended as the tensor
condition it stands for, and the mended program equals the original on inputs through both
branches -- every dtype where Python's comparison and torch's differ (a scalar torch rounds to
the tensor's dtype, an int tensor against a float, a uint8 against a negative), nan, inf, empty
and zero-dim tensors -- in eager mode and compiled as ONE graph (`fullgraph=True`, a counting
backend), while the original breaks there."""

from __future__ import annotations

import pytest
import torch

from difftest import Counter, load_module, observe
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from graphmend.findings import Applicability
from graphmend.rewrite import fix_source

HEAD = "import torch\n\n\n"
VALUES = [0.1, 0.5, 1e4, 9990.0, 65504.0, 16777217.0, -1.0, 0.0, 3.0, 255.0, 257.0]
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.uint8,
          torch.int8, torch.bool]


def inputs():
    out = []
    for dt in DTYPES:
        for v in VALUES:
            try:
                out.append(torch.tensor([v], dtype=torch.float64).to(dt).reshape(()))
            except RuntimeError:
                continue
        if dt.is_floating_point:
            out += [torch.tensor(float("nan"), dtype=dt), torch.tensor(float("inf"), dtype=dt),
                    torch.tensor([], dtype=dt), torch.tensor([0.2, 0.9], dtype=dt)]
    return out


# body of f(x) -> (applicability of its GM201, text the mended code contains). The branch value
# keeps every dtype and shape (zeros_like), so any difference is the condition's.
Z = "        x = torch.zeros_like(x)\n    return x\n"
CASES = {
    "item-mean": ("    if x.mean().item() > 0.5:\n" + Z, "unsafe", "x.mean() > 0.5"),
    "item-sum-rounded": ("    if x.sum().item() > 0.1:\n" + Z, "unsafe", "x.sum().double() > 0.1"),
    "float-sum": ("    if float(x.sum()) > 9990.0:\n" + Z, "unsafe", "x.sum().double() > 9990.0"),
    "item-negative-int": ("    if x.max().item() > -1:\n" + Z, "unsafe", "x.max().double() > -1"),
    "item-int-exact": ("    if x.sum().item() >= 3:\n" + Z, "unsafe", "x.sum() >= 3"),
    "item-257": ("    if x.sum().item() > 256.0:\n" + Z, "unsafe", "x.sum().double() > 256.0"),
    "bool": ("    if bool(x.any()):\n" + Z, "unsafe", "torch.where((x.any()).bool(), "),  # uint8.any() is uint8
    "truth-item": ("    if x.sum().item():\n" + Z, "unsafe", "(x.sum()).bool()"),
    "not-item": ("    if not x.float().abs().sum().item() < 1e4:\n" + Z, "unsafe", "torch.logical_not"),
    "ifexp": ("    return torch.zeros_like(x) if x.sum().item() >= 1 else x\n", "unsafe",
              "torch.where(x.sum() >= 1, "),
    "two-reads": ("    if x.sum().item() > x.max().item():\n" + Z, "unsafe", "x.sum().double() > x.max().double()"),
    "static-prefix": ("    if x.dtype == torch.float16 and x.abs().max().item() > 1e4:\n" + Z, "unsafe",
                      "x.abs().max().double() > 10000.0"),
    "exact-scalar-safe": (
        "    if x.dtype == torch.float16 and x.abs().max().item() > 128.0:\n"
        "        x = torch.clamp(x, min=-128.0, max=128.0)\n    return x\n", "safe", "x.abs().max() > 128.0"),
    # a local read once and used only by the branch (issue 14): the read is undone, the branch mended
    "bound-flag": ("    flag = x.any().item()\n    if flag:\n" + Z, "unsafe", "    flag = x.any()\n"),
    "bound-float": ("    v = float(x.max())\n    y = x + 1\n    if v > 0.1:\n" + Z, "unsafe",
                    "torch.where(v.double() > 0.1, "),
}
DECLINED = {
    "int-truncates": ("    if int(x.sum()) > 2:\n" + Z, "truncates"),
    "short-circuit-raises": ("    if x.sum().item() > 0 and x.min().item() < 0:\n" + Z, "may raise"),
}
COMPILED = [torch.tensor(0.5), torch.tensor(1e4), torch.tensor([0.2, 0.9]), torch.tensor(3),
            torch.tensor(300, dtype=torch.int64), torch.tensor(True), torch.tensor(0.1, dtype=torch.float16)]


@pytest.fixture(autouse=True)
def _reset():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _f(body: str) -> str:
    return HEAD + "def f(x):\n" + body


@pytest.mark.parametrize("name", sorted(CASES))
def test_extraction_mended_equal_and_one_graph(name, tmp_path):
    body, applicability, want = CASES[name]
    src = _f(body)
    found = analyze_source(src, settings=Settings(scope="module")).findings
    assert [(f.code, f.applicability.value) for f in found] == [("GM201", applicability)], \
        [(f.code, f.applicability.value, f.message, f.decline_reason) for f in found]
    res = fix_source(src, settings=Settings(scope="module"), unsafe=True)
    assert [f.code for f in res.applied] == ["GM201"]
    assert want in res.text, res.text
    assert not res.remaining, [(f.code, f.message) for f in res.remaining]
    orig, mended = load_module(src, tmp_path, "o"), load_module(res.text, tmp_path, "m")
    took = set()
    for x in inputs():  # eager: every dtype, boundary values, nan, inf, empty
        want_obs = observe(orig.f, x.clone())
        got = observe(mended.f, x.clone())
        assert got.same_as(want_obs) == [], (x.dtype, x, want_obs, got)
        if want_obs.error is None:
            took.add(bool(torch.equal(want_obs.result, x)) if want_obs.result.shape == x.shape else None)
    assert took >= {True, False}, "the inputs do not go through both branches"
    # compiled: one graph per dtype/shape, nothing breaks (fullgraph), same results
    count = Counter()
    comp = torch.compile(mended.f, backend=count, fullgraph=True, dynamic=False)
    for x in COMPILED:
        want_obs = observe(orig.f, x.clone())
        got = observe(comp, x.clone())
        if want_obs.error is not None:
            assert got.error is not None, (x, want_obs, got)
            continue
        assert got.same_as(want_obs) == [], (x.dtype, x, want_obs, got)
    assert 0 < len(count.graphs) <= len(COMPILED)
    reasons = []
    for x in (torch.tensor(0.5), torch.tensor(300.0, dtype=torch.float16)):
        torch._dynamo.reset()
        reasons += torch._dynamo.explain(orig.f)(x).break_reasons
    assert reasons, "the original does not break: the test proves nothing"


@pytest.mark.parametrize("name", sorted(DECLINED))
def test_extraction_declined_says_why(name):
    body, why = DECLINED[name]
    src = _f(body)
    found = analyze_source(src, settings=Settings(scope="module")).findings
    gm201 = [f for f in found if f.code == "GM201"]
    assert gm201 and all(f.applicability is Applicability.NONE for f in gm201), found
    assert any(why in (f.decline_reason or "") for f in gm201), [f.decline_reason for f in gm201]
    assert fix_source(src, settings=Settings(scope="module"), unsafe=True).text == src


def test_guard_and_arithmetic_stay_reads():
    """A guard (`if t.item() > c: raise`) and arithmetic on the read keep their GM401: only a
    branch [Where] can take stands for the read."""
    src = _f("    if x.sum().item() * 2 > 1:\n        x = x + 1\n    if x.sum().item() > 1:\n"
             "        raise ValueError('big')\n    return x\n")
    codes = sorted(f.code for f in analyze_source(src, settings=Settings(scope="module")).findings)
    assert codes == ["GM401", "GM401"], codes


def test_bound_read_left_when_used_elsewhere_or_sizing():
    """The read stays a GM401 when the value is used again, comes from a view (a later in-place
    update would show through the undone read), or sizes a tensor -- which the finding says."""
    def codes(body):
        return sorted((f.code, f.note or "") for f in analyze_source(_f(body), settings=Settings(scope="module")).findings)
    assert codes("    flag = x.any().item()\n    if flag:\n        x = x + 1\n    return x, flag\n") == \
        [("GM401", "")]
    assert [c for c, _ in codes("    x = x.abs()\n    v = x[0].item()\n    if v > 0.5:\n        x = x + 1\n    return x\n")] == ["GM401"]
    (code, note), = codes("    n = int(x.sum().item())\n    return torch.zeros(n)\n")
    assert code == "GM401" and "sizes a tensor (`torch.zeros(n)` at line 6)" in note
    src = _f("    flag = x.any().item()\n    if flag:\n        x = torch.zeros_like(x)\n    return x\n")
    (f,) = analyze_source(src, settings=Settings(scope="module")).findings
    assert (f.code, f.span.start.line) == ("GM201", 5), "the finding sits where Dynamo breaks: the read"
