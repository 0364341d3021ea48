"""A small model with the graph breaks GraphMend finds in real code (run `graphmend check examples/`).

Every break here has a twin in Hugging Face transformers: a deprecation `warning_once` in a
submodule's forward, a `print` left from debugging, an fp16 overflow clamp, a validation guard,
and an `.item()` that no rewrite can remove.
"""

import logging
import warnings

import torch
from torch import nn

logger = logging.getLogger(__name__)


class Attention(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, hidden_states: torch.Tensor, use_cache: bool = True) -> torch.Tensor:
        if use_cache:
            logger.warning("`use_cache=True` is deprecated here and has no effect")
        q, k, v = self.qkv(hidden_states).chunk(3, dim=-1)
        scores = torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, dim=-1)
        return self.out(scores @ v)


class Block(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.attn = Attention(dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        if torch.isnan(hidden_states).any():
            raise ValueError("hidden states contain NaN")
        hidden_states = hidden_states + self.attn(self.norm(hidden_states))
        if hidden_states.dtype == torch.float16 and (
            torch.isinf(hidden_states).any() or torch.isnan(hidden_states).any()
        ):
            clamp_value = torch.finfo(hidden_states.dtype).max - 1000
            hidden_states = torch.clamp(hidden_states, min=-clamp_value, max=clamp_value)
        return hidden_states


class TinyModel(nn.Module):
    def __init__(self, dim: int = 16, layers: int = 2):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim) for _ in range(layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        print("TinyModel input", x.shape)
        for block in self.blocks:
            x = block(x)
        if x.abs().max() > 1e4:
            warnings.warn("activations are large", RuntimeWarning)
        return scale_by_mean(x)


def scale_by_mean(x: torch.Tensor) -> torch.Tensor:
    """Not mendable: `.item()` reads a tensor into Python (reported, with Dynamo's hint)."""
    return x / (x.abs().mean().item() + 1.0)


def probe():
    """Entry for `graphmend probe`: the module to compile and its example inputs."""
    torch.manual_seed(0)
    return TinyModel().eval(), (torch.randn(2, 5, 16),)
