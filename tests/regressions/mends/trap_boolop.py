# regression: [Trap] kept `c1 or c2` / `c1 and c2` of tensors as Python: the mended guard still
# took a tensor's truth in Python and broke the graph (2 graphs where the original had 1).
# Single-element operands now become torch.logical_or / logical_and.
# inputs: [[["float32", [0], []], ["float32", [0], []]], [["float32", [2], [1.0, 2.0]], ["float32", [2], [-5.0, 2.0]]]]
# expect-text: torch.logical_or(x.sum() > 0, y.sum() > 0)
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    if x.sum() > 0 or y.sum() > 0:
        raise ValueError("gm: positive")
    if x.sum() and x.sum():
        raise OverflowError
    return x
