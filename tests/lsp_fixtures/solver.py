import torch
from torch import nn

import interp


class Solver(nn.Module):
    def forward(self, y0: torch.Tensor, ts: torch.Tensor) -> torch.Tensor:
        mid = (ts[0] + ts[1]) / 2
        return interp.linear_interp(ts[0], y0, ts[1], y0 * 2, mid)
