"""Three forms realcode round 35 showed, each checked statically and run under Dynamo (its
graph-break log):

- A name bound to `<static> or <tensor test>` is a Python bool when the static operand decides
  and a tensor only otherwise: sbi 0.27's DirectPosterior, `is_new_x = self.default_x is None or
  (x is not self.default_x and (x != self.default_x).any())`, then `if is_new_x:` (no break while
  `default_x` is None). The branch is reported "breaks only when `is_new_x` is a tensor".
- Unpacking with a star takes the items of a function's tuple return by position: sbi's
  `is_valid_t, *_ = handle_invalid_x(batch_t, True)`, then `batch_t[is_valid_t]` (GB0036).
- A conditional expression's test proves its arm's name a tensor, where the arm runs (the break is
  named with the test): torchnlp 0.5's `lengths_to_mask`,
  `[l.squeeze().tolist() if torch.is_tensor(l) else l for l in lengths]` over `*lengths` (GB0124
  there, the frame skipped: a break in a comprehension).
"""

from __future__ import annotations

import pytest
import torch

from difftest import findings_by_line, load_module, marked_lines
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import torch


class Posterior:
    def __init__(self, default_x=None):
        self.default_x = default_x

    def correction(self, x):
        is_new_x = self.default_x is None or (x is not self.default_x and (x != self.default_x).any())
        if is_new_x:
            return x * 2
        return x


def handle_invalid_x(x):
    x_is_nan = torch.isnan(x).any(dim=1)
    is_valid_x = ~x_is_nan
    return is_valid_x, x.shape[0], 0


def standardize(batch_t):
    is_valid_t, *_ = handle_invalid_x(batch_t)
    return batch_t - torch.mean(batch_t[is_valid_t], dim=0)


def lengths_to_list(*lengths):
    return [l.squeeze().tolist() if torch.is_tensor(l) else l for l in lengths]


def run(case, x):
    if case == "or-default-none":
        return Posterior().correction(x)
    if case == "or-default-set":
        return Posterior(x + 1).correction(x)
    if case == "starred":
        return standardize(x.reshape(2, 2))
    return lengths_to_list(x.long(), 3), x
'''

LINES = marked_lines(SOURCE, ("if is_new_x:", "batch_t[is_valid_t]", "l.squeeze().tolist()"))


@pytest.fixture(scope="module")
def by_line():
    return findings_by_line(SOURCE, "forms.py")


def test_a_name_bound_to_static_or_tensor_is_a_tensor_only_sometimes(by_line):
    [f] = by_line[LINES["if is_new_x:"]]
    assert f.code == "GM201" and f.condition is not None, f
    assert f.condition.text == "`is_new_x` is a tensor" and f.condition.kinds == ("value",)


def test_starred_unpacking_takes_a_returned_mask(by_line):
    assert [f.code for f in by_line.get(LINES["batch_t[is_valid_t]"], [])] == ["GM402"], by_line


def test_a_tensor_test_proves_its_arm(by_line):
    """Reported, and named with the test: the arm runs only where `l` is a tensor (stop 39: a
    break behind a type test is conditional, brevitas' `bool(signed.item()) if isinstance(signed,
    Tensor) else signed` with a bool at run time, realcode round 37)."""
    got = by_line.get(LINES["l.squeeze().tolist()"], [])
    assert [f.code for f in got] == ["GM401"], by_line
    assert got[0].condition is not None and got[0].condition.text == "`l` is a tensor", got[0].condition


@pytest.mark.parametrize("case,line,breaks", [
    ("or-default-none", "if is_new_x:", False), ("or-default-set", "if is_new_x:", True),
    ("starred", "batch_t[is_valid_t]", True), ("arm", "l.squeeze().tolist()", True)])
def test_dynamo_agrees(case, line, breaks, tmp_path):
    mod = load_module(SOURCE, tmp_path, "bound_or_forms")
    broke = logged_break_lines(mod.run, case, torch.randn(4), path=mod.__file__)
    assert (LINES[line] in broke) is breaks, broke


def test_a_mask_a_function_of_another_module_returns_in_a_tuple(tmp_path, monkeypatch):
    """sbi's `is_valid_x, num_nans, num_infs = handle_invalid_x(x, exclude_invalid_x)`, imported
    from sbi.utils.sbiutils, then `x = x[is_valid_x]` (GB0036, realcode round 35)."""
    import importlib

    from graphmend.analysis.workspace import Workspace

    pkg = tmp_path / "gm_r35pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "utils.py").write_text(SOURCE.split("def standardize")[0].split("class Posterior")[0]
                                  + "def handle_invalid_x(x):\n    x_is_nan = torch.isnan(x).any(dim=1)\n"
                                    "    is_valid_x = ~x_is_nan\n    return is_valid_x, x.shape[0], 0\n")
    user = ("import torch\nfrom gm_r35pkg.utils import handle_invalid_x\n\n\n"
            "def append(theta, x):\n    is_valid_x, num_nans, num_infs = handle_invalid_x(x)\n"
            "    x = x[is_valid_x]\n    theta = theta[is_valid_x]\n    return theta, x\n")
    (pkg / "trainer.py").write_text(user)
    ws = Workspace(roots=[str(tmp_path)])
    got = [(f.code, f.span.start.line) for f in
           analyze_source(user, str(pkg / "trainer.py"), Settings(scope="module"), workspace=ws).findings]
    assert got == [("GM402", 7), ("GM402", 8)], got
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("gm_r35pkg.trainer")
    broke = logged_break_lines(mod.append, torch.randn(4, 2), torch.randn(4, 2), path=mod.__file__)
    assert 7 in broke, broke
