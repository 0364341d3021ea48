from torch import nn

from helpers import log_shape


class Pipeline(nn.Module):
    def forward(self, x):
        return log_shape(x) * 2
