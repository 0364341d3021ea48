# regression: [Where] mended an `elif` as if it stood alone, detaching it from its chain
# (it ran after the if, unconditionally); the elif now declines.
# inputs: [[["float32", [2], [1.0, 2.0]], ["float32", [2], [1.0, 2.0]]]]
# expect-decline: is an `elif` of another if
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    if x.sum() > 0:
        x = x + 1
    elif x.sum() < -5:
        x = x - 1
    else:
        x = x * 2
    return x
