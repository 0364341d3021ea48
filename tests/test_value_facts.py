"""What the walk knows of values beyond a name's kind, each case from real code and checked
against Dynamo: the fields of a module's named tuples (torchdiffeq), what `zip` over tensors
gives, a name rebound to a boolean mask (torch_geometric), a star-imported helper's tensor and
a mask held in an attribute (nnAudio)."""

from __future__ import annotations

import torch

from difftest import load_module
from graphmend import scan
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import break_lines, logged_break_lines, sites


TABLEAU = """\
import collections

import torch

_Tableau = collections.namedtuple("_Tableau", "alpha, beta, c_sol")
_Plain = collections.namedtuple("_Plain", "alpha, beta")


def rk_step(y0, dt, tableau):
    \"\"\"One step.
    Args:
        y0: Tensor initial value.
        tableau: _Tableau describing the step.
    \"\"\"
    k = [y0]
    for i, (alpha_i, beta_i) in enumerate(zip(tableau.alpha, tableau.beta)):
        if alpha_i == 1.:
            k.append(k[-1] * 2)
        else:
            k.append(k[-1] + alpha_i * dt * beta_i.sum())
    return k[-1]


def finish(y, tableau: "_Tableau"):
    if tableau.c_sol[-1] == 0:
        return y * tableau.c_sol[0]
    return y


def plain_step(y0, plain: _Plain):
    for a, b in zip(plain.alpha, plain.beta):
        if a == 1.:
            y0 = y0 * b
    return y0


_TAB = _Tableau(alpha=torch.tensor([0.5, 1.0], dtype=torch.float64),
                beta=[torch.tensor([0.5], dtype=torch.float64), torch.tensor([0.25, 0.25], dtype=torch.float64)],
                c_sol=torch.tensor([0.5, 0.0], dtype=torch.float64))


class Solver(torch.nn.Module):
    def forward(self, y0: torch.Tensor) -> torch.Tensor:
        dtype = y0.dtype
        tab = _Tableau(alpha=_TAB.alpha.to(dtype=dtype), beta=[b.to(dtype=dtype) for b in _TAB.beta],
                       c_sol=_TAB.c_sol.to(dtype=dtype))
        y = finish(rk_step(y0, 0.1, tableau=tab), tab)
        return plain_step(y, _Plain(alpha=[0.5, 1.0], beta=[2.0, 3.0]))
"""


def test_the_fields_of_a_named_tuple_built_with_tensors(tmp_path):
    """torchdiffeq's `_ButcherTableau`: a collections.namedtuple built with torch.tensor and with
    `.to(...)` results (and lists of them) inside the compiled call, passed to a step function that documents `tableau: _ButcherTableau` (and to one that
    annotates it); its
    fields are tensors, `zip` over them gives tensors, and `if tableau.c_sol[-1] == 0:` and
    `if alpha_i == 1.:` break. A tuple built with Python numbers gives no finding."""
    found = analyze_source(TABLEAU, "tableau.py").findings
    assert sites(found) == {("GM201", 17), ("GM201", 25)}
    mod = load_module(TABLEAU, tmp_path, "tableau_run")
    assert break_lines(mod.Solver(), torch.ones(3), path=mod.__file__) == {17, 25}



REBOUND_MASK = """\
import torch


def filter_adj(edge_index: torch.Tensor, node_index: torch.Tensor, num_nodes: int):
    mask = node_index.new_full((num_nodes,), -1)
    mask[node_index] = torch.arange(node_index.size(0))
    row, col = edge_index[0], edge_index[1]
    row, col = mask[row], mask[col]
    mask = (row >= 0) & (col >= 0)
    row = row[mask]
    if num_nodes > 2:
        keep = row > 0
    return torch.stack([row, col[mask]], dim=0)


def inner_block(x: torch.Tensor, flag: bool):
    m = x.long()
    if flag:
        m = x > 0
    return x[m]
"""


def test_a_name_rebound_to_a_boolean_mask(tmp_path):
    """torch_geometric's filter_adj: `mask` is first an index tensor (`mask[row]` gathers, no
    break), then rebound to `(row >= 0) & (col >= 0)`; `row[mask]` and `col[mask]` read a
    data-dependent number of entries. A mask bound in an inner block only is not one after it
    (`x[m]` may gather with the long tensor)."""
    found = analyze_source(REBOUND_MASK, "filt.py", Settings(scope="module")).findings
    assert sites(found) == {("GM402", 10), ("GM402", 13)}
    mod = load_module(REBOUND_MASK, tmp_path, "filt_run")
    edges, nodes = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]]), torch.tensor([0, 2])
    assert break_lines(mod.filter_adj, edges, nodes, 4, path=mod.__file__) == {10, 13}


STAR_UTILS = """\
from torch.nn.functional import relu


def window_sumsquare(w):
    return relu(w) ** 2
"""

STAR_STFT = """\
import torch
from .utils import *


class Inverse(torch.nn.Module):
    def forward(self, X, refresh_win=True):
        real = X * 2
        if hasattr(self, "w_sum") == False or refresh_win == True:
            self.w_sum = window_sumsquare(X[0]).flatten()
            self.nonzero = self.w_sum > 1e-10
        else:
            pass
        real[:, self.nonzero] = real[:, self.nonzero].div(self.w_sum[self.nonzero])
        return real
"""


def test_a_star_imported_helper_and_a_mask_held_in_an_attribute(tmp_path, monkeypatch):
    """nnAudio's inverse STFT: `window_sumsquare` comes from `from .utils import *` and returns
    a tensor; `self.nonzero`, which the class only ever sets to a comparison, masks `real` (its
    reads break; the store with the mask is an index_put Dynamo traces)."""
    pkg = tmp_path / "audiopkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "utils.py").write_text(STAR_UTILS)
    (pkg / "stft.py").write_text(STAR_STFT)
    res = scan.check_files([str(pkg / "stft.py")], Settings(), jobs=1)[0]
    assert sites(res.findings) == {("GM402", 13)}
    assert len(res.findings) == 2  # real[:, self.nonzero] and self.w_sum[self.nonzero]
    monkeypatch.syspath_prepend(str(tmp_path))
    from audiopkg.stft import Inverse
    x = torch.tensor([[0.5, -1.0, 2.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    assert break_lines(Inverse(), x, path=str(pkg / "stft.py")) == {13}


TUPLE_OF_LISTS = """\
import torch
from torch import nn


class Rope(nn.Module):
    def forward(self, x):
        lengths = [x.shape[1] - 1, x.shape[1]]
        return x * 2, [1, 0], lengths


class Joint(nn.Module):
    def __init__(self):
        super().__init__()
        self.rope = Rope()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x, starts, lengths = self.rope(x)
        out = x.new_zeros(x.shape)
        for i, (start, length) in enumerate(zip(starts, lengths)):
            out[i, start:length] = x[i, start:length]
        for length in lengths:
            out = out[:, :length]
        return out
"""


def test_the_items_of_a_modules_tuple_may_be_lists(tmp_path):
    """diffusers' Lumina2: the rope embedder returns lists of ints among its tensors; zipping or
    iterating them gives Python ints, and slicing with them does not break."""
    assert analyze_source(TUPLE_OF_LISTS, "joint.py").findings == []
    mod = load_module(TUPLE_OF_LISTS, tmp_path, "joint_run")
    assert break_lines(mod.Joint(), torch.ones(2, 3), path=mod.__file__) == set()


NUMPY_ONLY = """\
import numpy as np


class ExtractStains:
    def __call__(self, image):
        image = image.reshape((-1, 3)).astype(np.float32) + 1.0
        if image.min() < 0:
            raise ValueError("negative")
        return image
"""

NUMPY_ANNOTATED = """\
import numpy as np
import torch


def check(image: np.ndarray, x: torch.Tensor):
    if image.min() < 0:
        raise ValueError("negative")
    if x.min() < 0:
        raise ValueError("negative")
    return image
"""


def test_numpy_arrays_are_not_tensors():
    """monai's stain normalizer (realcode round 7): `image.min() < 0` on an array in a module that
    imports no torch, or on a parameter annotated `np.ndarray`, is numpy's; it used to be taken for
    a tensor (a `.min()`/`.reshape()` call was evidence) and mended with graphmend.raise_if."""
    assert analyze_source(NUMPY_ONLY, "stain.py", Settings(scope="module")).findings == []
    assert sites(analyze_source(NUMPY_ANNOTATED, "check.py", Settings(scope="module")).findings) == {("GM301", 8)}


STORE_THEN_READ = """\
import torch
from torch import nn


class Tanh(nn.Module):
    def __init__(self, cut_point=1.0):
        super().__init__()
        self.cut_point = cut_point

    def forward(self, inputs, context=None):
        mask_right = inputs > self.cut_point
        mask_left = inputs < -self.cut_point
        mask_middle = ~(mask_right | mask_left)
        outputs = torch.zeros_like(inputs)
        outputs[mask_middle] = torch.tanh(inputs[mask_middle])
        outputs[mask_right] = torch.log(inputs[mask_right])
        return outputs
"""


def test_a_store_through_a_mask_keeps_it_a_mask():
    """nflows' tanh transform: `outputs[mask_middle] = torch.tanh(inputs[mask_middle])` stores
    through the mask without rebinding it; `inputs`, which the walk does not know, is read through
    masks built from comparisons of itself on both lines (a check of this stop's speed-up had lost
    them: the store counted as rebinding the mask)."""
    found = analyze_source(STORE_THEN_READ, "tanh.py").findings
    assert sites(found) == {("GM402", 15), ("GM402", 16)}


# realcode round 8 (pyro, linear_operator, botorch): Python values the walk took for tensors
PYTHON_VALUES = """\
from typing import Mapping, Optional

import torch
from torch import Tensor


def einsum(equation, x):
    inputs, output = equation.split("->")
    if inputs == output:
        return x
    return x + 1


def getitem_size(x, indices):
    shape = []
    for size, idx in zip(x.shape, indices):
        if isinstance(idx, slice):
            if idx == slice(None, None, None):
                shape.append(size)
        elif torch.is_tensor(idx):
            shape.append(idx.numel())
    return x.reshape(-1)[: len(shape)]


def batch_shapes(x, sites):
    total = 1
    for site in sites:
        batch = list(site["shape"])
        while batch and batch[0] == 1:
            batch = batch[1:]
        batch = torch.Size(batch)
        total = total * batch.numel()
    return x * total


def gen(x: Tensor, fixed: Optional[Mapping[int, float | Tensor]] = None, t0: float | Tensor = 0.0):
    if fixed:
        x = x + 1
    if t0 > 0:
        x = x * 2
    return x
"""


def test_python_values_that_look_like_tensors(tmp_path):
    """`equation.split("->")` is str.split (a tensor's split takes sizes); `isinstance(idx, slice)`
    proves a slice in its body (a later `torch.is_tensor(idx)` branch does not reach it);
    `batch = list(...)` is a list, though the name later holds a torch.Size whose `.numel()`
    looks like a tensor's; `Mapping[int, float | Tensor]` is a mapping, not a number-or-tensor.
    None of them breaks under Dynamo; the one left (`t0: float | Tensor`) breaks when it is a
    tensor and says so."""
    found = analyze_source(PYTHON_VALUES, "values.py", Settings(scope="module")).findings
    assert sites(found) == {("GM201", 39)}
    assert "breaks only when `t0` is a tensor" in next(f.message for f in found)
    mod = load_module(PYTHON_VALUES, tmp_path, "values_run")
    x = torch.ones(2, 3)
    assert break_lines(mod.einsum, "ab->ab", x, path=mod.__file__) == set()
    assert break_lines(mod.getitem_size, x, (slice(None), torch.tensor([0, 1])), path=mod.__file__) == set()
    assert break_lines(mod.batch_shapes, x, [{"shape": (1, 2)}, {"shape": (3,)}], path=mod.__file__) == set()
    assert break_lines(mod.gen, x, {0: 1.0}, 1.0, path=mod.__file__) == set()
    assert break_lines(mod.gen, x, {0: 1.0}, torch.tensor(1.0), path=mod.__file__) == {39}
    # a tensor beside numbers at the union's top level still may be one (kornia's gaussian blur)
    sigma = ("from typing import Tuple, Union\nimport torch\n\n\n"
             "def blur(x, sigma: Union[Tuple[float, float], torch.Tensor] = (0.1, 2.0)):\n"
             "    if sigma[1] < sigma[0]:\n        x = x * 2\n    return x\n")
    found = analyze_source(sigma, "blur.py", Settings(scope="module")).findings
    assert [(f.code, f.span.start.line) for f in found] == [("GM201", 6)]
    assert "breaks only when `sigma` is a tensor" in found[0].message


OPTIMIZER = """\
import torch


class Prodigyish(torch.optim.Optimizer):
    def __init__(self, params, lr=1.0):
        super().__init__(params, dict(lr=lr))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "p0" not in state:
                    if p.any():
                        state["p0"] = p.flatten().clone()
                    else:
                        state["p0"] = torch.tensor(0.0)
                p.add_(p.grad, alpha=-group["lr"])
"""


def test_an_optimizers_parameters_are_tensors(tmp_path):
    """prodigyopt (realcode round 8): `for p in group['params']` over `self.param_groups` of a
    torch.optim.Optimizer gives its parameters; `if p.any():` branches on one. The attribute
    was taken for a static value, so nothing was reported; Dynamo breaks there."""
    found = analyze_source(OPTIMIZER, "opt.py", Settings(scope="module")).findings
    assert sites(found) == {("GM201", 16)}
    mod = load_module(OPTIMIZER, tmp_path, "opt_run")
    w = torch.nn.Parameter(torch.ones(3))
    w.grad = torch.ones(3)
    opt = mod.Prodigyish([w])
    assert logged_break_lines(opt.step, path=mod.__file__) == {16}  # in a loop: explain() sees none


ROUND9_BASE = """\
import torch


class Distribution(torch.nn.Module):
    def __init__(self, inertia, frozen):
        super().__init__()
        self.register_buffer("inertia", torch.tensor(inertia))
        self.register_buffer("frozen", torch.tensor(frozen))
"""

ROUND9_NORMAL = """\
import numpy
import torch

from r9pkg.base import Distribution

vector = (numpy.ndarray, torch.Tensor, torch.nn.Parameter)


def _update(value, new_value, inertia=0.0):
    if inertia == 0.0:
        value[:] = new_value
    else:
        value[:] = inertia * value + (1 - inertia) * new_value


def _check(parameter, min_value):
    if isinstance(parameter, vector):
        return parameter
    else:
        if parameter < min_value:
            raise ValueError("below")
    return parameter


class Normal(Distribution):
    def __init__(self):
        super().__init__(0.0, False)
        self.means = torch.nn.Parameter(torch.zeros(3), requires_grad=False)

    def forward(self, x: torch.Tensor):
        _check(x, 0.0)
        if self.frozen == True:
            return x
        threads = torch.get_num_threads()
        steps = torch.arange(1, threads + 1)
        _update(self.means, x.mean(0), self.inertia)
        scale = torch.from_numpy(x.detach().cpu().numpy()) * 2
        return x - self.means + scale + steps.sum()
"""


def test_buffers_of_a_base_and_python_values_of_round_9(tmp_path, monkeypatch):
    """pomegranate (realcode round 9): `frozen` and `inertia` are buffers its base class
    registers in another module, so `self.frozen == True` and `inertia == 0.0` (a caller passes
    `self.inertia`) read tensors; Dynamo breaks at both. Not breaks, and not reported: the else
    side of `isinstance(parameter, vector)` with `vector` a tuple holding torch.Tensor,
    `torch.get_num_threads()` (an int), and `.numpy()`, which Dynamo traces (deepxde,
    torchkbnufft). The same findings with the base read from the editor's definitions index."""
    from graphmend.analysis.definitions import DefinitionsIndex
    from graphmend.analysis.workspace import Workspace
    from test_callers import _write_package

    pkg, files = _write_package(tmp_path / "r9pkg", {"base.py": ROUND9_BASE, "normal.py": ROUND9_NORMAL})
    expected = {("GM201", 10), ("GM201", 32)}

    def found(index=None):
        ws = Workspace([str(tmp_path)])
        ws.definitions = index
        return sites(analyze_source(ROUND9_NORMAL, files[1], workspace=ws).findings)

    assert found() == expected
    index = DefinitionsIndex(str(tmp_path / "cache" / "defs.pickle"), "fp")
    assert found(index) == expected
    index.save()
    assert found(DefinitionsIndex(str(tmp_path / "cache" / "defs.pickle"), "fp")) == expected
    # the tuple bound in the function itself, as pomegranate's _check_parameter does
    local = ("import numpy\nimport torch\n\n\ndef _check(parameter, min_value):\n"
             "    vector = (numpy.ndarray, torch.Tensor)\n    if isinstance(parameter, vector):\n"
             "        return parameter\n    else:\n        if parameter < min_value:\n"
             "            raise ValueError('below')\n    return parameter\n\n\n"
             "class M(torch.nn.Module):\n    def forward(self, x: torch.Tensor):\n"
             "        _check(x, 0.0)\n        return x\n")
    assert analyze_source(local, str(tmp_path / "local.py")).findings == []
    monkeypatch.syspath_prepend(str(tmp_path))
    from r9pkg.normal import Normal
    assert break_lines(Normal(), torch.ones(2, 3), path=str(pkg / "normal.py")) == {10, 32}


# realcode round 10 (POT): a jump on a tensor outside a condition, and a number proven by `or`
ROUND10 = """\
from typing import Optional, Tuple

import torch


def plans(x, a, b):
    n, m = a.shape[0], b.shape[0]
    is_perm = (n == m) and (a == a.sum() / n).all() and (b > 0).all()
    y = x * 2
    if is_perm:
        y = y + 1
    return y


def maximum(a, b):
    if isinstance(b, int) or isinstance(b, float):
        b = torch.tensor([float(b)], dtype=a.dtype, device=a.device)
    return torch.maximum(a, b * a.sum() / a.sum())


def sized(x, size: Optional[Tuple[int, int]] = None):
    size = size or (x.size(0), x.size(1))
    return x.reshape(size)


def decay(step: torch.Tensor):
    epoch = (step - 1).clamp(min=0.0)
    if epoch.item() <= 0:
        return 0.0
    return 1 - 1 / (1 + epoch)
"""


def test_truth_of_an_operand_and_numbers_an_or_proves(tmp_path):
    """`(n == m) and (a == ...).all() and ...` takes the truth of the second operand (a tensor)
    outside any condition: Dynamo breaks on that line, and on the `if` that reads it. In
    `maximum`, `isinstance(b, int) or isinstance(b, float)` proves b a number in its body, so
    `float(b)` reads no tensor (b's `.dtype` elsewhere made it one). `size or (...)` defaults an
    optional argument: not reported. `if epoch.item() <= 0:` declines saying what `.item()` does."""
    found = analyze_source(ROUND10, "round10.py", Settings(scope="module")).findings
    assert sites(found) == {("GM201", 8), ("GM201", 10), ("GM201", 28)}
    item = next(f for f in found if f.span.start.line == 28)  # ema-pytorch's decay: why, in its words
    assert item.decline_reason.startswith("`.item()` raises when the tensor holds several elements")
    op = next(f for f in found if f.span.start.line == 8)
    assert op.message.startswith("`and` takes the truth of a tensor value") and not op.fixable
    assert "outside a condition" in op.decline_reason
    mod = load_module(ROUND10, tmp_path, "round10_run")
    x, a = torch.ones(3), torch.full((3,), 0.5)
    assert break_lines(mod.plans, x, a, a, path=mod.__file__) == {8, 10}
    assert break_lines(mod.maximum, a, 0, path=mod.__file__) == set()
    assert break_lines(mod.sized, torch.ones(2, 3), None, path=mod.__file__) == set()


# realcode round 10 (POT): every array comes from a backend namespace that mirrors torch, from
# another module (the walk cannot see what `get_backend` returns)
POT_BACKEND = """\
import torch


class TorchBackend:
    def ones(self, n, type_as=None):
        return torch.ones(n, dtype=type_as.dtype)

    def any(self, a):
        return torch.any(a)

    def isnan(self, a):
        return torch.isnan(a)

    def exp(self, a):
        return torch.exp(a)

    def dot(self, a, b):
        return a @ b


def get_backend(*arrays):
    return TorchBackend()
"""
POT_SOLVER = """\
import torch  # noqa: F401 - the mend would need it

from .backend import get_backend


def sinkhorn(a, b, M, reg):
    nx = get_backend(M, a, b)
    K = nx.exp(M / (-reg))
    u = nx.ones(a.shape[0], type_as=M) / a.shape[0]
    for _ in range(3):
        v = b / nx.dot(K.T, u)
        u = a / nx.dot(K, v)
        if nx.any(nx.isnan(u)):
            break
    if (u < 0).any():
        u = u * 0
    return u
"""


def test_arrays_of_a_backend_namespace(tmp_path, monkeypatch):
    """`nx = get_backend(M, a, b)` (POT; the array API's `array_namespace`): its functions mirror
    torch's, so `nx.any(nx.isnan(u))` is a jump on a tensor under torch.compile (Dynamo breaks
    there), and so is `(u < 0).any()`; in POT, where `get_backend` dispatches on types, the walk
    saw no tensor at all. A mend declines: the arrays may be numpy's, which torch.where does not take."""
    from test_callers import _write_package

    pkg, files = _write_package(tmp_path / "potlike", {"backend.py": POT_BACKEND, "solver.py": POT_SOLVER})
    found = analyze_source(POT_SOLVER, files[1], Settings(scope="module")).findings
    assert sites(found) == {("GM201", 13), ("GM201", 15)}
    where = next(f for f in found if f.span.start.line == 15)
    assert not where.fixable and where.decline_reason.startswith("`nx` is an array backend")
    monkeypatch.syspath_prepend(str(tmp_path))
    from potlike.solver import sinkhorn
    a = torch.full((3,), 1 / 3)
    assert logged_break_lines(sinkhorn, a, a, torch.rand(3, 3) + 0.1, 1.0, path=str(pkg / "solver.py")) == {13}


ROUND11 = """\
import torch


def scale(grads: list, c: torch.Tensor):
    if isinstance(c, torch.Tensor):
        c = c.reshape(())
    if isinstance(c, torch.Tensor) or c != 1.0:
        torch._foreach_mul_(grads, c)
    if not isinstance(c, torch.Tensor) and c > 2.0:
        grads = [g * 2 for g in grads]
    return grads
"""


def test_operands_an_isinstance_before_them_narrows(tmp_path):
    """pytorch-optimizer's Adan (realcode round 11): `isinstance(c, torch.Tensor) or c != 1.0`
    compares only a Python number (the `or` stops at a tensor), so does the right side of
    `not isinstance(c, torch.Tensor) and c > 2.0`. No break under Dynamo, for a tensor or a float."""
    assert analyze_source(ROUND11, "round11.py", Settings(scope="module")).findings == []
    mod = load_module(ROUND11, tmp_path, "round11_run")
    for c in (torch.tensor(0.5), 0.5, 1.0, 3.0):
        assert break_lines(mod.scale, [torch.ones(2), torch.ones(3)], c, path=mod.__file__) == set(), c
    # without the isinstance, the comparison of a tensor is a jump on its value
    bare = ROUND11.replace("isinstance(c, torch.Tensor) or c != 1.0", "c != 1.0")
    assert sites(analyze_source(bare, "bare.py", Settings(scope="module")).findings) == {("GM201", 7)}


PROPERTIES = """\
import torch
from torch import nn


class EMA(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("_step", torch.tensor(3))
        self.w = nn.Parameter(torch.ones(3))

    @property
    def step(self):
        return self._step

    @property
    def scale(self):
        return self.w.sum() / 3

    @property
    def n(self):
        return 3

    def forward(self, x):
        if self.step.item() > 2:
            x = x * 2
        if self.scale > 0.5:
            x = x + 1
        if self.n > 2:
            x = x - 1
        return x
"""


def test_a_property_that_returns_a_tensor(tmp_path):
    """ema-pytorch (realcode round 10) reads its step counter through a property: `self.step`
    returns a buffer, `self.scale` a reduction of a parameter, so `.item()` of one and a
    comparison of the other are breaks (Dynamo breaks at both); `self.n` returns a number."""
    found = analyze_source(PROPERTIES, "props.py").findings
    assert sites(found) == {("GM201", 24), ("GM201", 26)}
    mod = load_module(PROPERTIES, tmp_path, "props_run")
    assert logged_break_lines(mod.EMA(), torch.ones(3), path=mod.__file__) == {24, 26}


REBOUND_PARAM = """\
import torch
from torch import nn


def differentiable_topk(x, k, temperature=1.0):
    *_, n, dim = x.shape
    topk_tensors = []
    for i in range(k):
        is_last = i == (k - 1)
        values, indices = (x / temperature).softmax(dim=-1).topk(1, dim=-1)
        topk_tensors.append(torch.zeros_like(x).scatter_(-1, indices, values))
        if not is_last:
            x.scatter_(-1, indices, float('-inf'))
    return torch.cat(topk_tensors, dim=-1).reshape(*_, k * n, dim)


class SortNet(nn.Module):
    def __init__(self, n_sortcut=0):
        super().__init__()
        self.n_sortcut = n_sortcut

    def forward(self, q, k, topk=1):
        buckets = k.shape[1] // 2
        r = torch.einsum('bie,bje->bij', q, k) * buckets
        k = topk if self.n_sortcut == 0 else self.n_sortcut
        return differentiable_topk(r, k=k)


class Resized(nn.Module):
    def _resize(self, x):
        return x.view(x.shape[0], -1)

    def forward(self, labels, keep: torch.Tensor):
        n = labels.shape[0]
        labels = self._resize(labels)
        return labels[keep > 0] * n
"""


def test_a_use_like_a_tensor_before_a_rebinding_says_nothing_of_the_new_value(tmp_path):
    """sinkhorn-transformer (realcode round 15): the tensor parameter `k`, read as `k.shape[1]`,
    is rebound to a Python int before the call; the callee's `if not is_last` is no tensor branch
    (Dynamo: one graph). A rebinding computed from the name itself (`labels = self._resize(labels)`)
    keeps what its uses say (the mask read stays found, and Dynamo breaks there)."""
    found = analyze_source(REBOUND_PARAM, str(tmp_path / "sortnet.py")).findings
    assert sites(found) == {("GM402", 36)}
    mod = load_module(REBOUND_PARAM, tmp_path, "sortnet_run")
    q = torch.randn(2, 4, 8)
    assert break_lines(mod.SortNet(n_sortcut=2), q, q * 2, path=mod.__file__) == set()
    keep = torch.tensor([[1, 0, 1, 1, 0, 1], [0, 0, 1, 1, 1, 0]])
    assert break_lines(mod.Resized(), torch.randn(2, 3, 2), keep, path=mod.__file__) == {36}


LIST_INDEX = """\
from typing import List

import torch


def best_last(score: List[torch.Tensor], lens: torch.Tensor, end: torch.Tensor, i: int):
    last = lens[i] - 1
    _, best = (score[last][i] + end).max(0)
    return best * 2


def path_sum(path: List[torch.Tensor], lens: torch.Tensor, x: torch.Tensor, i: int):
    last = lens[i] - 1
    total = x * 1
    for p in path[:last]:
        total = total + p
    return total + x[:, last, None] + path[i]
"""


def test_a_list_indexed_or_sliced_by_a_tensor(tmp_path):
    """TorchCRF (realcode round 16): a list of tensors indexed or sliced by a tensor reads it with
    `Tensor.__index__` (an `.item()`): GM401 where Dynamo breaks; a tensor indexed by one
    (`x[last]`) and a list indexed by an int (`path[i]`) trace."""
    found = analyze_source(LIST_INDEX, str(tmp_path / "crf.py")).findings
    assert sites(found) == set()  # nothing compiled reaches them by default
    found = analyze_source(LIST_INDEX + "\n\nc = torch.compile(best_last), torch.compile(path_sum)\n",
                           str(tmp_path / "crf.py")).findings
    assert sites(found) == {("GM401", 8), ("GM401", 15)}
    mod = load_module(LIST_INDEX, tmp_path, "crf_run")
    score = [torch.randn(2, 5) for _ in range(4)]
    lens = torch.tensor([4, 3])
    assert logged_break_lines(mod.best_last, score, lens, torch.randn(5), 0, path=mod.__file__) == {8}
    assert logged_break_lines(mod.path_sum, score, lens, torch.randn(2, 5), 0, path=mod.__file__) == {15}


TENSOR_SUBCLASS = """\
from typing import Optional

import torch


class Tagged(torch.Tensor):
    def from_inverse(self) -> bool:
        return getattr(self, "_mode", None) == "inverse"

    def check_context(self, context) -> bool:
        return getattr(self, "_context", None) is context


class Bijector(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def _check_x(self, x: torch.Tensor, context: Optional[torch.Tensor]) -> bool:
        return (
            isinstance(x, Tagged)
            and x.from_inverse()
            and x.check_context(context)
        )

    def forward(self, x: torch.Tensor, context: Optional[torch.Tensor] = None) -> torch.Tensor:
        if self._check_x(x, context):
            return x
        ladj = None
        if isinstance(x, Tagged) and x.from_inverse() and x.check_context(context):
            ladj = x.sum()
        y = self.lin(x)
        if y.abs().sum() > 0:
            y = y * 2
        if ladj is None:
            return y
        return y + ladj
"""


def test_a_method_a_tensor_subclass_defines_is_no_tensor_op(tmp_path):
    """flowtorch (realcode round 17): `isinstance(x, BijectiveTensor) and x.from_inverse() and
    x.check_context(context)` calls methods the subclass defines, which give Python bools; a call
    on a tensor by a name torch.Tensor (or numpy.ndarray) does not have is not taken for a tensor.
    Dynamo breaks at neither, for a plain tensor or the subclass; a Tensor method's result still
    is a tensor (`y.abs().sum() > 0` breaks, and is found)."""
    found = analyze_source(TENSOR_SUBCLASS, str(tmp_path / "bij.py")).findings
    assert sites(found) == {("GM201", 33)}
    mod = load_module(TENSOR_SUBCLASS, tmp_path, "bij_run")
    m, x = mod.Bijector(), torch.randn(2, 3)
    assert break_lines(m, x, path=mod.__file__) == {33}
    for mode in ("forward", "inverse"):  # the conditions false, then true (returned at once)
        tagged = x.as_subclass(mod.Tagged)
        tagged._mode, tagged._context = mode, None
        assert break_lines(m, tagged, path=mod.__file__) == ({33} if mode == "forward" else set())


ZERO_DIM = """\
import torch


def pick(x: torch.Tensor, y: torch.Tensor):
    z = x * 2
    return z[y.argmax()]


def zero_where_positive(x: torch.Tensor):
    z = x * 2
    z[z.sum() > 0] = 0
    return z


def through_a_name(x: torch.Tensor, y: torch.Tensor):
    z = x * 2
    i = torch.argmax(y)
    return z[:, i.long() - 1]


def per_column(x: torch.Tensor, y: torch.Tensor):
    z = x * 2
    i = y.argmax(dim=0)
    return z[:, i] + z.index_select(1, y[0].argmax().view(1))


def rebound(x: torch.Tensor, y: torch.Tensor):
    z = x * 2
    i = y.argmax()
    i = y.argmax(dim=0)
    return z[i]


def first_use_only(x: torch.Tensor, y: torch.Tensor, s: torch.Tensor):
    z = x * 2
    i = s.argmax()
    a = z[i]
    b = y[i]
    return a + b
"""


def test_a_zero_dim_tensor_as_an_index(tmp_path):
    """A 0-dim tensor the frame computed (a reduction with no dim, a comparison or arithmetic of
    one with numbers, a name bound to one) used as an index, read or written, is read into Python
    (GB0033); a reduction along a dim gives an index tensor, which is advanced indexing and
    traces, as does a 0-dim index reshaped to 1-d. Measured on torch 2.13 (kornia's RANSAC,
    botorch's optimizers, torchmetrics' r2 do this)."""
    found = analyze_source(ZERO_DIM, str(tmp_path / "zd.py"), Settings(scope="module")).findings
    want = {("GM401", 6), ("GM401", 11), ("GM401", 18), ("GM401", 37)}
    assert sites(f for f in found if f.code == "GM401") == want
    mod = load_module(ZERO_DIM, tmp_path, "zd_run")
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    assert logged_break_lines(mod.pick, x, torch.randn(3), path=mod.__file__) == {6}
    assert logged_break_lines(mod.zero_where_positive, x.abs(), path=mod.__file__) == {11}
    assert logged_break_lines(mod.through_a_name, x, torch.randn(4), path=mod.__file__) == {18}
    assert logged_break_lines(mod.per_column, x, y, path=mod.__file__) == set()
    assert logged_break_lines(mod.rebound, x, y, path=mod.__file__) == set()
    # after the break at `z[i]`, `i` is an input of the frame Dynamo resumes in: `y[i]` traces
    v = torch.randn(3)
    assert logged_break_lines(mod.first_use_only, v, v, v, path=mod.__file__) == {37}


PAD_WIDTHS = """\
import torch
import torch.nn.functional as F


def left_align(out, seq_lens):
    out = out * 1
    num_pad_left = out.shape[-1] - seq_lens
    max_pad_left = num_pad_left.amax()
    out = F.pad(out, (0, max_pad_left), value=0)
    return out + 1


def shape_pad(out, seq_lens):
    out = out * 1
    width = out.shape[-1] - 6
    out = F.pad(out, (0, width), value=0)
    return out + seq_lens.sum()


c = torch.compile(left_align), torch.compile(shape_pad)
"""


def test_a_tensor_among_the_pad_widths(tmp_path):
    """speculative-decoding (realcode round 18): `F.pad(out, (0, num_pad_left.amax()))` reads the
    tensor width into Python (GB0033, GM401 at the pad); a width from `.shape` traces."""
    found = analyze_source(PAD_WIDTHS, str(tmp_path / "pad.py")).findings
    assert sites(found) == {("GM401", 9)}
    # declined without suggesting capture_scalar_outputs: with it Dynamo failed on this function
    # (PendingUnbackedSymbolNotFound, torch 2.13)
    assert "does not help here" in found[0].decline_reason
    mod = load_module(PAD_WIDTHS, tmp_path, "pad_run")
    out, lens = torch.randint(0, 9, (2, 8)), torch.tensor([6, 8])
    assert break_lines(mod.left_align, out, lens, path=mod.__file__) == {9}
    assert break_lines(mod.shape_pad, out, lens, path=mod.__file__) == set()
