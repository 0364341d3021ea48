# regression: `if x.dtype == torch.float16 or x.sum() > 0:` became
# torch.logical_or(x.dtype == torch.float16, ...), a TypeError (a Python bool is no tensor);
# a Python value inside and/or/not now declines (for [Where] and [Trap] alike).
# inputs: [[["float32", [2], [1.0, 2.0]], ["float32", [2], [1.0, 2.0]]]]
# expect-decline: is not a tensor: and/or cannot combine it
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    if x.dtype == torch.float16 or x.sum() > 0:
        x = x * 2
    assert not x.is_floating_point() or (x < 1e4).all(), "gm: big"
    return x
