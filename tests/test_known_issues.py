"""Known problems of torch that mended code runs into: the workaround tested, and the torch
bug itself kept as a strict xfail that fails the day torch fixes it.

torch 2.13 CPU inductor: an ordered effectful op with NO tensor argument between two independent
computations that inductor fuses into one kernel makes the generated code free or reuse a buffer
before the fused kernel uses it (`UnboundLocalError: bufN`). A deferred message with no tensor in
it (bart's `logger.warning_once("Passing a tuple ...")`) was such an op, so bart fp16 mended did
not compile under CPU inductor (benchmarks/verify.py). The runtime now passes an empty CPU tensor
to the op when a message holds none (inductor then schedules it as an extern kernel on the CPU,
as it does torch's own print HOP); the op never reads it. When a torch release fixes the bug, the
strict xfail below fails: then the workaround in graphmend/runtime.py `_emit` can go.
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


# the same module calling the op itself with no tensor: the torch bug, without the workaround
BARE_OP = SOURCE.replace(
    'logger = logging.getLogger("graphmend.known_issue")\n',
    'import graphmend.runtime as graphmend  # registers the op\n'
    'OP = getattr(torch.ops.graphmend, f"emit_v{graphmend.VERSION}").default\n').replace(
    'logger.warning("Passing a tuple is deprecated")',
    'OP("print", ["stdout", "0", "s ", "s\\n"], ["sno tensor here"], 1, [])')


@pytest.mark.xfail(raises=UnboundLocalError, strict=True,
                   reason="torch 2.13 CPU inductor fuses across an ordered effectful op that has no tensor "
                          "argument and frees a buffer before the fused kernel reads it (UnboundLocalError: bufN)")
def test_torch_bug_inductor_fuses_across_an_effectful_op_without_tensors(tmp_path):
    assert "OP(" in BARE_OP and "logger" not in BARE_OP.split("class M")[1]
    assert _run(load_module(BARE_OP, tmp_path, "known_issue_bare"), "inductor", calls=1)[0]
