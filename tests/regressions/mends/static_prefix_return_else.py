# regression: `if S and c: return A` + `else: return B` became `if S: return where(c, A, B)`,
# dropping the else: with S false the function fell through and returned None.
# inputs: [[["float32", [], [1.0]], ["float32", [], [1.0]]], [["float32", [2], [1.0, 2.0]], ["float32", [2], [1.0, 2.0]]]]
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    if x.dim() > 0 and x.sum() > 0:
        return x * 2
    else:
        return x - 1
