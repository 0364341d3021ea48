# regression: [Where] took `flag = a and t` (a Python bool when `a` is false) as a tensor:
# `(flag).bool()` and torch.where need one, so it goes through torch.as_tensor.
# inputs: [[["float32", [3], [1.0, 2.0, 3.0]], ["float32", [3], [1.0, 1.0, 1.0]]], [["float32", [3], [-9.0, 2.0, 3.0]], ["float32", [3], [1.0, 1.0, 1.0]]], [["float32", [1], [1.0]], ["float32", [1], [2.0]]]]
# expect-text: torch.as_tensor(flag)
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    flag = x.numel() > 2 and x.sum() > 0
    if flag:
        y = y * 2
    return x + y
