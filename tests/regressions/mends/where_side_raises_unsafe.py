# regression: the unsafe where computes both sides, so `y[0]` raised for an empty y on the path
# not taken; its reason did not say so. The reason now does ("raises on the path not taken").
# inputs: [[["float16", [], [1.4]], ["float16", [0], []]]]
# expect-reason: raises on the path not taken too
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    if torch.isfinite(x).all() and x.sum() > 0:
        x = y.float()
    else:
        x = y[0]
    return x
