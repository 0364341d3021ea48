"""A numpy array an input object holds, read into Python (analysis/numpy_attrs.py):
stable-baselines3's `int(observation_space.nvec[idx])` under
`isinstance(observation_space, spaces.MultiDiscrete)`, gymnasium's class storing
`self.nvec = np.array(nvec, ...)`. Dynamo traces the array as a tensor, so `int()` of an item
is a data-dependent operator (GB0033).

Each case writes a small package (the space classes in one module, re-exported by the package
as gymnasium's are) and a user module, checks the user module statically and runs it under
Dynamo (its graph-break log): GraphMend reports exactly the lines Dynamo breaks on.
"""

from __future__ import annotations

import importlib
import sys
import uuid

import pytest
import torch

from graphmend.analysis import analyze_source
from graphmend.analysis.workspace import Workspace
from graphmend.config import Settings
from test_callers import logged_break_lines

SPACES = """\
from typing import Generic, TypeVar

import numpy as np
from numpy.typing import NDArray

T = TypeVar("T")


class Space(Generic[T]):
    def __init__(self, shape=None):
        self._shape = shape


class MultiDiscrete(Space[NDArray]):
    nvec: NDArray

    def __init__(self, nvec):
        self.nvec = np.array(nvec, dtype=np.int64, copy=True)
        super().__init__(self.nvec.shape)


class Counts(Space[list]):
    def __init__(self, nvec):
        self.nvec = list(nvec)


class Resettable(Space[NDArray]):
    def __init__(self, nvec):
        self.nvec = np.array(nvec)

    def reset(self):
        self.nvec = [4, 4]
"""

HEAD = """\
import torch
import torch.nn.functional as F

from PKG import spaces


def f(obs, space):
"""
HEAD_LINES = HEAD.count("\n")

# name -> (body, the space to pass (an expression over `spaces`), lines of the body reported)
CASES = {
    "int-of-an-item": (
        "if isinstance(space, spaces.MultiDiscrete):\n"
        "    n = int(space.nvec[0])\n"
        "    return obs * n\n"
        "return obs", "spaces.MultiDiscrete([3, 4])", [2]),
    "one-hot-classes": (
        "if isinstance(space, spaces.MultiDiscrete):\n"
        "    return F.one_hot(obs.long(), num_classes=int(space.nvec[1])).float()\n"
        "return obs.float()", "spaces.MultiDiscrete([3, 4])", [2]),
    # Python numbers: Dynamo specializes them, no break
    "a-list-attribute": (
        "if isinstance(space, spaces.Counts):\n"
        "    return obs * int(space.nvec[0])\n"
        "return obs", "spaces.Counts([3, 4])", []),
    "stored-as-a-list-elsewhere": (
        "if isinstance(space, spaces.Resettable):\n"
        "    return obs * int(space.nvec[0])\n"
        "return obs", "_reset(spaces.Resettable([3, 4]))", []),
    "the-other-branch": (
        "if isinstance(space, spaces.MultiDiscrete):\n"
        "    return obs\n"
        "return obs * int(space.nvec[0])", "spaces.Counts([3, 4])", []),
    "rebound-in-the-branch": (
        "if isinstance(space, spaces.MultiDiscrete):\n"
        "    space = spaces.Counts([2, 2])\n"
        "    return obs * int(space.nvec[0])\n"
        "return obs", "spaces.MultiDiscrete([3, 4])", []),
}


def _reset(space):
    space.reset()
    return space


@pytest.mark.parametrize("body,space,lines", CASES.values(), ids=CASES.keys())
def test_an_array_attribute_read_into_python(body, space, lines, tmp_path):
    pkg = f"gm_spaces_{uuid.uuid4().hex[:8]}"
    (tmp_path / pkg).mkdir()
    (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / pkg / "spaces").mkdir()
    (tmp_path / pkg / "spaces" / "__init__.py").write_text(
        f"from {pkg}.spaces.classes import Counts, MultiDiscrete, Resettable, Space\n")
    (tmp_path / pkg / "spaces" / "classes.py").write_text(SPACES)
    text = HEAD.replace("PKG", pkg) + "".join(f"    {ln}\n" for ln in body.splitlines())
    path = tmp_path / f"{pkg}_user.py"
    path.write_text(text)
    fa = analyze_source(text, str(path), Settings(scope="module"), Workspace([str(tmp_path)]))
    assert [(f.code, f.span.start.line - HEAD_LINES) for f in fa.findings] == [("GM401", n) for n in lines], text

    sys.path.insert(0, str(tmp_path))
    try:
        user = importlib.import_module(f"{pkg}_user")
        spaces = importlib.import_module(f"{pkg}.spaces")
        value = eval(space, {"spaces": spaces, "_reset": _reset})
        broke = logged_break_lines(user.f, torch.tensor([1, 2]), value, path=str(path))
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.startswith(pkg)]:
            del sys.modules[name]
    assert sorted(n - HEAD_LINES for n in broke) == lines, text
