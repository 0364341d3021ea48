"""Tensors and loggers the code reaches indirectly, found in realcode round 31:

* a metric's state, set on the instance by its base class: torcheval's
  `self._add_state("weighted_sum", torch.tensor(0.0))` and torchmetrics' `self.add_state("total",
  default=torch.tensor(0))` hold tensors (`if not self.weighted_sum:` breaks); a list state
  (`default=[]`) does not;
* a logger held by another object (`settings.logger.info(...)`, torchsparsegradutils): its call
  breaks and the [Defer] mend, with the `%`-formatted message deferred, removes the break;
* boolean masks made by `F.pad(mask, ..., value=1.0)` (torcheval's precision-recall curve) or
  as the product of two masks (pythae's `w[acc * stopping_mask]`).

Checked statically and run under Dynamo (its graph-break log, and a counting backend for the mend)."""

from __future__ import annotations

import pytest
import torch

from difftest import Counter, assert_case_breaks, compiled, load_module, mend, observe
from graphmend.analysis import analyze_source
from graphmend.config import Settings
from test_callers import logged_break_lines

SOURCE = '''\
import logging
from copy import deepcopy
from typing import NamedTuple

import torch
import torch.nn.functional as F

_quiet = logging.getLogger("gm_test.held")


class Settings(NamedTuple):
    logger: logging.Logger = _quiet


class Metric:
    def _add_state(self, name, default):
        setattr(self, name, deepcopy(default))

    def add_state(self, name, default):
        setattr(self, name, deepcopy(default))


class Mean(Metric):
    def __init__(self):
        self._add_state("weighted_sum", torch.tensor(1.0))
        self.add_state("total", default=torch.tensor(2.0))
        self.add_state("seen", default=[])

    def weighted(self, x):
        if not self.weighted_sum:  # reported
            return x
        return x * self.weighted_sum

    def totals(self, x):
        if self.total > 1:  # reported
            return x * 2
        return x

    def listed(self, x):
        if self.seen:
            return x * 3
        return x


mean = Mean()


def run(case: str, x: torch.Tensor, settings: Settings = Settings()):
    if case == "add-state":
        return mean.weighted(x)
    if case == "add-state-default":
        return mean.totals(x)
    if case == "list-state":
        return mean.listed(x)
    if case == "held-logger":
        settings.logger.info("residual %8.2e" % x.sum())  # reported
        return x * 2
    if case == "padded-mask":
        mask = F.pad(x[1:] != x[:-1], [0, 1], value=1.0)
        return x[mask]  # reported
    if case == "mask-product":
        acc = x > 0.5
        keep = x < 2.5
        return x[acc * keep]  # reported
    return x
'''

CASES = ["add-state", "add-state-default", "list-state", "held-logger", "padded-mask", "mask-product"]


@pytest.fixture(scope="module")
def findings():
    return analyze_source(SOURCE, "states.py", Settings(scope="module")).findings


@pytest.mark.parametrize("case", CASES)
def test_states_loggers_masks(case, findings, tmp_path):
    mod = load_module(SOURCE, tmp_path, "states_" + case.replace("-", "_"))
    broke = logged_break_lines(mod.run, case, torch.tensor([0.0, 1.0, 1.0, 3.0]), path=mod.__file__)
    assert_case_breaks(SOURCE, case, findings, ("if case ==", "    return x\\n"), broke)


HELD = '''\
import logging
from typing import NamedTuple

import torch

_log = logging.getLogger("gm.held")


class SolverSettings(NamedTuple):
    logger: logging.Logger = _log


def solve(x, settings: SolverSettings = SolverSettings()):
    residual = torch.linalg.vector_norm(x)
    settings.logger.info("Initial residual = %8.2e" % residual)
    return residual * 2
'''


def test_a_held_logger_call_is_mended_into_one_graph(tmp_path):
    """The safe [Defer] fix of `settings.logger.info("..." % residual)` defers the call and its
    formatting: the compiled mended function is one graph, with the original's record, output
    and messages."""
    mended = mend(HELD, unsafe=False)
    assert 'settings.logger, "info", graphmend.percent("Initial residual = %8.2e", residual)' in mended
    original = load_module(HELD, tmp_path, "held")
    fixed = load_module(mended, tmp_path, "held_mended")
    x = torch.tensor([3.0, 4.0])
    want = observe(original.solve, x)
    assert want.records == [("gm.held", "INFO", "Initial residual = 5.00e+00")]
    backend = Counter()
    assert observe(compiled(fixed.solve, backend, fullgraph=True), x).same_as(want) == []
    assert len(backend.graphs) == 1
