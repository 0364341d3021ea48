# regression: (realcode round 7, monai's `_safe_mean`) a safe [Where] with `x.sqrt()` on one side
# kept every value and made the gradient nan where the square root was not taken (0 * nan). sqrt,
# rsqrt and exp no longer make a safe where; the unsafe one says so, and the property check now
# compares gradients of safe mends too.
# inputs: [[["float32", [3], [-1.0, 0.5, -2.0]], ["float32", [1], [0.0]]], [["float32", [3], [1.0, 4.0, 9.0]], ["float32", [1], [0.0]]]]
# expect-reason: the gradient becomes nan
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    if x.dtype == torch.float32 and x.sum() > 0:
        x = x.sqrt()
    return x + y
