# regression: a static temporary the branch computes (`lim = x.shape[0] / 2`) moved before the
# where and so ran on the path not taken too: IndexError for a 0-dim x. Now declined.
# inputs: [[["float32", [], [-1.0]], ["float32", [], [1.0]]]]
# expect-decline: computing it may raise
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    if x.dtype == torch.float32 and x.sum() > 0:
        lim = x.shape[0] / 2
        x = torch.clamp(x, min=-lim, max=lim)
    return x
