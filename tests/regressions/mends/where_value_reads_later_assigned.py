# regression: [Where] emitted the wheres in name order: `z = x + 1; x = x / 2` became
# `x = torch.where(c, x / 2, x)` then `z = torch.where(c, x + 1, z)`, which read the new x.
# inputs: [[["float32", [3], [1.0, 2.0, 3.0]], ["float32", [3], [1.0, 1.0, 1.0]]], [["float32", [3], [-1.0, -2.0, 0.5]], ["float32", [3], [1.0, 1.0, 1.0]]]]
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    z = y * 1
    if x.sum() > 0:
        z = x + 1
        x = x / 2
    return z + x
