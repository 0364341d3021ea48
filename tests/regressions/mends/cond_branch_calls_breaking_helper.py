# regression: (realcode round 6, torchcde's interpolation_linear.py:169) `if torch.isnan(x).any():
# x = fill(x)` became torch.cond(..., lambda: fill(x), ...), and `fill` uses masked_select: torch.cond
# traces both branches in one graph even when called eagerly, so the mended function raised on
# every call. A branch that calls code not known to trace is no longer given to torch.cond.
# inputs: [[["float32", [2, 3], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]], ["float32", [2], [0.0, 0.0]]], [["float32", [2, 3], [1.0, "nan", 3.0, 4.0, 5.0, 6.0]], ["float32", [2], [0.0, 0.0]]], [["float32", [2, 3], ["nan", "nan", "nan", "nan", "nan", "nan"]], ["float32", [2], [0.0, 0.0]]]]
# expect-decline: `fill(...)` may not trace without a graph break (`fill` breaks the graph at line
import torch


def fill(x):
    keep = x.masked_select(~torch.isnan(x))
    if keep.size(0) == 0:
        return torch.zeros_like(x)
    return torch.nan_to_num(x, nan=keep.mean().item())


def f(x: torch.Tensor, y: torch.Tensor):
    if torch.isnan(x).any():
        x = fill(x.transpose(-1, -2)).transpose(-1, -2)
    return x + y.sum()
