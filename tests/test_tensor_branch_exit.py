"""A branch for tensors that returns leaves Python values after it (realcode round 27, torchdr
0.5's `check_neighbor_param`):

    if isinstance(n_neighbors, torch.Tensor) or isinstance(n_samples, torch.Tensor):
        n = torch.as_tensor(n_samples, device=n_samples.device if ... else n_neighbors.device)
        ...
        return torch.clamp(k, min=lower, max=upper)
    if n_samples <= 1:          # Python ints here: no break (was a false alarm)
        raise ValueError(...)

The `.device` read in the tensor branch made both parameters tensors for the whole function.
Where an `isinstance(x, Tensor)` test (or an `or` of them) is false, none of its names is a
tensor, and when its body always returns or raises, only that side goes on. What stays reported:
the same test whose body does not exit (the name may still be a tensor after it). Each case is
checked statically and run under Dynamo with the inputs that reach the line.
"""

from __future__ import annotations

import pytest
import torch

from difftest import function_span, load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import torch


def either(n_neighbors, n_samples):
    if isinstance(n_neighbors, torch.Tensor) or isinstance(n_samples, torch.Tensor):
        n = torch.as_tensor(n_samples, device=n_samples.device if isinstance(n_samples, torch.Tensor)
                            else n_neighbors.device)
        return torch.clamp(torch.as_tensor(n_neighbors), max=n - 2)
    if n_samples <= 1:
        raise ValueError("too few samples")
    if n_neighbors <= 1 or n_neighbors >= n_samples - 1:
        raise ValueError("bad neighbours")
    return torch.tensor(n_neighbors)


def single(n):
    if isinstance(n, torch.Tensor):
        return n.clamp(min=2)
    if n <= 1:
        raise ValueError("too small")
    return torch.tensor(n)


def no_exit(n):
    if isinstance(n, torch.Tensor):
        n = n.clamp(min=2)
    if n <= 1:  # reported
        n = n + 1
    return n * 2


def run(case, n):
    if case == "either":
        return either(n, 30)
    if case == "single":
        return single(n)
    return no_exit(n)
'''

CASES = {"either": ("either", 5), "single": ("single", 5), "no-exit": ("no_exit", torch.tensor(5))}


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "tensor_branch_exit.py", Settings(scope="module")).findings


@pytest.mark.parametrize("case", list(CASES))
def test_a_tensor_branch_that_exits(case, findings, tmp_path):
    name, arg = CASES[case]
    block, reported = function_span(SOURCE, name)
    assert sorted(f.span.start.line for f in findings if f.span.start.line in block) == reported, (case, findings)
    mod = load_module(SOURCE, tmp_path, "tensor_branch_exit")
    broke = logged_break_lines(mod.run, case, arg, path=mod.__file__)
    assert sorted(n for n in broke if n in block) == reported, (case, broke)
