# regression: [Where] wrote one torch.where per assigned name, each re-evaluating the condition:
# `x = torch.where(x.max() == y.min(), x / 2, x)` then `z = torch.where(x.max() == y.min(), ...)`
# read the new x, and z took the wrong side (2.0 vs 0.0; unsafe mend, a difference its reason does
# not admit). Found by the fuzzer; now one tuple assignment.
# inputs: [[["float32", [], [-3.0]], ["int64", [1], [-3]]], [["float32", [], [1.0]], ["int64", [1], [-3]]]]
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    z = x.relu()
    if x.max() == y.min():
        x = x / 2
        z = torch.exp(z) * 2
    return z + x
