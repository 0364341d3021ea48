# regression: [Trap] passed `a and t` (a Python bool when `a` is false) to torch.logical_not,
# a TypeError on every call (pytorch-crf's `no_empty_seq = not self.batch_first and
# mask[0].all()`); such names now go through torch.as_tensor.
# inputs: [[["float32", [3], [1.0, 2.0, 3.0]], ["float32", [3], [1.0, 1.0, 1.0]]], [["float32", [3], [-1.0, 2.0, 3.0]], ["float32", [3], [1.0, 1.0, 1.0]]], [["float32", [1], [1.0]], ["float32", [1], [-1.0]]], [["float32", [1], [1.0]], ["float32", [1], [2.0]]]]
# expect-text: torch.as_tensor(big)
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    big = x.numel() > 2 and (x > 0).all()
    small = x.numel() <= 2 and (y > 0).all()
    if not big and not small:
        raise GmError("gm: nothing positive")
    return x + y
