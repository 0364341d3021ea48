"""Breaks GraphMend mends ([Defer]): a logger call in forward and a print in a helper."""

import logging

import torch
from torch import nn

logger = logging.getLogger("fixpkg.mendable")


def helper(x: torch.Tensor) -> torch.Tensor:
    print("helper sees", x.shape)
    return x + 1


class Small(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.lin(x)
        logger.warning("small forward: %d rows", x.shape[0])
        x = helper(x)
        return torch.tanh(x)


def probe():
    torch.manual_seed(0)
    return Small().eval(), (torch.randn(3, 8),)
