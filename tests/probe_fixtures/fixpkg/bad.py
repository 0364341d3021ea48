"""Entries that fail in the user's code."""

import time

import torch
from torch import nn


def build(size: int) -> nn.Module:
    if size < 0:
        raise ValueError(f"bad size {size}")  # ERROR:build
    return nn.Linear(size, size)


def boom():
    return build(-1), (torch.randn(1, 1),)


class Exploding(nn.Module):
    def forward(self, x):
        return self.missing_layer(x)  # ERROR:forward


def forward_boom():
    return Exploding(), (torch.randn(2),)


def not_a_pair():
    return 42


def hog():
    """Grows resident memory 32 MiB at a time (up to 4 GiB) so the watchdog stops it."""
    chunks = []
    for _ in range(128):
        chunks.append(b"\x01" * (32 * 2**20))
        time.sleep(0.01)
    return nn.Identity(), (torch.zeros(1),)
