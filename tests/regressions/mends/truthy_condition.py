# regression: `if x.sum():` became torch.where(x.sum(), ...), which raises (the condition of
# torch.where must be a bool tensor); it is now passed as `(x.sum()).bool()`.
# inputs: [[["float32", [2], [1.0, 2.0]], ["float32", [2], [1.0, 2.0]]], [["int64", [3], [0, 0, 0]], ["int64", [3], [0, 0, 0]]]]
# expect-text: (x.sum()).bool()
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    if x.sum():
        x = x * 2
    return x
