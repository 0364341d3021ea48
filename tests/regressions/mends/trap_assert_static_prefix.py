# regression: [Trap] judged `assert S and T, msg` (a static S) SAFE but could not build the fix,
# so the assert stayed; once the other guard's break was mended Dynamo compiled that assert into
# an in-graph check raising RuntimeError instead of AssertionError. It now becomes
# `assert S, msg` followed by the in-graph check of T.
# inputs: [[["float32", [], [0.0]], ["float32", [], [0.0]]], [["float32", [], [1.0]], ["float32", [], [0.0]]], [["float16", [], [1.0]], ["float16", [], [0.0]]]]
# expect-text: assert x.dtype == torch.float32, "gm: bad input"
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    assert x.dtype == torch.float32 and x.sum() > 0, "gm: bad input"
    for _i in range(1):
        if not (x.sum() > 0):
            raise ValueError("gm: bad input")
    return x
