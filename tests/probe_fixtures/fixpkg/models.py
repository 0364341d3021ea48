"""Graph breaks Dynamo reports: a print in an inlined helper, a logger call in the resume function
of `forward` (Dynamo names it torch_dynamo_resume_in_forward_at_N), a data-dependent branch."""

import logging

import torch
from torch import nn

logger = logging.getLogger("fixpkg.models")


def describe(x: torch.Tensor) -> torch.Tensor:
    print("describe", tuple(x.shape))  # BREAK:print
    return x * 2


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.lin(x)
        x = describe(x)  # CALL:describe
        logger.warning("net forward ran")  # BREAK:logger
        x = torch.relu(x)
        if x.sum() > 0:  # BREAK:branch
            x = x * 0.5
        return x


def probe():
    torch.manual_seed(0)
    return Net().eval(), (torch.randn(2, 8),)
