"""`.backward()` called on a name makes it a tensor when nothing else tells what the name holds
(realcode round 27, torchdr 0.5's AffinityMatcher: `loss = self._compute_loss()`, an overridden
method whose base returns `LOSS_DICT[...](...)`, then `loss.backward()`: GB0123 unreported).

Also when the name holds what an object of another module's class returns, which may have a
`backward` of its own (cooper's `primal_lagrangian_store = cmp_state.compute_primal_lagrangian()`,
a LagrangianStore whose `backward()` calls the tensor's): Dynamo breaks on the caller's line as
well as inside it. Not in a module where a class has a `backward` of its own, which may touch no
tensor (tests/test_tensor_callables.py, tests/test_autograd_in_graph.py keep those). Each case is
checked statically and run under Dynamo (its graph-break log).
"""

from __future__ import annotations

import pytest
import torch

import sys

from difftest import case_span
from graphmend.analysis import analyze_source
from graphmend.analysis.workspace import Workspace
from graphmend.config import Settings
from test_callers import logged_break_lines

STORE = '''\
class Store:
    def __init__(self, value):
        self.value = value

    def backward(self):
        self.value.backward()


class Holder:
    def compute(self, w, x):
        return Store((w * x).sum())
'''

SOURCE = '''\
import torch

from backward_store import Holder

LOSSES = {"square": lambda w, x: ((w * x) ** 2).sum()}


class Step(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(4))
        self.holder = Holder()

    def _compute_loss(self, x):
        return LOSSES["square"](self.w, x)

    def run(self, case: str, x: torch.Tensor, closure=None):
        if case == "method":
            loss = self._compute_loss(x)
            loss.backward()  # reported
            return x + 1
        if case == "closure":
            value = closure(self.w, x)
            value.backward()  # reported
            return x * 2
        if case == "object-method":
            store = self.holder.compute(self.w, x)
            store.backward()  # reported
            return x - 1
        return x
'''

CASES = ["method", "closure", "object-method"]


@pytest.mark.parametrize("case", CASES)
def test_backward_of_a_name(case, tmp_path, monkeypatch):
    (tmp_path / "backward_store.py").write_text(STORE)
    main = tmp_path / "backward_evidence.py"
    main.write_text(SOURCE)
    findings = analyze_source(SOURCE, str(main), Settings(scope="module"), workspace=Workspace([str(tmp_path)])).findings
    block, reported = case_span(SOURCE, case, ("if case ==", "return x\n"))
    got = [f for f in findings if f.span.start.line in block]
    assert sorted(f.span.start.line for f in got) == reported, (case, got)
    assert all(f.code == "GM403" and f.gb_id == "GB0123" for f in got)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("backward_store", "backward_evidence"):
        sys.modules.pop(name, None)
    import backward_evidence
    broke = logged_break_lines(backward_evidence.Step().run, case, torch.ones(4), lambda w, x: (w * x).sum(),
                               path=str(main))
    assert sorted(n for n in broke if n in block) == reported, (case, broke)
    if case == "object-method":  # and on the Store's own line
        store = str(tmp_path / "backward_store.py")
        inner = logged_break_lines(backward_evidence.Step().run, case, torch.ones(4), None, path=store)
        assert STORE.splitlines().index("        self.value.backward()") + 1 in inner, inner
