"""GM501 (compile-only None default): the guard folding it relies on, what it reports and what it
leaves alone, its legality, and original vs mended under torch.compile."""

from __future__ import annotations

import ast
import textwrap

import pytest
import torch

from difftest import Counter, compiled, load_module, mend, observe
from graphmend.analysis import analyze_source
from graphmend.analysis.dataflow import compiling_guard
from graphmend.analysis.symbols import Symbols
from graphmend.config import Settings
from graphmend.findings import Applicability
from graphmend.rewrite import fix_source


def _found(src: str, code: str = "GM501"):
    return [f for f in analyze_source(textwrap.dedent(src), settings=Settings(scope="module")).findings
            if f.code == code]


def _guard(expr: str):
    src = "import torch\nfrom transformers.utils import is_torchdynamo_compiling\n" + f"if {expr}:\n    pass\n"
    tree = ast.parse(src)
    return compiling_guard(tree.body[-1].test, Symbols(tree, "m"))


# --- the folding of compile-time guards ----------------------------------------------------------
@pytest.mark.parametrize("expr,want", [
    ("not is_torchdynamo_compiling()", False),
    ("not is_torchdynamo_compiling() and x", False),  # first operand, as before
    ("is_torchdynamo_compiling() or x", True),
    ("x is None and not is_torchdynamo_compiling()", False),
    ("x is None and self.config.is_decoder and not torch.compiler.is_compiling()", False),
    ("x is None and (not is_torchdynamo_compiling()) and f(x)", False),  # f(x) never runs under Dynamo
    ("x is not None or is_torchdynamo_compiling()", True),
    ("not (x is None and not is_torchdynamo_compiling())", True),
    ("flag and not is_torchdynamo_compiling()", False),
    ("x is None or not is_torchdynamo_compiling()", None),  # an `or` with a False operand: undecided
    ("x is None and is_torchdynamo_compiling()", None),  # True operands decide nothing in an `and`
    ("f(x) and not is_torchdynamo_compiling()", None),  # f(x) runs first: not folded
    ("x.sum() > 0 and not is_torchdynamo_compiling()", None),  # a tensor's truth first
    ("x == y and not is_torchdynamo_compiling()", None),
    ("x[0] is None and not is_torchdynamo_compiling()", None),  # indexing may raise
])
def test_compiling_guard_any_operand(expr, want):
    assert _guard(expr) is want


def test_guard_after_a_tensor_name_is_not_folded():
    """`mask and not is_compiling()` with `mask` a tensor takes a tensor's truth first: the
    condition keeps its data-dependent branch report."""
    src = """
    import torch

    def f(x: torch.Tensor, m: torch.Tensor):
        if m and not torch.compiler.is_compiling():
            x = x + 1
        return x
    """
    assert [f.code for f in analyze_source(textwrap.dedent(src), settings=Settings(scope="module")).findings] \
        == ["GM201"]


def test_skipped_branch_is_not_reported():
    """The body of `if x is None and not is_compiling():` is not traced: its print is not a break."""
    src = """
    import torch

    @torch.compile
    def f(x, scale=None):
        if scale is None and not torch.compiler.is_compiling():
            print("no scale")
        return x
    """
    assert analyze_source(textwrap.dedent(src)).findings == []


# --- what is reported ----------------------------------------------------------------------------
HEAD = """
import torch
from torch import nn
from transformers.utils import is_torchdynamo_compiling

"""


@pytest.mark.parametrize("use", [
    "y = attention_mask[:, None]",
    "y = attention_mask.shape",
    "y = attention_mask()",
    "y = attention_mask.to(x.dtype) if self.training else x",
    "y = torch.cat([x, attention_mask.float()])",
    "y = [attention_mask[i] for i in range(2)]",
    "y = helper(attention_mask)",
    "y = helper(m=attention_mask)",
    "y = self.method(x, attention_mask)",
    "y = self.static(attention_mask)",
    "y = deep1(attention_mask)",
    "if self.is_decoder:\n            y = x\n        else:\n            y = attention_mask[:, None]",
    "for i in range(2):\n            x = x + attention_mask",  # not a dereference (BinOp) ...
])
def test_reported_uses(use):
    src = HEAD + textwrap.dedent('''
    def helper(m):
        return m.sum()

    def deep3(m):
        return m.float()

    def deep2(m):
        return deep3(m)

    def deep1(m):
        return deep2(m)

    class Stack(nn.Module):
        def method(self, x, mask):
            return x * mask[:, None]

        @staticmethod
        def static(mask):
            return mask.shape[-1]

        def forward(self, x, attention_mask=None):
            if attention_mask is None and not is_torchdynamo_compiling():
                attention_mask = torch.ones(x.shape[:2])
            USE
            return y
    ''').replace("USE", use)
    found = _found(src)
    if "x + attention_mask" in use:
        assert found == []  # ... so not reported (only subscripts, attributes, calls, helpers)
    else:
        assert len(found) == 1, use
        assert found[0].gb_id == "GB0088"
        assert "stays None" in found[0].message and "skips the whole function" in found[0].message


@pytest.mark.parametrize("use", [
    "y = attention_mask[:, None] if attention_mask is not None else None",
    "y = attention_mask is not None and attention_mask.shape",
    "y = isinstance(attention_mask, torch.Tensor) and attention_mask.dim()",
    "if attention_mask is not None:\n            y = attention_mask[:, None]\n        else:\n            y = None",
    "if attention_mask is None:\n            return x\n        y = attention_mask[:, None]",
    "if attention_mask:\n            y = attention_mask.float()\n        else:\n            y = x",
    "attention_mask = x\n        y = attention_mask[:, None]",
    "try:\n            y = attention_mask[:, None]\n        except TypeError:\n            y = None",
    "y = handles(attention_mask)",
    "y = self.handles(x, attention_mask)",
    "y = deep0(attention_mask)",  # 4 calls deep: not followed
    "y = unknown_module_fn(attention_mask)",
    "y = self.inherited(attention_mask)",
    "return x\n        y = attention_mask[:, None]",
    "y = (lambda: attention_mask[0])",
])
def test_not_reported(use):
    src = HEAD + textwrap.dedent('''
    from other import unknown_module_fn

    def handles(m):
        if m is None:
            return None
        return m.sum()

    def deep3(m):
        return m.float()

    def deep2(m):
        return deep3(m)

    def deep1(m):
        return deep2(m)

    def deep0(m):
        return deep1(m)

    class Stack(nn.Module):
        def handles(self, x, mask):
            return x if mask is None else x * mask

        def forward(self, x, attention_mask=None):
            if attention_mask is None and not is_torchdynamo_compiling():
                attention_mask = torch.ones(x.shape[:2])
            USE
            return y
    ''').replace("USE", use)
    assert _found(src) == [], use


def test_not_reported_without_the_guard_or_the_assignment():
    base = HEAD + textwrap.dedent('''
    class Stack(nn.Module):
        def forward(self, x, attention_mask=None):
            if COND:
                BODY
            return attention_mask[:, None]
    ''')
    for cond, body in [("attention_mask is None", "attention_mask = torch.ones(x.shape[:2])"),
                       ("attention_mask is None and not is_torchdynamo_compiling()", "x = x + 1"),
                       ("x is None and not is_torchdynamo_compiling()", "attention_mask = torch.ones(3)"),
                       ("not is_torchdynamo_compiling()", "attention_mask = torch.ones(x.shape[:2])")]:
        assert _found(base.replace("COND", cond).replace("BODY", body)) == [], cond


def test_transformers_models_t5_like_not_reported():
    """T5's encoder checks `elif attention_mask is not None`, its decoder's _update_causal_mask
    handles None: nothing to report."""
    src = HEAD + textwrap.dedent('''
    class Stack(nn.Module):
        def _update_causal_mask(self, attention_mask, input_tensor):
            if self.config._attn_implementation == "flash_attention_2":
                if attention_mask is not None and (attention_mask == 0.0).any():
                    return attention_mask
                return None
            target_length = (attention_mask.shape[-1] if isinstance(attention_mask, torch.Tensor)
                             else input_tensor.shape[1])
            return self._prepare(attention_mask, target_length)

        @staticmethod
        def _prepare(attention_mask, target_length):
            if attention_mask is not None and attention_mask.dim() == 4:
                return attention_mask
            causal = torch.zeros(target_length, target_length)
            if attention_mask is not None:
                causal = causal + attention_mask[:, None, None, :]
            return causal

        def forward(self, x, attention_mask=None):
            if attention_mask is None and not is_torchdynamo_compiling():
                attention_mask = torch.ones(x.shape[:2])
            if self.is_decoder:
                causal_mask = self._update_causal_mask(attention_mask, x)
            elif attention_mask is not None:
                causal_mask = attention_mask[:, None, None, :]
            else:
                causal_mask = None
            return x, causal_mask
    ''')
    assert _found(src) == []


# --- legality ------------------------------------------------------------------------------------
@pytest.mark.parametrize("body,why", [
    ("print('default')\n            attention_mask = torch.ones(x.shape[:2])", "graph break"),
    ("x.add_(1)\n            attention_mask = torch.ones(x.shape[:2])", "in place"),
    ("self.cache[0] = 1\n            attention_mask = torch.ones(x.shape[:2])", "in place"),
    ("x += 1\n            attention_mask = torch.ones(x.shape[:2])", "updates the argument"),
])
def test_declined(body, why):
    src = HEAD + textwrap.dedent('''
    class Stack(nn.Module):
        def forward(self, x, attention_mask=None):
            if attention_mask is None and not is_torchdynamo_compiling():
                BODY
            return attention_mask[:, None]
    ''').replace("BODY", body)
    [f] = _found(src)
    assert f.applicability is Applicability.NONE and why in f.decline_reason, f.decline_reason
    assert fix_source(textwrap.dedent(src), settings=Settings(scope="module"), unsafe=True).text \
        == textwrap.dedent(src)


def test_declined_when_a_later_operand_has_effects():
    src = HEAD + textwrap.dedent('''
    def ready(x):
        return True

    class Stack(nn.Module):
        def forward(self, x, attention_mask=None):
            if attention_mask is None and not is_torchdynamo_compiling() and ready(x):
                attention_mask = torch.ones(x.shape[:2])
            return attention_mask[:, None]
    ''')
    [f] = _found(src)
    assert f.applicability is Applicability.NONE and "ready(x)" in f.decline_reason


@pytest.mark.parametrize("cond,want", [
    ("attention_mask is None and not is_torchdynamo_compiling()", "attention_mask is None"),
    ("not is_torchdynamo_compiling() and attention_mask is None", None),  # the guard first
    ("(not is_torchdynamo_compiling()) and (attention_mask is None)", "(attention_mask is None)"),
    ("attention_mask is None and (not is_torchdynamo_compiling())", "attention_mask is None"),
    ("(attention_mask is None) and not is_torchdynamo_compiling()", "(attention_mask is None)"),
    ("attention_mask is None and not is_torchdynamo_compiling() and self.use_mask",
     "attention_mask is None and self.use_mask"),
    ("(attention_mask is None\n            and not is_torchdynamo_compiling())", "(attention_mask is None)"),
    ("attention_mask is None and \\\n            not is_torchdynamo_compiling()", "attention_mask is None"),
])
def test_fix_removes_only_the_compile_operand(cond, want):
    src = HEAD + textwrap.dedent('''
    class Stack(nn.Module):
        def forward(self, x, attention_mask=None):
            if COND:  # keep me
                attention_mask = torch.ones(x.shape[:2])
            return attention_mask[:, None]
    ''').replace("COND", cond)
    once = fix_source(src, settings=Settings(scope="module"), unsafe=True)
    if want is None:
        want = "attention_mask is None"
    assert f"        if {want}:  # keep me\n" in once.text, once.text
    assert [f.code for f in once.applied] == ["GM501"]
    assert fix_source(src, settings=Settings(scope="module")).text == src, "unsafe: needs --unsafe-fixes"
    twice = fix_source(once.text, settings=Settings(scope="module"), unsafe=True)
    assert twice.text == once.text and not twice.applied
    assert _found(once.text) == []


# --- original vs mended, eager and compiled ------------------------------------------------------
PROGRAM = '''
import torch
from torch import nn


def is_torchdynamo_compiling():
    return torch.compiler.is_compiling()


def _split_into_blocks(x, block_len: int):
    if x.shape[1] % block_len != 0:
        x = torch.nn.functional.pad(x, (0, block_len - x.shape[1] % block_len))
    return x.reshape(x.shape[0], -1, block_len)


def _get_local_attention_mask(attention_mask, block_len: int):
    blocks = _split_into_blocks(attention_mask, block_len)
    return blocks[:, :, None, :] * blocks[:, :, :, None]


class LocalEncoder(nn.Module):
    """LongT5's shape: the mask goes to a helper that reads its .shape."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.proj = nn.Linear(8, 8)
        self.out = nn.Linear(8, 8)

    def forward(self, hidden_states, attention_mask=None):
        batch_size, seq_length = hidden_states.shape[:2]
        if attention_mask is None and not is_torchdynamo_compiling():
            # required mask seq length
            attention_mask = torch.ones(batch_size, seq_length, device=hidden_states.device)
        local = _get_local_attention_mask(attention_mask, 4)
        h = self.proj(hidden_states) * attention_mask[:, :, None]
        return self.out(h), local.sum(dim=(2, 3))


class Stack(nn.Module):
    """SwitchTransformers' shape: subscripted in the encoder, None-safe in the decoder."""

    def __init__(self, is_decoder):
        super().__init__()
        torch.manual_seed(1)
        self.is_decoder = is_decoder
        self.proj = nn.Linear(8, 8)

    def _update_causal_mask(self, attention_mask, x):
        n = x.shape[1]
        causal = torch.triu(torch.full((n, n), -1e9), diagonal=1)
        if attention_mask is None:
            return causal[None, None]
        return causal[None, None] + (1.0 - attention_mask[:, None, None, :]) * -1e9

    def forward(self, hidden_states, attention_mask=None):
        batch_size, seq_length = hidden_states.shape[:2]
        if attention_mask is None and not is_torchdynamo_compiling():
            attention_mask = torch.ones(batch_size, seq_length, device=hidden_states.device)
        if self.is_decoder:
            causal_mask = self._update_causal_mask(attention_mask, hidden_states)
        else:
            causal_mask = attention_mask[:, None, None, :]
            causal_mask = (1.0 - causal_mask) * torch.finfo(hidden_states.dtype).min
        scores = hidden_states @ hidden_states.transpose(1, 2)
        return self.proj(torch.softmax(scores[:, None] + causal_mask, dim=-1)[:, 0] @ hidden_states)
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compile_path")
    mended = mend(PROGRAM)
    assert "not is_torchdynamo_compiling()" not in mended and mended.count("if attention_mask is None:\n") == 3
    assert "# required mask seq length" in mended
    assert mend(mended) == mended, "idempotent"
    return load_module(PROGRAM, tmp, "cp_orig"), load_module(mended, tmp, "cp_mend")


X = torch.randn(2, 6, 8, generator=torch.Generator().manual_seed(3))
MASK = torch.tensor([[1.0, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]])


@pytest.mark.parametrize("make", [lambda m: m.LocalEncoder(), lambda m: m.Stack(False), lambda m: m.Stack(True)],
                         ids=["local", "encoder", "decoder"])
@pytest.mark.parametrize("with_mask", [False, True], ids=["no-mask", "mask"])
def test_differential(pair, make, with_mask):
    o, m = pair
    args = (X.clone(), MASK.clone()) if with_mask else (X.clone(),)
    orig, mended = make(o), make(m)
    with torch.no_grad():
        eo = observe(orig, *args)
        em = observe(mended, *args)
        assert eo.error is None and eo.same_as(em) == [], eo.same_as(em)  # eager: unchanged
        c_orig = Counter()
        co = observe(compiled(make(o), c_orig), *args)
        c_mend = Counter()
        cm = observe(compiled(make(m), c_mend, fullgraph=True), *args)
    assert cm.error is None and len(c_mend.graphs) == 1
    if isinstance(orig, o.Stack) and orig.is_decoder and not with_mask:
        # the decoder handled None: the original compiled fine, with no mask, and the mend makes it
        # build the all-ones mask eager builds (numerically the same here)
        assert len(c_orig.graphs) == 1 and co.error is None
        assert torch.allclose(cm.result, eo.result, atol=1e-6)
        return
    assert cm.same_as(eo) == [], cm.same_as(eo)  # compiled mended == eager original
    if with_mask:
        assert len(c_orig.graphs) == 1
    else:
        # the original fails while Dynamo traces: the compiled call raises the error eager never
        # raises (as here), or Dynamo skips the frame and runs it in eager, its callees compiled
        # as graphs of their own (as in transformers' LongT5): never the mended code's one graph
        if co.error is not None:
            assert co.error[0] in ("AttributeError", "TypeError") and len(c_orig.graphs) == 0
        else:
            assert len(c_orig.graphs) != 1 and co.same_as(eo) == []
