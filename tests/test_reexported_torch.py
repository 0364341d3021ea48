"""`torch` imported from a package's own module (analysis/reexports.py): deepxde's
`from ..backend import torch`, where the backend package sets its attributes from the chosen
backend's module (`setattr(thismod, api, mod.__dict__[api])`).

Each case writes a small package, analyses its gradient module statically and runs it under
Dynamo (`torch._dynamo.explain`): GraphMend reports GM403 on exactly the lines Dynamo breaks on,
and nothing where the package's `torch` is something else.
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
from test_callers import break_lines

GRADS = """\
from ..backend import torch


def jac(ys, xs):
    return torch.autograd.grad(ys, xs, grad_outputs=torch.ones_like(ys), create_graph=True)[0]
"""
GRAD_LINE = 5

# deepxde's loader: the API's names declared None in one module, set from the backend's module
LOADER = """\
import importlib
import sys
from . import api


def load(name):
    mod = importlib.import_module("." + name, __name__)
    me = sys.modules[__name__]
    for k in api.__dict__:
        if not k.startswith("__"):
            setattr(me, k, mod.__dict__[k])


load("pt")
"""

# an object with an `autograd.grad` that Dynamo traces (plain tensor arithmetic)
FAKE = """\
class _Autograd:
    @staticmethod
    def grad(ys, xs, grad_outputs=None, create_graph=False):
        return (ys * 2 + xs,)


class _Fake:
    autograd = _Autograd()

    @staticmethod
    def ones_like(t):
        return t * 0 + 1


"""

# name -> ({file under the package: text}, lines of GRADS GraphMend reports and Dynamo breaks on)
CASES = {
    "dynamic-loader": ({
        "backend/__init__.py": LOADER,
        "backend/api.py": "torch = None\nlib = None\n",
        "backend/pt/__init__.py": "from .tensor import *\n",
        "backend/pt/tensor.py": "import torch\nlib = torch\n",
        "backend/np/__init__.py": "import numpy as lib\n",
    }, [GRAD_LINE]),
    "static-reexport": ({
        "backend/__init__.py": "from .pt import torch\n",
        "backend/pt.py": "import torch\n",
    }, [GRAD_LINE]),
    "optional-import": ({
        "backend/__init__.py": "try:\n    import torch\nexcept ImportError:\n    torch = None\n",
    }, [GRAD_LINE]),
    "star-reexport": ({
        "backend/__init__.py": "from .pt import *\n",
        "backend/pt.py": "import torch\n__all__ = ['torch']\n",
    }, [GRAD_LINE]),
    # a `torch` that is not the torch module: no finding, and Dynamo traces the call
    "fake-object": ({
        "backend/__init__.py": FAKE + "torch = _Fake()\n",
    }, []),
    "rebound-after-import": ({
        "backend/__init__.py": "import torch\n" + FAKE + "torch = _Fake()\n",
    }, []),
    "imported-under-the-name": ({
        "backend/__init__.py": "from .fake import fake as torch\n",
        "backend/fake.py": FAKE + "fake = _Fake()\n",
    }, []),
    "star-left-out-by-all": ({
        "backend/__init__.py": FAKE + "torch = _Fake()\nfrom .pt import *\n",
        "backend/pt.py": "import torch\n__all__ = ['lib']\nlib = torch\n",
    }, []),
    "dynamic-loader-of-a-fake": ({
        "backend/__init__.py": LOADER.replace('load("pt")', 'load("fk")'),
        "backend/api.py": "torch = None\n",
        "backend/pt/__init__.py": "import torch\n",
        "backend/fk/__init__.py": FAKE + "torch = _Fake()\n",
    }, []),
}


@pytest.mark.parametrize("files,lines", CASES.values(), ids=CASES.keys())
def test_torch_from_a_package_module(files, lines, tmp_path):
    pkg = f"gm_reexp_{uuid.uuid4().hex[:8]}"
    root = tmp_path / pkg
    for rel, text in {"__init__.py": "", "grads/__init__.py": "", "grads/rev.py": GRADS, **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    path = root / "grads" / "rev.py"
    fa = analyze_source(GRADS, str(path), Settings(scope="module"), Workspace([str(tmp_path)]))
    assert [(f.code, f.span.start.line) for f in fa.findings] == [("GM403", n) for n in lines]

    sys.path.insert(0, str(tmp_path))
    try:
        rev = importlib.import_module(f"{pkg}.grads.rev")

        def step(x):
            y = (x * x).sin()
            return rev.jac(y, x) + 1

        broke = break_lines(step, torch.randn(4, requires_grad=True), path=str(path))
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == pkg or m.startswith(pkg + ".")]:
            del sys.modules[name]
    assert sorted(broke) == lines
