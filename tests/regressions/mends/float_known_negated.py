# regression: a static `x.dtype != torch.float16` (or `not x.is_floating_point()`) prefix was
# read as proving x a float (the text mentions x.dtype and float16), so `x.exp()` counted as
# dtype-preserving: the SAFE where turned an int64 result into float32.
# inputs: [[["int64", [2], [-3, 1]], ["int64", [2], [1, 2]]], [["int64", [2], [3, 1]], ["int64", [2], [1, 2]]]]
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    if x.dtype != torch.float16 and x.sum() > 0:
        x = x.exp()
    z = y.clone()
    if not z.is_floating_point() and z.sum() > 0:
        z = z.sqrt()
    return x, z
