"""The deprecated attention-backend context (GM404), made the one Dynamo traces.

    with torch.backends.cuda.sdp_kernel(enable_flash=False):   ->   with graphmend.sdp_kernel(enable_flash=False):

`torch.backends.cuda.sdp_kernel` is a generator-based context manager that torch deprecates
(a FutureWarning on every entry); Dynamo cannot put the object it returns in a graph ("torch.* op
returned non-Tensor"), so the function that enters it runs eagerly, whole (measured, torch 2.13:
no frame compiled). lucidrains' attention modules (bs-roformer's `Attend`, and the x-transformers
family) enter it in every layer's forward. torch's own implementation of it builds a list of
backends from its four flags and enters `torch.nn.attention.sdpa_kernel(list)`, which Dynamo
traces. The runtime's `graphmend.sdp_kernel` takes the same parameters, in the same order, with
the same defaults, and returns that same `sdpa_kernel(list)`: the same backends are enabled, on
entry and on exit.

Legality: the call is `torch.backends.cuda.sdp_kernel` (or the name imported from there) with at
most four positional arguments and keywords among its parameters (a `**mapping` passes through:
`sdp_kernel(**config._asdict())`, checked by the helper as by torch). SAFE: the only difference
is torch's deprecation FutureWarning, which the mended line no longer triggers. (Where no
enabled backend can run, the mended code, compiled, raises that error while Dynamo traces it, as
Dynamo's TorchRuntimeError: a RuntimeError with the same message, as for any op in a graph.)
"""

from __future__ import annotations

import ast
from typing import Optional

from graphmend.analysis.detect import Site
from graphmend.findings import Applicability, TextEdit
from graphmend.rules.base import Context, Example, Verdict

CODES = ("GM404",)
SDP_KERNEL = ("torch.backends.cuda.sdp_kernel",)
PARAMS = ("enable_flash", "enable_math", "enable_mem_efficient", "enable_cudnn")


def message(site: Site) -> str:
    return ("`torch.backends.cuda.sdp_kernel()` (deprecated) returns a context manager Dynamo cannot "
            "trace: the function that enters it runs without torch.compile")


def _problem(call: ast.Call) -> Optional[str]:
    if any(isinstance(a, ast.Starred) for a in call.args):
        return "a `*args` argument: which flags it sets is not known"
    if len(call.args) > len(PARAMS):
        return f"more than {len(PARAMS)} positional arguments (sdp_kernel takes {', '.join(PARAMS)})"
    for k in call.keywords:
        if k.arg is not None and k.arg not in PARAMS:
            return f"`{k.arg}=` is not a parameter of sdp_kernel ({', '.join(PARAMS)})"
    return None


def judge(site: Site, ctx: Context, env) -> Verdict:
    why = _problem(site.node)
    if why:
        return Verdict.decline(why)
    return Verdict(Applicability.SAFE, "Enter torch.nn.attention.sdpa_kernel with the same backends")


def fix(site: Site, ctx: Context, env, span_of) -> Optional[list[TextEdit]]:
    if _problem(site.node) is not None:
        return None
    return [TextEdit(span_of(site.node.func), "graphmend.sdp_kernel")]


_H = "import torch\nimport torch.nn.functional as F\n"
_RT = "import _graphmend_runtime as graphmend\n"
EXAMPLES = [
    Example("GM404: an attention layer that picks its backends (bs-roformer's Attend)",
            _H + "\n\n@torch.compile\ndef attend(q, k, v, flash: bool):\n"
            "    with torch.backends.cuda.sdp_kernel(enable_flash=flash, enable_math=True):\n"
            "        return F.scaled_dot_product_attention(q, k, v)\n",
            ["GM404"],
            _H + _RT + "\n\n@torch.compile\ndef attend(q, k, v, flash: bool):\n"
            "    with graphmend.sdp_kernel(enable_flash=flash, enable_math=True):\n"
            "        return F.scaled_dot_product_attention(q, k, v)\n"),
    Example("GM404: flags from a config's named tuple",
            _H + "from torch.backends.cuda import sdp_kernel\n\n\n@torch.compile\ndef attend(q, config):\n"
            "    with sdp_kernel(**config._asdict()):\n"
            "        return F.scaled_dot_product_attention(q, q, q)\n",
            ["GM404"],
            _H + "from torch.backends.cuda import sdp_kernel\n" + _RT + "\n\n@torch.compile\ndef attend(q, config):\n"
            "    with graphmend.sdp_kernel(**config._asdict()):\n"
            "        return F.scaled_dot_product_attention(q, q, q)\n"),
    Example("GM404 declined: an argument sdp_kernel does not take",
            _H + "\n\n@torch.compile\ndef attend(q):\n"
            "    with torch.backends.cuda.sdp_kernel(enable_flash=True, backend=None):\n"
            "        return F.scaled_dot_product_attention(q, q, q)\n",
            ["GM404"], None),
]
