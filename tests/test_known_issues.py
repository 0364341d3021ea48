"""Known problems of torch that mended code runs into: the workaround tested, and the torch
bug itself kept as a strict xfail that fails the day torch fixes it.

torch 2.13 CPU inductor: an ordered effectful op with NO tensor argument between two independent
computations that inductor fuses into one kernel makes the generated code free or reuse a buffer
before the fused kernel uses it (`UnboundLocalError: bufN`). A deferred message with no tensor in
it (bart's `logger.warning_once("Passing a tuple ...")`) was such an op, so bart fp16 mended did
not compile under CPU inductor (benchmarks/verify.py). The runtime's op now always takes a CPU
tensor, the one it declares written (`_ORDER`, below); inductor then schedules it as an extern
kernel on the CPU, as it does torch's own print HOP. When a torch release fixes the bug, the
strict xfail below fails.

torch 2.13 inductor: the scheduler drops the ordering edge between two ordered effectful ops
(pytorch/pytorch#188301). Two mended checks that both fail raised the second's exception, two
messages could print in the other order. The runtime's op declares one module-level tensor
written (`runtime._ORDER`), and inductor keeps two writes of one buffer in order.
"""

from __future__ import annotations

import logging
import textwrap

import pytest
import torch

from difftest import load_module, mend

SOURCE = textwrap.dedent('''
    import logging
    import torch
    from torch import nn
    logger = logging.getLogger("graphmend.known_issue")

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(64)
            self.emb = nn.Embedding(66, 64)
            self.ln2 = nn.LayerNorm(64)
            self.lin = nn.Linear(64, 64)

        def forward(self, x, ids):
            h = self.ln(self.lin(x) + x)
            logger.warning("Passing a tuple is deprecated")
            e = self.ln2(self.emb(ids) * 8.0)
            return h, e
''')


def _run(module, backend, calls=2):
    """(compiled outputs allclose to eager on every call, the records the compiled calls logged)."""
    torch.manual_seed(0)
    m = module.M().eval()
    x, ids = torch.randn(2, 8, 64), torch.randint(0, 66, (2, 8))
    torch._dynamo.reset()
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("graphmend.known_issue")
    with torch.no_grad():
        ref = m(x, ids)
        fn = torch.compile(m, backend=backend, fullgraph=True)
        logger.addHandler(handler)
        try:
            outs = [fn(x, ids) for _ in range(calls)]
        finally:
            logger.removeHandler(handler)
    close = all(torch.allclose(a, b, rtol=1e-5, atol=1e-6) for out in outs for a, b in zip(ref, out))
    return close, [r.getMessage() for r in records]


def test_the_mended_module_compiles_as_one_graph_with_aot_eager(tmp_path):
    module = load_module(mend(SOURCE), tmp_path, "known_issue")
    assert "graphmend.log(" in open(module.__file__).read()
    assert _run(module, "aot_eager") == (True, ["Passing a tuple is deprecated"] * 2)


def test_the_mended_module_compiles_as_one_graph_with_inductor(tmp_path):
    """The workaround: the message without tensors compiles under CPU inductor (fullgraph), the
    outputs match eager, and the message is logged on every compiled call."""
    module = load_module(mend(SOURCE), tmp_path, "known_issue_inductor")
    assert _run(module, "inductor") == (True, ["Passing a tuple is deprecated"] * 2)


# the same module calling, instead of the message, an ordered effectful op that takes no tensor
# (one this test defines): torch's bug, which the runtime's op no longer meets
BARE_OP = SOURCE.replace('logger.warning("Passing a tuple is deprecated")', 'OP("no tensor here")')


def _bare_op():
    from torch._higher_order_ops.effects import _EffectType, _register_effectful_op
    if not hasattr(torch.ops.graphmend_known_issue, "noop"):
        lib = torch.library.Library("graphmend_known_issue", "FRAGMENT")
        lib.define("noop(str s) -> ()", tags=(torch.Tag.nondeterministic_seeded,))
        lib.impl("noop", lambda s: None, "CompositeExplicitAutograd")
        torch.library.register_fake("graphmend_known_issue::noop", lambda s: None, lib=lib)
        _LIBRARIES.append(lib)
    op = torch.ops.graphmend_known_issue.noop.default
    _register_effectful_op(op, _EffectType.ORDERED)
    return op


_LIBRARIES = []


@pytest.mark.xfail(raises=UnboundLocalError, strict=True,
                   reason="torch 2.13 CPU inductor fuses across an ordered effectful op that has no tensor "
                          "argument and frees a buffer before the fused kernel reads it (UnboundLocalError: bufN)")
def test_torch_bug_inductor_fuses_across_an_effectful_op_without_tensors(tmp_path):
    module = load_module(BARE_OP, tmp_path, "known_issue_bare")
    module.OP = _bare_op()
    assert _run(module, "inductor", calls=1)[0]


TWO_CHECKS = textwrap.dedent('''
    import torch

    def f(x, y):
        z = x.clone()
        if not z.abs().max() > 0.5:
            raise RuntimeError("first")
        if y.sum():
            raise ZeroDivisionError("second")
        print("z", z)
        print("y", y.sum())
        return z
''')


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_mended_effects_run_in_program_order_under_every_backend(tmp_path, backend, capfd):
    """pytorch/pytorch#188301: inductor ran the second of two failing checks first. The mended
    checks raise the original's exception, and the messages print in order, in one graph."""
    mended = mend(TWO_CHECKS)
    assert mended.count("graphmend.raise_") == 2 and mended.count("graphmend.print(") == 2
    original, module = load_module(TWO_CHECKS, tmp_path, "two_checks"), load_module(mended, tmp_path, "two_checks_m")
    torch._dynamo.reset()
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        return torch._dynamo.backends.registry.lookup_backend(backend)(gm, example_inputs)
    fn = torch.compile(module.f, backend=counting, fullgraph=True)
    for x, y in [(torch.tensor(0), torch.tensor([True])), (torch.tensor(0), torch.tensor([False])),
                 (torch.tensor(1), torch.tensor([True])), (torch.tensor(1), torch.tensor([False]))]:
        outcome = []
        for run in (original.f, fn):
            try:
                out = run(x, y)
                outcome.append(("ok", out.tolist(), capfd.readouterr().out))
            except (RuntimeError, ZeroDivisionError) as e:
                outcome.append((type(e).__name__, str(e), capfd.readouterr().out))
        assert outcome[0] == outcome[1], (x, y)
    assert len(graphs) == 1
