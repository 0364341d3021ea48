"""A method of the class annotated to return a tensor gives one (realcode round 23, captum 0.9's
NoiseTunnel: `self._add_noise_to_input(input, stdev, n).requires_grad_()`, noise_tunnel.py:327,
GB8985: a tensor computed in the graph that starts requiring gradients). Not a method annotated
`Optional[Tensor]` or `Tensor | None`, which may give None. The reported case is run under Dynamo
(its graph-break log).
"""

from __future__ import annotations

import torch

from difftest import load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
from typing import Optional

import torch


class Tunnel:
    def _add_noise(self, x: torch.Tensor, s: float) -> torch.Tensor:
        return x + s * torch.ones_like(x)

    def _maybe(self, x: torch.Tensor) -> Optional[torch.Tensor]:
        return x

    def noisy(self, x):
        return self._add_noise(x, 0.1).requires_grad_()

    def passed(self, x):
        return self._maybe(x).requires_grad_()


tunnel = Tunnel()
'''


def test_a_method_annotated_to_return_a_tensor(tmp_path):
    fa = analyze_source(SOURCE, "annotated_methods.py", Settings(scope="module"))
    lines = SOURCE.splitlines()
    noisy = next(i for i, s in enumerate(lines, 1) if "self._add_noise(x, 0.1).requires_grad_()" in s)
    assert [(f.code, f.span.start.line) for f in fa.findings] == [("GM405", noisy)]
    mod = load_module(SOURCE, tmp_path, "annotated_methods")
    x = torch.randn(3)
    assert noisy in logged_break_lines(mod.tunnel.noisy, x, path=mod.__file__)
    # `passed` is left unreported: an Optional may be None (then `.requires_grad_()` raises); it
    # breaks here only because this one hands back a tensor (precision first)
