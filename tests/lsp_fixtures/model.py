import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


class Block(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Größe prüfen — ünïcödé 🙂 before a break site
        print("Block input", x.shape)
        if x.isnan().any():
            raise ValueError("NaN in the input")
        if x.sum() > 0:
            y = self.proj(x)
        else:
            y = x * 2
        logger.warning("Block done")
        return y


@torch.compile
def scale(x: torch.Tensor) -> torch.Tensor:
    n = x.max().item()
    tag = "größe🙂"; print(tag, n)
    return x / n
