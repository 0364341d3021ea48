"""[Defer] passes any value Dynamo can hold (issue 11, item 1), through the real fix path:
pytrees of tensors / numbers / str / None / dtype / device / torch.Size, and values read from
tensors (`t.item()`, `float(t)`, `int(t)`, `bool(t)`, `t.tolist()`, tensor f-string fields,
`%`-formatting) happen at run time, on the value the tensor had at the call.

Each case: the original breaks the graph; the mended code (vendor mode) gives the same output,
log records and result as the original in eager mode, and compiles with fullgraph=True to one
graph (counted by a recording backend) with the same observations; a tensor updated in place
after the call is shown with its value at the call. What cannot be carried is declined at check
time, naming the argument.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from difftest import Counter, compiled, load_module, mend, observe
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from graphmend.findings import Applicability

MODULE = Settings(scope="module")

PRELUDE = "import logging\nimport torch\n\nlog = logging.getLogger('gm.values')\n\n"

CASES = {
    "item_in_percent_args": '''
        def f(x: torch.Tensor):
            loss = x.sum()
            log.info("loss %.4f", loss.item())
            x.add_(100)
            return loss
    ''',
    "containers": '''
        def f(x: torch.Tensor):
            log.warning("shape %s stats %s", tuple(x.shape), {"min": x.min(), "max": x.max(), "n": [x[0], 3]})
            print("meta", (x.dtype, x.device, x.shape), [x, None, "s", 1.5, True])
            x.mul_(0)
            return x
    ''',
    "scalar_reads": '''
        def f(x: torch.Tensor):
            s = x.sum()
            print("vals", float(s), int(x[0]), bool(x[1] > 0), x[:2].tolist(), s.item())
            x.add_(1)
            return s * 2
    ''',
    "fstring_fields": '''
        def f(x: torch.Tensor):
            m = x.mean()
            print(f"mean {m:.3f} first {x[0].item():>8.2f} all {x!r} n={x.shape[0]}")
            log.info(f"sum={x.sum()} {'q'}")
            x.sub_(7)
            return m
    ''',
    "percent_operator": '''
        def f(x: torch.Tensor):
            print("max %s min %.2f" % (x.max(), x.min().item()))
            log.info("text %s" % x.sum())
            x.zero_()
            return x.sum()
    ''',
    "nested_scalar_reads": '''
        def f(x: torch.Tensor):
            log.info("stats %s", {"loss": x.sum().item(), "parts": [float(x[0]), x[1].tolist()]})
            x.add_(3)
            return x
    ''',
}


def _src(body: str) -> str:
    return PRELUDE + textwrap.dedent(body)


@pytest.mark.parametrize("name", sorted(CASES))
def test_mended_call_is_one_graph_with_the_original_output(tmp_path, name):
    src = _src(CASES[name])
    found = analyze_source(src, "<string>", MODULE).findings
    fixes = [f for f in found if f.code in ("GM101", "GM102")]
    assert fixes and all(f.applicability is Applicability.SAFE for f in fixes), \
        [(f.code, f.decline_reason) for f in found]
    text = mend(src)
    assert "import _graphmend_runtime as graphmend" in text and "_gm_" not in text
    assert not [f for f in analyze_source(text, "<string>", MODULE).findings], "everything mended"
    orig, mended = load_module(src, tmp_path, name + "_o"), load_module(text, tmp_path, name + "_m")
    for x in (torch.tensor([1.5, -2.0, 4.0]), torch.tensor([0.0, 3.25, float("inf")])):
        want = observe(orig.f, x.clone())
        assert want.stdout or want.records  # the messages are there to compare
        assert observe(mended.f, x.clone()).same_as(want) == []
        torch._dynamo.reset()
        box = {}
        observe(lambda a: box.setdefault("ex", torch._dynamo.explain(orig.f)(a)), x.clone())
        assert box["ex"].break_reasons, "the premise: the original breaks"
        c_mend = Counter()
        got = observe(compiled(mended.f, c_mend, fullgraph=True), x.clone())
        assert got.same_as(want) == [], got.same_as(want)
        assert len(c_mend.graphs) == 1
    torch._dynamo.reset()


def test_explain_finds_no_break_in_the_mended_code(tmp_path):
    src = _src(CASES["scalar_reads"])
    mended = load_module(mend(src), tmp_path, "explain")
    torch._dynamo.reset()
    ex = torch._dynamo.explain(mended.f)(torch.ones(3))
    torch._dynamo.reset()
    assert ex.graph_count == 1 and ex.graph_break_count == 0, ex.break_reasons


@pytest.mark.parametrize("body,why", [
    ("print('loss', round(x.sum().item(), 2))", "`x.sum().item()` inside `round(x.sum().item(), 2)`"),
    ("print('arr', x.numpy())", "`x.numpy()` makes a NumPy array"),
    ("print('txt', str(x))", "`str(x)` makes the text of a tensor"),
    ("log.info('gen %s', [v for v in x])", "builds a ListComp"),
])
def test_what_cannot_be_carried_is_declined_naming_the_argument(body, why):
    src = PRELUDE + "def f(x: torch.Tensor):\n    " + body + "\n    return x\n"
    found = [f for f in analyze_source(src, "<string>", MODULE).findings if f.code in ("GM101", "GM102")]
    assert len(found) == 1
    assert found[0].applicability is Applicability.NONE
    assert why in found[0].decline_reason, found[0].decline_reason
    assert mend(src) == src
