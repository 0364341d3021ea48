# regression: [Trap] turned `elif c: raise E(...)` into an unconditional check after the if.
# inputs: [[["float32", [2], [1.0, "nan"]], ["float32", [2], [1.0, 2.0]]]]
# expect-decline: the guard is an `elif` of another if
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    if y.sum() > 0:
        x = x + 1
    elif torch.isnan(x).any():
        raise ValueError("gm: nan")
    return x
