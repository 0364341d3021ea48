# regression (runtime helpers): under torch.compile a deferred message whose tensors were all
# constants (x.shape, a Python number) was emitted while Dynamo traced (fake-tensor constant
# propagation ran the op), so it appeared twice and out of order. The op is now tagged
# nondeterministic_seeded, which constant propagation never runs.
# inputs: [[["bfloat16", [], [-6.0]], ["bfloat16", [], [-6.0]]], [["float32", [0], []], ["float32", [0], []]]]
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    logger.debug("gm plain")
    logger.info("gm %s", x.shape)
    print(3.5, "gm", x.dtype, flush=True)
    return x
