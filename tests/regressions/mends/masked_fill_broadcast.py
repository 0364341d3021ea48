# regression: masked_fill with another tensor's mask broadcasts (x (1,), mask (3, 4) gives
# (3, 4)), yet it counted as shape-preserving: the SAFE where changed the shape on the path not
# taken. Now only a mask of x's own shape (x > 0, isnan(x), ...) keeps it SAFE.
# inputs: [[["float32", [1], [-1.0]], ["float32", [3, 4], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]]]]
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    if x.sum() > 0:
        x = x.masked_fill(y > 0, 0)
    return x
