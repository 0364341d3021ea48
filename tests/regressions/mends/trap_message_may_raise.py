# regression: [Trap] passes the message to _graphmend_raise_if, which computes it on every call:
# `f"... {x.shape[0]}"` raised IndexError for a 0-dim x even when the guard passed. A message
# with indexing or division now declines.
# inputs: [[["float32", [], [1.0]], ["float32", [], [1.0]]]]
# expect-decline: computing it may raise
import torch


def f(x: torch.Tensor, y: torch.Tensor):
    if torch.isnan(x).any():
        raise ValueError(f"gm: rows {x.shape[0]}")
    return x
