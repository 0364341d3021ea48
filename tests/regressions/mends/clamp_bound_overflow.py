# regression: clamping a float16 tensor to float32's range raises; with a float prefix the
# where was SAFE and computed the clamp on the path not taken too. Bounds now have to fit the
# dtype (literals up to 65504, or finfo(x.dtype).max - K as BART writes it).
# inputs: [[["float16", [2], [-1.0, -2.0]], ["float16", [2], [1.0, 2.0]]]]
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    if x.dtype == torch.float16 and x.sum() > 0:
        lim = torch.finfo(torch.float32).max - 1000
        x = torch.clamp(x, min=-lim, max=lim)
    return x
