# regression: [Trap] kept `0 < s < 1` (Python takes the truth of `0 < s`): the graph still broke
# after the "in-graph" check; a chained comparison of tensors now declines.
# inputs: [[["float16", [1], [10000.0]], ["float16", [1], [10000.0]]]]
# expect-decline: a chained comparison of tensors
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    if 0 < y.sum() < 1:
        raise RuntimeError
    return x
