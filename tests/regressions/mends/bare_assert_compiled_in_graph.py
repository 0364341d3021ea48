# regression: (fuzz seed 6060) a bare `assert x.abs().max() > 1`, left in place, raised
# AssertionError('') eagerly and RuntimeError('assertion error') compiled: torch's in-graph
# assert, not a mend's doing; the harness knew this only for asserts with a message.
# inputs: [[["float32", [1], [-1.0]], ["float32", [1], [-1.0]]]]
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    z = x.clone()
    assert x.abs().max() > 1
    for _i in range(2):
        if not (torch.isinf(y).any()):
            raise KeyError(f"gm: {x.dtype} n={x.numel()}")
    return (x, z)
