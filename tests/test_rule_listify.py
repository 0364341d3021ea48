"""GM407 ([Listify]): `math.prod` / `math.fsum` of a generator expression, which Dynamo cannot
call (GB0055) and for which it runs the whole function eagerly, written as a list comprehension.
What is reported, what is not (the functions that trace with a generator, a list or tuple
argument), safe and unsafe mends, and Dynamo's own count before and after on each: the rule's
examples run original vs mended in tests/test_rule_examples_run.py."""

from __future__ import annotations

import pytest
import torch

from difftest import Counter, findings_by_line, load_module, marked_lines
from graphmend.config import Settings
from graphmend.findings import Applicability
from graphmend.rewrite import fix_source

SOURCE = '''\
import math
from math import prod

import torch


def size(x, d):
    return x.shape[d]


def run(case, x):
    if case == "prod-own-parens":
        return x.reshape(prod((x.shape[d] for d in range(x.dim() - 1))), -1) * 2  # reported
    if case == "fsum-bare":
        return x / math.fsum(x.shape[d] for d in range(x.dim()))  # reported
    if case == "prod-of-calls":
        return x.reshape(math.prod(size(x, d) for d in range(x.dim()))) + 1  # reported: unsafe
    if case == "prod-of-list":
        return x.reshape(math.prod([x.shape[d] for d in range(x.dim())])) + 1
    if case == "prod-of-shape":
        return x.reshape(math.prod(x.shape)) + 1
    if case == "sum-of-generator":
        return x * sum(x.shape[d] for d in range(x.dim()))
    if case == "max-of-generator":
        return x * max(x.shape[d] for d in range(x.dim()))
    return x
'''

CASES = ["prod-own-parens", "fsum-bare", "prod-of-calls", "prod-of-list", "prod-of-shape", "sum-of-generator",
         "max-of-generator"]
LINES = marked_lines(SOURCE, [f'"{c}"' for c in CASES])


def _line(case):
    return LINES[f'"{case}"'] + 1


def test_reported_where_dynamo_cannot_call():
    by_line = findings_by_line(SOURCE, "listify.py")
    got = {c: [f.code for f in by_line.get(_line(c), [])] for c in CASES}
    assert got == {"prod-own-parens": ["GM407"], "fsum-bare": ["GM407"], "prod-of-calls": ["GM407"],
                   "prod-of-list": [], "prod-of-shape": [], "sum-of-generator": [], "max-of-generator": []}, got
    safe = {c: by_line[_line(c)][0].applicability for c in ("prod-own-parens", "fsum-bare", "prod-of-calls")}
    assert safe == {"prod-own-parens": Applicability.SAFE, "fsum-bare": Applicability.SAFE,
                    "prod-of-calls": Applicability.UNSAFE}, safe
    assert "`size(x, d)` runs for every item" in by_line[_line("prod-of-calls")][0].decline_reason


@pytest.mark.parametrize("case", CASES)
def test_dynamo_agrees_and_the_mend_traces(case, tmp_path):
    x = torch.randn(2, 3, 4)
    module = Settings(scope="module")
    mended = fix_source(SOURCE, settings=module, unsafe=True).text
    assert mended.count("prod([") == 3 and "fsum([" in mended  # two mended, and prod-of-list
    assert fix_source(mended, settings=module, unsafe=True).text == mended  # idempotent
    reported = case in ("prod-own-parens", "fsum-bare", "prod-of-calls")
    for text, stem in ((SOURCE, "o"), (mended, "m")):
        mod = load_module(text, tmp_path, f"listify_{stem}")
        torch._dynamo.reset()
        count = Counter()
        out = torch.compile(mod.run, backend=count)(case, x)
        torch.testing.assert_close(out, mod.run(case, x), rtol=0, atol=0)
        # the original: the frame given up on (0 graphs) where reported, one graph elsewhere
        assert len(count.graphs) == (0 if reported and stem == "o" else 1), (case, stem, len(count.graphs))
