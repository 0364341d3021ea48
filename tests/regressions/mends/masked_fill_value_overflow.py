# regression: x.masked_fill(x > 0, 1e5) raises for float16 ("value cannot be converted to type
# c10::Half without overflow"); the SAFE where computed it on the path not taken too. A fill
# value now has to fit every dtype (|v| <= 65504, or finfo(x.dtype) of a float).
# inputs: [[["float16", [2], [-1.0, -2.0]], ["float16", [2], [1.0, 2.0]]]]
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    if x.sum() > 0:
        x = x.masked_fill(x > 0, 1e5)
    return x
