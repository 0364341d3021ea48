"""Folds by a torch function: posteriors' `tree_size(tree) -> int` returns
`tree_reduce(torch.add, tree_map(lambda x: x.numel(), tree))`, and its caller branches on
`if tree_size(sd_diag) == 1:` (GB0170, realcode round 30). Dynamo traces `torch.add` of the
leaves' sizes into a tensor and breaks at the branch; the annotation says int. A fold by a torch
function is a tensor (`functools.reduce`, optree's `tree_reduce`); a fold by `operator.add` or a
lambda of Python numbers is not. A fold of Python numbers is a value Dynamo knows, as it knows
`torch.tensor(n)`'s: `torch.eye(tree_size(params))` (posteriors' dense Laplace) does not break,
while a fold of tensor values as a size does. Checked statically and run under Dynamo (its graph-break log)."""

from __future__ import annotations

import pytest
import torch

from difftest import assert_case_breaks, load_module
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import functools
import operator
from functools import reduce

import torch


def tree_size(tensors) -> int:
    return functools.reduce(torch.add, [t.numel() for t in tensors])


def python_size(tensors) -> int:
    return functools.reduce(operator.add, [t.numel() for t in tensors])


def run(case: str, x: torch.Tensor):
    if case == "size-fold":
        if tree_size([x, x]) == 12:  # reported
            return x * 2
        return x
    if case == "max-fold":
        top = reduce(torch.maximum, [x.sum(), x.mean()])
        if top > 1:  # reported
            return x / top
        return x
    if case == "fold-size":
        return torch.eye(tree_size([x, x])) * 2
    if case == "data-fold-size":
        n = reduce(torch.add, [(x > 0).sum(), (x < 0).sum()])
        return torch.eye(n) * 2  # reported
    if case == "python-fold":
        if python_size([x, x]) == 12:
            return x * 3
        return x
    if case == "lambda-fold":
        n = reduce(lambda a, b: a * b, x.shape)
        if n == 6:
            return x * 4
        return x
    return x
'''

CASES = ["size-fold", "max-fold", "fold-size", "data-fold-size", "python-fold", "lambda-fold"]


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "reducers.py", Settings(scope="module")).findings


@pytest.mark.parametrize("case", CASES)
def test_reducers(case, findings, tmp_path):
    mod = load_module(SOURCE, tmp_path, "reducers_" + case.replace("-", "_"))
    broke = logged_break_lines(mod.run, case, torch.ones(2, 3), path=mod.__file__)
    assert_case_breaks(SOURCE, case, findings, ("if case ==", "    return x\\n"), broke)


TREE = '''\
import functools
from typing import Dict, Union

import torch
from torch.utils._pytree import tree_leaves

TensorTree = Dict[str, torch.Tensor]


def tree_size(tree) -> int:
    return functools.reduce(torch.add, [torch.as_tensor(x).numel() for x in tree_leaves(tree)])


def sample(mean: TensorTree, sd: Union[float, TensorTree] = 1.0):
    if tree_size(sd) == 1:  # sd
        return {k: v * 2 for k, v in mean.items()}
    return {k: v * sd[k] for k, v in mean.items()}
'''


def test_a_number_or_tree_parameter_names_its_condition_as_not_a_number(tmp_path):
    """posteriors' `diag_normal_sample(mean, sd_diag: float | TensorTree)`: `if tree_size(sd_diag)
    == 1:` breaks when `sd_diag` is a tree of several tensors, not when it is a number, nor when it
    is a single tensor: the condition is "`sd_diag` is not a number" ("is a tensor" was wrong both
    ways). Measured: a float traces into one graph, a dict of two tensors breaks."""
    found = [f for f in analyze_source(TREE, "tree.py", Settings(scope="module")).findings
             if f.span.start.line == next(i for i, line in enumerate(TREE.splitlines(), 1) if "# sd" in line)]
    assert [f.code for f in found] == ["GM201"]
    assert found[0].condition is not None and found[0].condition.text == "`sd` is not a number"
    mod = load_module(TREE, tmp_path, "tree")
    mean = {"a": torch.ones(2), "b": torch.ones(3)}
    sd_line = {i for i, line in enumerate(TREE.splitlines(), 1) if "# sd" in line}
    assert logged_break_lines(mod.sample, mean, 1.0, path=mod.__file__) & sd_line == set()
    assert logged_break_lines(mod.sample, mean, {"a": torch.ones(2), "b": torch.ones(3)},
                              path=mod.__file__) & sd_line == sd_line
