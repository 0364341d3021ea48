# regression: `x = x.type_as(y)` counted as dtype-preserving, so the where was SAFE, yet it
# promoted the int64 result of the path not taken to float32 (only `x.type_as(x)` preserves).
# inputs: [[["float32", [2], [-1.0, -2.0]], ["int64", [2], [1, 2]]], [["float32", [2], [1.0, 2.0]], ["int64", [2], [1, 2]]]]
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    if x.sum() > 0:
        x = x.type_as(y)
    return x
