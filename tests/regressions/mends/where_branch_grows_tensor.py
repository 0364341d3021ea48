# regression: (realcode round 8, botorch optimize_homotopy.py:49 prune_candidates) `if c: acc =
# torch.cat([acc, row])` became torch.where(c, torch.cat([acc, row]), acc) (unsafe): the branches
# have different lengths, so the where raised on a size mismatch, or broadcast a row into two, where
# the original returned the longer tensor. A branch that joins the other's tensor with more is now
# declined: its shape depends on the condition.
# inputs: [[["float32", [2], [1.0, 2.0]], ["float32", [1], [3.0]]], [["float32", [2], [1.0, 2.0]], ["float32", [1], [-3.0]]], [["float32", [1], [1.0]], ["float32", [1], [3.0]]]]
# expect-decline: the branches give tensors of different shapes
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    acc = x * 1
    if y.sum() > 0:
        acc = torch.cat([acc, y])
    return acc
