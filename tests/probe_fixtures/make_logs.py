"""Regenerate logs/graph_breaks.log, a real TORCH_LOGS=graph_breaks,recompiles log of
fixpkg.models (torch 2.13), for tests/test_probe.py's import-log test:

    cd tests/probe_fixtures && TORCH_LOGS=graph_breaks,recompiles python make_logs.py 2> logs/graph_breaks.log

The second input has another rank, so Dynamo recompiles (the log then has `Recompiling` records).
"""

import torch

from fixpkg.models import probe

model, (x,) = probe()
compiled = torch.compile(model, backend="eager")
with torch.no_grad():
    compiled(x)
    compiled(x)
    compiled(torch.randn(3, 2, 8))
