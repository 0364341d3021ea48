# regression: (realcode round 7, monai inferer.py:1100) `torch.log(v) if v else w`, where `v = None`
# on the usual path: [Where] wrote torch.where((v).bool(), ...), an AttributeError on None. A truth
# test of a name that may be None is now declined, and the finding says it breaks only when `v` is a
# tensor.
# inputs: [[["float32", [1], [0.5]], ["float32", [1], [2.0]]], [["float32", [1], [-0.5]], ["float32", [1], [2.0]]]]
# expect-decline: `v` may be None here
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    if x.sum() > 0:
        v = x * 2
    else:
        v = None
    w = torch.log(y)
    out = torch.log(v) if v else w
    return out
