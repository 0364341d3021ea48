# regression: `A if S and c else B` became torch.where(c, A, B), dropping the static S.
# inputs: [[["float32", [], [0.0]], ["float32", [], [5.0]]]]
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    z = y - 0.5
    return y + 1 if x.numel() > 2 and z.sum() != y.sum() else x + 1
