# regression: (realcode round 8, found beside botorch's prune_candidates) `if c: x = x.unsqueeze(0)`
# became torch.where(c, x.unsqueeze(0), x) (unsafe), which broadcasts to the larger rank on both
# paths. A branch that adds a dimension to the other's tensor is now declined.
# inputs: [[["float32", [2], [1.0, 2.0]], ["float32", [1], [3.0]]], [["float32", [2], [1.0, 2.0]], ["float32", [1], [-3.0]]]]
# expect-decline: the branches give tensors of different shapes
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    z = x + 1
    if y.sum() > 0:
        z = z.unsqueeze(0)
    return z
