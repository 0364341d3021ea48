"""Walk one function in program order and collect its graph-break sites.

Each site is a `Site`: the rule code, the ast node, and what the rules need to judge
a mend (the kinds of names at that point, the static part of a condition).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Optional

from graphmend.analysis.astwalk import arg_names, preorder
from graphmend.analysis.astwalk import walk as fast_walk  # ast.walk's nodes and order, without contexts/operators
from graphmend.analysis.conditions import Extracted, Translator, name_condition, numeric_comparison, arm_value_test
from graphmend.analysis.numpy_attrs import class_attr_is_array
from graphmend.analysis.dataflow import (TENSOR_MAP, Env, Kind, cast_value, compiling_guard, container_of_tensors,
                                         imports, int_keyed, trees_or_numbers, zipped)
from graphmend.analysis.indices import (INPLACE_RESHAPES, element_is_scalar_or_mask, int_expr, int_names, over_range,
                                        rank_of, stated_ranks)
from graphmend.analysis.intermediates import computed, computed_names, is_intermediate, requires_grad_flag
from graphmend.analysis.masks import bool_mask_names, boolean_expr, truth_names, unpacked_masks
from graphmend.analysis.none_uses import NoneUses
from graphmend.analysis.path_facts import PathFacts
from graphmend.analysis.skipped_calls import (DATA_NOTE, TQDM, UNTRACEABLE, progress_bar_attr,
                                              torch_utils_data)
from graphmend.analysis.symbols import (ClassInfo, FunctionInfo, Symbols, _statements, called_methods, function_refs,
                                        lineage, local_class, method_aliases, overrides, param_defaults,
                                        _self_attrs, registered_name, self_attr_stores, single_assignments, statement_targets)
from graphmend.analysis.type_tests import (TENSOR_TYPES, any_tensor_tests, is_none_test, is_tensor_test,
                                           isinstance_classes, isinstance_containers, isinstance_numbers, method_names,
                                           none_binding, none_compare, none_tests, not_number_test, not_tensor_unless,
                                           tensor_tests)
from graphmend.findings import Condition

LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical",
                         "fatal", "log", "warning_once", "info_once", "warning_advice"})
LOGGER_NAMES = frozenset({"logger", "_logger", "log", "LOGGER", "LOG", "_LOGGER", "_log"})
HELD_LOGGER_NAMES = frozenset({"logger", "_logger", "LOGGER", "_LOGGER"})
LSTSQ = "`torch.linalg.lstsq()`"  # GM402's detail; rules/unmendable.py declines it with its reason
# numpy functions that make an array (or a 0-dim one) from their arguments: Dynamo traces them as
# torch ops, so a value read from what they return is a data-dependent operator (measured on
# torch 2.13 for prod, cumsum, asarray, sum; for arange, linspace and zeros, and any/all of a
# Python list, `if np.any([s > 2 for s in x.shape]):`, "generic_jump NumpyNdarrayVariable()":
# tntorch's `for d in np.arange(t.dim())`, realcode round 28). Not numpy's scalar math on a Python
# number (`np.sqrt(d)` gives a numpy float Dynamo keeps as a constant).
NUMPY_ARRAY_FUNCS = frozenset(f"numpy.{f}" for f in (
    "prod", "sum", "cumsum", "cumprod", "array", "asarray", "concatenate", "stack", "diff", "amax", "amin",
    "argmax", "argmin", "mean", "arange", "linspace", "zeros", "ones", "full", "any", "all",
    # comparisons: an array even of Python numbers (`if np.less(a, np.inf):` breaks with `a` a
    # float, measured on torch 2.13; poutyne's early stopping, realcode round 32)
    "less", "greater", "less_equal", "greater_equal", "equal", "not_equal", "isnan", "isinf", "isfinite",
    "logical_and", "logical_or", "logical_not"))
_NUMPY_ARRAY_NAMES = frozenset(q.rsplit(".", 1)[1] for q in NUMPY_ARRAY_FUNCS)
# numpy reductions: without an axis, one (0-dim) value
NUMPY_REDUCTIONS = frozenset(f"numpy.{f}" for f in ("prod", "sum", "amax", "amin", "argmax", "argmin", "mean",
                                                     "any", "all"))
# numpy functions of an array's shape, dtype or type, not its values: no array whose truth a branch
# takes (measured on torch 2.13 with `.numpy()` of a tensor: `np.shape(a)[0] == 3` traces; `np.ndim`,
# `np.size`, `np.result_type`, `np.can_cast` break on another count, "torch.* op returned
# non-Tensor", GB0208, which is no jump on a value)
NUMPY_STATIC_FUNCS = frozenset(f"numpy.{f}" for f in (
    "shape", "ndim", "size", "result_type", "dtype", "isscalar", "iscomplexobj", "isrealobj", "can_cast",
    "promote_types", "finfo", "iinfo", "issubdtype"))
DATA_BOOL_FUNCS = frozenset({"torch.equal", "torch.allclose", "torch.is_nonzero"})
# math functions that give a tensor given tensors (`math.prod([a, b])` multiplies them; measured on
# torch 2.13: every other function of math that takes numbers reads a tensor into a Python float)
MATH_OF_TENSORS = frozenset({"math.prod"})
# Scalar multipliers a tensor passed to is read into Python ("Data dependent operator", GB0033:
# torchode's `torch.add(atol, ..., alpha=self.rtol)`, a buffer). Measured on torch 2.13, each entry
# in tests/test_precision_guards.py; the in-place add_/addcmul_/addcdiv_ and torch.addcdiv trace.
SCALAR_KWARG_FUNCS = {"torch.add": ("alpha",), "torch.sub": ("alpha",), "torch.subtract": ("alpha",),
                      "torch.rsub": ("alpha",), "torch.addcmul": ("value",), "torch.addmm": ("alpha", "beta"),
                      "torch.addmv": ("alpha", "beta"), "torch.baddbmm": ("alpha", "beta"),
                      "torch.addbmm": ("alpha", "beta"), "torch.addr": ("alpha", "beta")}
SCALAR_KWARG_METHODS = {"add": ("alpha",), "sub": ("alpha",), "sub_": ("alpha",), "addcmul": ("value",),
                        "addcdiv": ("value",), "addmm": ("alpha", "beta"), "addmm_": ("alpha", "beta"),
                        "baddbmm": ("alpha", "beta")}
DYNAMIC_SHAPE_FUNCS = frozenset({"nonzero", "unique", "unique_consecutive", "masked_select",
                                 "argwhere", "bincount", "repeat_interleave"})
# torch factories and the parameters Dynamo must know as Python numbers while tracing (sizes,
# bounds): a tensor there is read into Python ("Data dependent operator", GB0033). Each entry:
# (positional indices, keyword names, whether positional arguments from the first index on are
# the `*size` varargs). Only these parameters count: `linspace(t0, t1, 8)` with tensor bounds and
# `full(size, t)` with a tensor fill value trace into one graph (measured, torch 2.13), while a
# tensor `steps`, `end` or size breaks. A tuple or list given as a size counts element-wise.
SIZE_FACTORIES = {
    "torch.arange": ((0, 1, 2), ("start", "end", "step"), False),
    "torch.linspace": ((2,), ("steps",), False),
    "torch.logspace": ((2,), ("steps",), False),
    "torch.zeros": ((0,), ("size",), True), "torch.ones": ((0,), ("size",), True),
    "torch.empty": ((0,), ("size",), True), "torch.randn": ((0,), ("size",), True),
    "torch.rand": ((0,), ("size",), True),
    "torch.full": ((0,), ("size",), False),
    "torch.randint": ((0, 1, 2), ("low", "high", "size"), False),
    "torch.eye": ((0, 1), ("n", "m"), False),
    "torch.nn.functional.one_hot": ((1,), ("num_classes",), False),
    # a tensor among the pad widths is read into Python (GB0033 "Data dependent operator", measured
    # on torch 2.13: speculative-decoding's `F.pad(out, (0, num_pad_left.amax()))`)
    "torch.nn.functional.pad": ((1,), ("pad",), False),
    # each measured on torch 2.13 with a 0-dim tensor there (explain: "Data dependent operator");
    # torch-pme's `torch.fft.fftfreq(ns[0], ...)` (realcode round 29)
    "torch.fft.fftfreq": ((0, 1), ("n", "d"), False), "torch.fft.rfftfreq": ((0, 1), ("n", "d"), False),
    "torch.randperm": ((0,), ("n",), False),
    "torch.tril_indices": ((0, 1, 2), ("row", "col", "offset"), False),
    "torch.triu_indices": ((0, 1, 2), ("row", "col", "offset"), False),
    "torch.hann_window": ((0,), ("window_length",), False), "torch.hamming_window": ((0,), ("window_length",), False),
    "torch.blackman_window": ((0,), ("window_length",), False),
    "torch.bartlett_window": ((0,), ("window_length",), False),
    "torch.kaiser_window": ((0,), ("window_length",), False),
}
# tensor methods and the parameters they read as Python numbers (as SIZE_FACTORIES): a tensor
# there breaks (GB0033, each measured on torch 2.13 with a 0-dim tensor from the data: `x.reshape(-1,
# n)`, `x.view(n, -1)`, `x.new_zeros(n)`, `x.repeat(n, 1)`, `x.expand(n, -1, -1)`, `x.narrow(0, 0,
# n)`, `x.reshape((-1, n))`), and so does a numpy value (pythae's `x.reshape(-1,
# np.prod(self.input_dim))`, realcode round 31); `torch.tensor(6)` there does not
SIZE_METHODS = {
    "view": ((0,), ("size",), True), "reshape": ((0,), ("shape",), True), "expand": ((0,), ("size",), True),
    "repeat": ((0,), ("repeats",), True), "tile": ((0,), ("dims",), True),
    "new_zeros": ((0,), ("size",), True), "new_ones": ((0,), ("size",), True),
    "new_empty": ((0,), ("size",), True), "new_full": ((0,), ("size",), False),
    "narrow": ((1, 2), ("start", "length"), False), "unflatten": ((1,), ("sizes",), False),
}
# torch functions whose result Dynamo does not compute while tracing, even from Python numbers:
# several elements, or random (FunctionWalker._constant_call)
NOT_CONSTANT_FUNCS = frozenset({"tensor", "as_tensor", "ones_like", "zeros_like", "full_like", "empty_like",
                                "rand_like", "randn_like", "randint_like", "normal", "bernoulli", "multinomial",
                                "poisson", "stack", "cat", "cartesian_prod", "meshgrid", "from_numpy"})
CONSTANT_METHODS = frozenset({"long", "int", "float", "double", "half", "to", "floor", "ceil", "round", "trunc",
                              "abs", "clone", "detach", "sqrt", "exp", "log", "neg"})
# Decorators that make Dynamo skip a function (a GM403 at its calls). Not `torch.jit.ignore` nor
# `torch.jit.unused`: they concern TorchScript only, and Dynamo inlines such a function like any
# other (measured, torch 2.13; vector-quantize-pytorch's `@torch.jit.ignore` codebook init breaks
# inside, on its own tensor branch).
DISABLE_DECORATORS = ("torch.compiler.disable", "torch._dynamo.disable", "torch._disable_dynamo")


@dataclass
class Site:
    code: str
    node: ast.AST  # the call, or the `if`/`while`/`assert`/IfExp statement or expression
    func: FunctionInfo
    kinds: dict[str, Kind]  # local kinds at this point
    test: Optional[ast.expr] = None  # the data-dependent part of a condition
    static_test: list[ast.expr] = field(default_factory=list)  # static conjuncts (`and` prefix)
    detail: str = ""  # e.g. "logger.warning_once", "`.item()`"
    note: Optional[str] = None
    gb_id: Optional[str] = None  # when it differs from the rule's usual Dynamo id
    use: Optional[str] = None  # GM501: where the value that stays None fails (text, with its line)
    # GM201 whose condition reads a tensor into Python (`h.mean().item() > 0.5`): `test` is the
    # tensor condition it stands for; this says how it was translated and whether exactly
    extracted: Optional[Extracted] = None
    condition: Optional[Condition] = None  # the break needs this (a dtype, self.training, config)
    # names whose truth the condition tests and which may be None there (`if predicted_variance`
    # after `predicted_variance = None` on another path): no tensor condition keeps that test
    maybe_none: tuple[str, ...] = ()
    # the tensors the condition reads, each of which may be a Python number instead (the break's
    # condition names them): the tensor ops of a mend do not take a number
    maybe_number: tuple[str, ...] = ()
    # array backend namespaces of the function (`nx = get_backend(...)`, dataflow.Env.backends):
    # its arrays may be numpy's, which torch.where / torch.cond do not take
    backends: tuple[str, ...] = ()
    # the condition is a numpy array Dynamo traces as a tensor (`.numpy()` of one, numpy's functions
    # of it): in eager mode it is numpy's, which torch.where / torch.cond do not take
    numpy_test: bool = False


@dataclass(frozen=True)
class CallFact:
    """A call from the walked function to a function of this file or of a module the workspace
    finds, with the arguments that are tensors where it is made (analysis/callers.py seeds the
    callee's parameters with them)."""

    node: ast.Call
    module: str  # the callee's module (dotted)
    qualname: str  # "func", "Class.method"
    skip: int  # the leading parameters the call does not give: 1 for `self.m(...)` (the instance),
    # 1 or 2 for `F.apply(...)` of an autograd Function (`ctx`, and `cls` for a classmethod forward)
    # the tensor arguments: (position, keyword, the argument)
    tensors: tuple[tuple[Optional[int], Optional[str], ast.expr], ...]
    # the call goes through an attribute holding an instance of the class (attr_types.py): the
    # method of a subclass may run instead
    virtual: bool = False
    # the tensor arguments that are boolean masks where the call is made, by (position, keyword)
    masks: frozenset = frozenset()
    # the arguments that are dicts holding tensors only (dataflow.TENSOR_MAP), by (position, keyword)
    maps: frozenset = frozenset()


class FunctionWalker:
    """One forward pass over a function body: updates kinds, records sites."""

    def __init__(self, symbols: Symbols, fi: FunctionInfo, seeds: Optional[dict[str, object]] = None):
        self.symbols = symbols
        self.fi = fi
        self.env = Env(symbols, fi, seeds)
        self.sites: list[Site] = []
        # calls passing tensors to functions the analysis can walk, by id() of the call and the
        # target (a loop body is walked twice: the second walk's kinds are kept)
        self.calls_out: dict[tuple, CallFact] = {}
        self._refs: Optional[dict[str, list[ast.expr]]] = None  # symbols.function_refs, when needed
        self._masks: Optional[dict[str, ast.expr]] = None  # bool_mask_names, when needed
        self._aug_targets: set[int] = set()  # id() of augmented assignments' targets (read, then stored)
        # names bound to a boolean mask by the statement walked last that bound them, with the
        # block of that statement: `mask = (row >= 0) & (col >= 0)` after `mask = ...new_full(...)`
        self._flow_masks: dict[str, tuple[ast.expr, int]] = {}
        # names bound to a 0-dim tensor the frame computed (`i = y.argmax()`), with the block of
        # that binding, as `_flow_masks`
        self._zero_dims: dict[str, int] = {}
        # names bound to the items of iterating a tensor (`for idx in perm:`), with the tensor and
        # the loop body's block: 0-dim tensors when the tensor is 1-d
        self._items: dict[str, tuple[ast.expr, int]] = {}
        self._ints: Optional[frozenset[str]] = None  # int_names, when needed
        self._single: Optional[dict[str, ast.expr]] = None  # single_assignments, for rank_hint
        self._ranks: Optional[dict[str, int]] = None  # stated_ranks, for rank_hint
        self._reshaped: set[str] = set()
        self._blocks: list[int] = []  # id() of the statement lists being walked, outermost first
        self._maybe_none: Optional[set[str]] = None  # maybe_none_names, when needed
        self._seen: set[int] = set()
        self._local_loggers: Optional[set[str]] = None
        self._computed: Optional[frozenset[str]] = None  # intermediates.computed_names, when needed
        self._numpy_names: set[str] = set()  # names last bound to a numpy array (track_numpy)
        self._numpy_nodes: set[int] = set()  # id() of loads of a comprehension's target over one
        self._numpy_items: set[str] = set()  # names a loop binds to a numpy array's items
        # names (and item loads) that hold a numpy array only on one side of a test: (test, truth)
        self._numpy_conds: dict[str, tuple[ast.expr, bool]] = {}
        self._numpy_node_conds: dict[int, tuple[ast.expr, bool]] = {}
        # attributes `self.x` this frame stored a computed tensor in, on every path to here
        self._computed_attrs: set[str] = set()
        self._shadowed: set[int] = set()  # id() of loads of any other comprehension target
        self._narrowed: dict[str, str] = {}  # name -> class, in the body of `if isinstance(name, C):`
        # names a test proves tensors where the walk is (the body of `if isinstance(x, Tensor) and
        # ...:`): what may be a number elsewhere (Env.number_or_tensor) is a tensor here
        self._proven: frozenset = frozenset()
        self._assumed: frozenset = frozenset()  # names a conditional expression's test makes tensors in its arm
        self._extracted: set[int] = set()  # id() of `.item()`/float()/... calls a GM201 site stands for
        self.path: list[tuple[ast.expr, bool]] = []  # (test, truth) of the ifs around the statement
        self.guard_names: dict[str, bool] = {}  # locals bound to a compile-time test, by value under Dynamo
        self._reads: dict[str, tuple] = {}  # name -> (assignment, read call, tensor, how): `v = t.item()`
        self._numbers: Optional[dict[int, set[str]]] = None  # GM401/402: see numbers_at
        # name -> (optional name tested, kind when it is None, kind when not): see record_none_split
        self.none_splits: dict[str, tuple[str, Kind, Kind]] = {}
        # id() of a node inside a later operand of `and`/`or` -> (earlier operand, the truth it must
        # have for the later one to run): `self.training and p > 0 and random() < p`
        self._short_circuit: dict[int, list[tuple[ast.expr, bool]]] = {}
        self._short_circuit_seen: set[int] = set()
        self._arms: dict[int, list[tuple[ast.expr, bool]]] = {}  # the tests of the IfExps a node is an arm of
        self._ifexp_of_test: dict[int, ast.IfExp] = {}
        self._ranged: Optional[frozenset[int]] = None  # id() of lambdas applied to a range's ints
        # inside a lambda's body: its parameters that are ints, and those that shadow the function's
        self._lambda_ints: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
        self.facts = PathFacts()  # tensor on some paths only, empty on some paths (path_facts.py)

    def run(self) -> list[Site]:
        self.default_lambdas()
        self.block(self.fi.node.body)
        from graphmend.rules.route import claim_sites  # [Route]: expert-dispatch loops (GM601)
        from graphmend.rules.masked import claim_sites as claim_masked  # GM602-GM604
        from graphmend.rules.one_hot import claim_sites as claim_one_hot  # GM606
        self.sites = claim_masked(claim_sites(self.sites, self.fi, self.symbols), self.fi, self.symbols)
        self.sites = claim_one_hot(self.sites, self.fi, self.symbols)
        return self.sites

    def add(self, code: str, node: ast.AST, **kw) -> None:
        # after a break the tensors live here are inputs of the frame Dynamo resumes in, and a 0-dim
        # input as an index traces (measured): what is known of 0-dim names ends here (also on a
        # loop body's second walk, where the site is known already)
        self._zero_dims.clear()
        self._items.clear()
        key = (code, id(node))
        if key in self._seen:
            return
        self._seen.add(key)
        short = self._short_circuit.get(id(node), [])
        arms = self._arms.get(id(node), [])
        static = [(t, True) for t in kw.get("static_test", ())]
        conjuncts = self.path + short + arms + static
        values = kw.pop("values", None) or []
        values = values + [(e, pol) for e, pol in short + static
                           if numeric_comparison(e) and self.env.kind(e) < Kind.DATA]
        values += [(e, pol) for e, pol in arms if self.env.kind(e) < Kind.DATA and (
            _grad_flag(e) or arm_value_test(e, pol) and not _same_read(node, self._ifexp_of_test[id(e)], pol))]
        # `bool(signed.item()) if isinstance(signed, Tensor) else signed`, `isinstance(bias, QT) and
        # not torch.allclose(bias.scale, s)`, `if isinstance(x, QT) and (x.zero_point != 0.0).any():`:
        # the site runs only where the type test holds (brevitas' `Union[bool, Tensor]` flags and
        # QuantTensor handlers, realcode round 37)
        values += [(e, pol) for e, pol in short + arms + static if self.type_test_of(e, node)]
        whole = getattr(node, "test", None) if code in ("GM201", "GM301") else None
        if isinstance(whole, ast.BoolOp) and isinstance(whole.op, ast.Or) and all(
                isinstance(v, ast.BoolOp) and isinstance(v.op, ast.And) and self.type_test_of(v.values[0], v)
                for v in whole.values):
            # `if (isinstance(a, QT) and (a.zero_point != 0.0).any()) or (isinstance(b, QT) and ...):`
            # (brevitas' int_torch_handler, realcode round 37): one of the type tests must hold
            values.append((ast.BoolOp(op=ast.Or(), values=[v.values[0] for v in whole.values]), True))
        subject = kw.pop("subject", None)  # what of the node the break reads, where not all of it
        either, names = self.tensor_or_number(subject if subject is not None else
                                              kw.get("test") if kw.get("test") is not None else node)
        if either is not None:
            values.append((either, True))
            # a name bound to `<static> and/or <tensor test>` is a Python bool otherwise, which the
            # [Where] mend takes through `torch.as_tensor` (tests/regressions/mends/
            # boolop_python_operand_where.py): named, not declined
            kw["maybe_number"] = tuple(n for n in names if n not in self.env.bool_or_tensor)
        if code in ("GM201", "GM301") and kw.get("test") is not None:
            maybe = [n for n in truth_names(kw["test"]) if n in self.maybe_none_names()
                     and self.env.kinds.get(n) is Kind.TENSOR]
            if maybe:  # monai's `torch.log(v) if v else w`, `v = None` on the fixed-variance path
                kw["maybe_none"] = tuple(dict.fromkeys(maybe))
                values += [(is_tensor_test(n), True) for n in kw["maybe_none"]]
        cond = name_condition(conjuncts, self.env.qualify, values) if conjuncts or values else None
        if self.env.backends():
            kw["backends"] = tuple(sorted(self.env.backends()))
        if code in ("GM201", "GM301") and kw.get("test") is not None and kw.get("extracted") is None \
                and self.numpy_truth(kw["test"]):
            kw["numpy_test"] = True
        self.sites.append(Site(code, node, self.fi, dict(self.env.kinds), condition=cond, **kw))

    def maybe_none_names(self) -> set[str]:
        """Names bound to None somewhere in the function (`v = None`, `a, v = x, None`) and
        parameters whose default is None: where their truth is tested, the test may be a None
        test (computed once per walk)."""
        if self._maybe_none is None:
            node = self.fi.node
            out = {n for n, d in param_defaults(node.args).items() if isinstance(d, ast.Constant) and d.value is None}
            for n in fast_walk(node):
                if isinstance(n, ast.Assign) and len(n.targets) == 1:
                    t = n.targets[0]
                    names = [t.id] if isinstance(t, ast.Name) else \
                        [x.id for x in t.elts if isinstance(x, ast.Name)] if isinstance(t, (ast.Tuple, ast.List)) else []
                    out |= {name for name in names if none_binding(n, name)}
            self._maybe_none = out
        return self._maybe_none

    def tensor_or_number(self, e: ast.AST) -> tuple[Optional[ast.expr], tuple[str, ...]]:
        """When every tensor name `e` reads may also be a Python number (a parameter typed
        `t0: Union[float, Tensor]` or documented `(float or Tensor)`; an item of a call some of whose
        returns give a tensor there, Env.bind), the break needs one of them to be a tensor:
        (`isinstance(t0, torch.Tensor) or ...` as one expression, the names); else (None, ())."""
        either = self.env.number_or_tensor
        if not either or isinstance(e, (ast.If, ast.While)):
            return None, ()
        names = []
        for n in fast_walk(e):
            if isinstance(n, ast.Name) and self.env.kind(n) is Kind.TENSOR:
                if n.id not in either or n.id in self._proven:
                    return None, ()
                if n.id not in names:
                    names.append(n.id)
            elif isinstance(n, ast.Attribute) and self.env.kind(n) is Kind.TENSOR \
                    and isinstance(n.value, ast.Name) and n.value.id == "self":
                return None, ()  # a tensor held by the module
        if not names:
            return None, ()
        trees = trees_or_numbers(self.fi.node)
        tests = [not_number_test(x) if x in trees else is_tensor_test(x) for x in names]
        return (tests[0] if len(tests) == 1 else ast.BoolOp(ast.Or(), tests)), tuple(names)

    # --- statements --------------------------------------------------------------------------
    def block(self, body: list[ast.stmt]) -> None:
        self._blocks.append(id(body))
        depth = len(self.path)
        for stmt in body:
            t = type(stmt)
            if t in _MAYBE_SKIPPED:  # a loop body may not run, a try body may stop anywhere
                held = set(self._computed_attrs)
                self.stmt(stmt)
                self._computed_attrs &= held
            else:
                self.stmt(stmt)
                if t is ast.Assign or t is ast.AugAssign or t is ast.AnnAssign:
                    self.note_attr_store(stmt)
            self.track_numpy(stmt)
            if isinstance(stmt, ast.If) and self.exit_test(stmt):
                break  # the rest is never traced
        del self.path[depth:]
        self._blocks.pop()

    def exit_test(self, s: ast.If) -> bool:
        """After `if not self.training: return h` (or a `raise`, `continue`, `break`, or an `else`
        that leaves), the rest of the block runs only where the test took the other side: that
        side joins the path, so a site there says what it breaks under ("when the module is
        training"). After a compile-time test whose traced side leaves (`if is_compiling():
        return out`), the rest is never traced: True."""
        body_exits, else_exits = always_exits(s.body), always_exits(s.orelse)
        if body_exits == else_exits:
            return False
        guard = compiling_guard(s.test, self.symbols, self.env.kind, self.guard_names)
        if guard is not None:
            return guard if body_exits else not guard
        self.path.append((s.test, else_exits))
        return False

    def flow_bindings(self, s: ast.stmt) -> None:
        """Keep `_flow_masks` and `_zero_dims` as of after `s`: a name rebound to anything else is
        neither a mask nor a 0-dim tensor (`out[mask] = v` does not rebind mask)."""
        if self._flow_masks or self._zero_dims or self._items:
            for name in _bound_names(s, stored_only=True):
                self._flow_masks.pop(name, None)
                self._zero_dims.pop(name, None)
                self._items.pop(name, None)
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)):
            return
        name, block = s.targets[0].id, self._blocks[-1] if self._blocks else 0
        # a name in the value counts when it is a mask by this same flow, or by the function's
        # single bindings once they are known (computing those for every assignment was 2-3 s of a
        # check of transformers' models/)
        if boolean_expr(s.value, self._known_mask):
            self._flow_masks[name] = (s.value, block)
        if self.zero_dim(s.value):
            self._zero_dims[name] = block

    def zero_dim(self, e: ast.expr) -> bool:
        """`e` is a 0-dim tensor the frame computes: a reduction over all elements (`y.argmax()`,
        `t.sum()`, `torch.max(t)`: no dim), a cast or copy of one, a comparison or arithmetic of
        one with Python numbers or another such, or a name bound to one in this flow."""
        if isinstance(e, ast.Name):
            block = self._zero_dims.get(e.id)
            return block is not None and block in self._blocks
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd, ast.Invert)):
            return self.zero_dim(e.operand)
        if isinstance(e, (ast.BinOp, ast.Compare)):
            sides = [e.left, e.right] if isinstance(e, ast.BinOp) else [e.left, *e.comparators]
            return any(self.zero_dim(x) for x in sides) and all(
                self.zero_dim(x) or self.env.kind(x) is Kind.STATIC for x in sides)
        if not isinstance(e, ast.Call):
            return False
        func = e.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name not in FULL_REDUCTIONS and name not in ZERO_DIM_CASTS:  # most calls: nothing to look up
            return False
        if any(k.arg != "dtype" for k in e.keywords):
            return False
        if isinstance(func, ast.Attribute) and name in ZERO_DIM_CASTS:
            return self.zero_dim(func.value)
        if isinstance(func, ast.Attribute) and not e.args:
            return self.env.kind(func.value) is Kind.TENSOR and not _module_ref(func.value, self.env.qualify)
        if len(e.args) != 1 or name not in FULL_REDUCTIONS:
            return False
        q = self.env.qualify(func) or ""
        return q == f"torch.{name}" and self.env.kind(e.args[0]) is Kind.TENSOR

    def element_index(self, e: ast.expr, outer: ast.Subscript, parts: list) -> Optional[tuple[ast.expr, bool]]:
        """(the tensor, whether it is 1-d for certain) when `e`, an index of `outer`, takes one
        element of a tensor by a Python int (`order[i]`, `order[-1]`, `order[j + 1]`), else None.
        Not of a tensor that is 2-d for certain or a tuple of tensors (`idx = x.nonzero()`,
        `torch.where(c)`: an element is a 1-d index, advanced indexing), nor of a mask. Of one
        whose rank is not known, only by an int that varies (a loop's, a counter; by a literal,
        `edge_index[0]` is most often a row) and does not index `outer` itself too
        (`x[b][idx[b]]`, `y[i, perm[i]]`: a loop over a batch, taking a row of each)."""
        if not (isinstance(e, ast.Subscript) and isinstance(e.ctx, ast.Load)) or self.env.kind(e.value) is not Kind.TENSOR:
            return None
        if self._ints is None:
            self._ints = int_names(self.fi.node, self._int_keyed_result)
        more, fewer = self._lambda_ints
        ints = (self._ints | more) - fewer if more or fewer else self._ints
        if not int_expr(e.slice, ints) or self.is_mask_expr(e.value):
            return None
        rank = self.rank_hint(e.value)
        if rank == 1:
            return e.value, True
        names = {n.id for n in fast_walk(e.slice) if isinstance(n, ast.Name)}
        if rank is not None or not names:
            return None
        around = [outer.value, *(x for x in parts if x is not e and not isinstance(x, ast.Subscript))]
        if any(isinstance(n, ast.Name) and n.id in names for x in around for n in fast_walk(x)):
            return None
        return e.value, False

    def _int_keyed_result(self, value: ast.expr) -> bool:
        """`value` calls a function of this file annotated to return a dict keyed by ints
        (`comparable = self._get_comparable_and_tied_time(event, time)`, `-> dict[int, Tensor]`)."""
        found = self.env.callee(value, local=True)
        node = found[1].node if found is not None else None
        return node is not None and int_keyed(node.returns)

    def single_bindings(self) -> dict[str, ast.expr]:
        """Locals bound once in the function, to their value (symbols.single_assignments), and
        the names a method reshapes in place (`idx.squeeze_(1)`), computed at the first ask."""
        if self._single is None:
            self._single = single_assignments(self.fi.node)
            self._reshaped = {n.func.value.id for n in fast_walk(self.fi.node)
                              if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                              and n.func.attr in INPLACE_RESHAPES and isinstance(n.func.value, ast.Name)}
        return self._single

    def rank_hint(self, e: ast.expr):
        """1 or 2 where the code fixes the rank of the tensor `e`, "tuple" for a tuple of tensors,
        else None: what a name bound once in the function is bound to (not one a method reshapes
        in place, `idx.squeeze_(1)`)."""
        if isinstance(e, ast.Name):
            single = self.single_bindings()
            if e.id in self._reshaped:
                return None
            value = single.get(e.id)
            if isinstance(value, ast.Call) and (rank := rank_of(value)) is not None:
                return rank
            if self._ranks is None:
                self._ranks = stated_ranks(self.fi.node)
            return self._ranks.get(e.id)
        return rank_of(e) if isinstance(e, ast.Call) else None

    def tensor_item(self, e: ast.expr, comp_items: dict[int, ast.expr]) -> Optional[ast.expr]:
        """The tensor whose iteration bound the name `e` (a loop's target in this flow, or a load of
        a comprehension's target), or None."""
        if not isinstance(e, ast.Name):
            return None
        if id(e) in comp_items:
            return comp_items[id(e)]
        held = self._items.get(e.id)
        return held[0] if held is not None and held[1] in self._blocks else None

    def comprehension_items(self, comp: ast.expr, out: dict[int, ast.expr]) -> None:
        """The loads, in a comprehension, of a target that iterates a tensor (`for l in lengths`,
        `for i, l in enumerate(lengths)`): id() -> the tensor."""
        for gen in comp.generators:
            iterable, target = _enumerated(gen.iter, gen.target, self.env.locals)
            if not isinstance(target, ast.Name) or not _may_iterate_a_tensor(iterable, self.env):
                continue
            loads: set[int] = set()
            for part in [*_element_parts(comp), *(c for g in comp.generators for c in g.ifs)]:
                _mark_loads(part, {target.id}, loads)
            out.update(dict.fromkeys(loads, iterable))

    def _known_mask(self, e: ast.expr) -> bool:
        if not isinstance(e, ast.Name):
            return False
        held = self._flow_masks.get(e.id)
        return (held is not None and held[1] in self._blocks) or (self._masks is not None and e.id in self._masks)

    def stmt(self, s: ast.stmt) -> None:  # noqa: C901 - dispatch
        env = self.env
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return  # nested definitions are walked as functions of their own when reached
        if self._flow_masks or self._zero_dims or self._items or isinstance(s, ast.Assign):
            self.flow_bindings(s)
        if self.none_splits or self.facts:
            bound = _bound_names(s)  # what the statement rebinds loses what was known of it
            if bound:
                self.forget_splits(bound)
                self.facts.forget(bound)
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                and _empty_tensor(s.value, self.env.qualify):
            self.facts.empty.add(s.targets[0].id)
        if isinstance(s, ast.Assign):
            self.exprs(s.value)
            k = env.kind(s.value)
            if k is Kind.TENSOR and isinstance(s.value, ast.UnaryOp) and isinstance(s.value.op, ast.Not):
                k = Kind.DATA  # `p = not t`: a Python bool (the break is at the `not`, above)
            for t in s.targets:
                self.exprs(t)
                if isinstance(t, ast.Attribute) and t.attr == "requires_grad":
                    self.requires_grad(t.value, t, "setting `requires_grad` of", "GB0206")
                env.bind(t, k, s.value)
            self.bind_guard(s)
            self.bind_read(s)
        elif isinstance(s, ast.AnnAssign):
            if s.value is not None:
                self.exprs(s.value)
                env.bind(s.target, env.kind(s.value), s.value)
                if isinstance(s.target, ast.Name) and (box := container_of_tensors(s.annotation)) is not None:
                    env.containers[s.target.id] = box  # `coords: List[List[Tensor]] = []`
        elif isinstance(s, ast.AugAssign):
            if isinstance(s.target, (ast.Subscript, ast.Attribute)):
                # `q1[cos_omega < 0, :] *= -1` reads its target before it stores it (roma's slerp,
                # realcode round 22): its index and the read are walked as a load's
                self._aug_targets.add(id(s.target))
                self.exprs(s.target)
            self.exprs(s.value)
            if isinstance(s.target, ast.Name):
                env.bind(s.target, max(env.kind(s.target), env.kind(s.value)))
        elif isinstance(s, ast.If):
            self.if_stmt(s)
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            self.exprs(s.iter)
            it = env.iter_kind(s.iter)
            target = s.target
            iterable, target = _enumerated(s.iter, target, env.locals)
            if iterable is not s.iter:
                env.bind(s.target.elts[0], Kind.STATIC)  # the index; rows of a tensor are tensors
                it = env.iter_kind(iterable)
            if pairs := zipped(target, iterable, env.locals):
                # `for a, b in zip(xs, ys)`: each name takes what iterating its own iterable gives
                for t, a in pairs:
                    env.bind(t, _item_kind(env.iter_kind(a)))
            else:
                env.bind(target, _item_kind(it))
            env.bind_items(target, iterable)
            if isinstance(target, ast.Name) and _may_iterate_a_tensor(iterable, env):
                self._items[target.id] = (iterable, id(s.body))
            item = self.numpy_item_target(s.iter, s.target)
            item_cond = self.numpy_cond(s.iter) if item is not None and self._numpy_conds else None
            for _ in range(2):  # loop-carried kinds: a second pass settles most
                if item is not None:  # each pass starts an iteration (track_numpy drops it after the loop)
                    self._numpy_names.add(item)
                    self._numpy_items.add(item)
                    if item_cond is not None:
                        self._numpy_conds[item] = item_cond
                self.block(s.body)
            self.block(s.orelse)
        elif isinstance(s, ast.While):
            self.cond(s, s.test)
            for _ in range(2):
                self.block(s.body)
            self.block(s.orelse)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                self.exprs(item.context_expr)
                if item.optional_vars is not None:
                    env.bind(item.optional_vars, Kind.UNKNOWN)
            self.block(s.body)
        elif isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
            self.block(s.body)
            for h in s.handlers:
                if h.name:
                    env.bind(ast.Name(h.name), Kind.STATIC)
                self.block(h.body)
            self.block(s.orelse)
            self.block(s.finalbody)
        elif isinstance(s, ast.Assert):
            if _dynamo_asserts(s):
                self.exprs(s.test, truth=True)  # what the test reads may still break (`.item()`), not the assert
            else:
                self.cond(s, s.test)
            if s.msg is not None:
                self.exprs(s.msg)
        elif isinstance(s, (ast.Return, ast.Expr)):
            if s.value is not None:
                self.exprs(s.value)
        elif isinstance(s, ast.Raise):
            if s.exc is not None:
                self.exprs(s.exc)
        elif isinstance(s, ast.Match):
            self.exprs(s.subject)
            for c in s.cases:
                self.block(c.body)
        else:
            for child in ast.iter_child_nodes(s):
                if isinstance(child, ast.expr):
                    self.exprs(child)

    def bind_guard(self, s: ast.Assign) -> None:
        """`is_tracing = torch.jit.is_tracing() or ... or is_torchdynamo_compiling()`: the name is
        True under Dynamo, so `if not is_tracing and ...:` is never traced."""
        g = None
        if len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            g = compiling_guard(s.value, self.symbols, self.env.kind, self.guard_names)
        for t in s.targets:
            for n in fast_walk(t):
                if isinstance(n, ast.Name):
                    self.guard_names.pop(n.id, None)
        if g is not None:
            self.guard_names[s.targets[0].id] = g

    def bind_read(self, s: ast.Assign) -> None:
        for t in s.targets:
            for n in fast_walk(t):
                if isinstance(n, ast.Name):
                    self._reads.pop(n.id, None)
        if len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            ex = Translator(self.env.kind, self.env.qualify).extraction(s.value)
            if ex is not None:
                self._reads[s.targets[0].id] = (s, ex[2], ex[0], ex[1])
            reads = [x for x in self.sites if x.code == "GM401" and x.note is None]
            if reads:  # most assignments follow no read: the walk of the value only for those that do
                inner = {id(n) for n in fast_walk(s.value)}
                reads = [x for x in reads if id(x.node) in inner]
            use = self.sizing_use(s.targets[0].id, s) if reads else None
            if use is not None:
                for site in reads:
                    site.note = (f"the value sizes a tensor (`{use[0]}` at line {use[1]}): its shape would "
                                 "depend on the data, which no tensor rewrite keeps")

    def sizing_use(self, name: str, after: ast.stmt) -> Optional[tuple[str, int]]:
        """Where a local read from a tensor sizes one (`torch.zeros(n)`, `x.view(n, -1)`, `x[:n]`,
        `range(n)`), after its assignment: (source, line)."""
        sizing = (*SIZE_METHODS, "split")
        uses = lambda e: any(isinstance(n, ast.Name) and n.id == name for n in fast_walk(e))  # noqa: E731
        for n in fast_walk(self.fi.node):
            if getattr(n, "lineno", 0) <= after.lineno:
                continue
            if isinstance(n, ast.Call):
                q = self.env.qualify(n.func) or ""
                meth = n.func.attr if isinstance(n.func, ast.Attribute) else ""
                if (q in SIZE_FACTORIES or q == "range" or meth in sizing) and any(
                        uses(a) for a in [*n.args, *(k.value for k in n.keywords)]):
                    return ast.unparse(n)[:60], n.lineno
            if isinstance(n, ast.Slice) and any(uses(b) for b in (n.lower, n.upper, n.step) if b is not None):
                return ast.unparse(n)[:60], n.lineno
        return None

    def if_stmt(self, s: ast.If) -> None:
        guard = compiling_guard(s.test, self.symbols, self.env.kind, self.guard_names)
        if guard is True:  # only the body is traced
            self.block(s.body)
            return
        if guard is False:
            self.compile_only_none(s)
            self.block(s.orelse)
            return
        self.cond(s, s.test)
        static_test = self.env.kind(s.test) is Kind.STATIC
        before = dict(self.env.kinds)
        either_before = set(self.env.number_or_tensor)
        facts_before = self.facts
        self.facts = facts_before.copy()
        self.path.append((s.test, True))
        none_body, none_else = none_tests(s.test)
        self.assume_none(none_body)
        is_tensor, not_tensor = tensor_tests(s.test, self.symbols)
        # `if isinstance(a, Tensor) or isinstance(b, Tensor):`: where it is false, neither is one
        none_tensor = any_tensor_tests(s.test, self.symbols)
        for name in is_tensor:
            self.env.kinds[name] = Kind.TENSOR  # `if torch.is_tensor(x):` / `isinstance(x, Tensor)`
        proven_before = self._proven
        # a tensor in the body, whatever else it may be elsewhere (also a conjunct's: `if
        # isinstance(other, Tensor) and other.numel() <= 1:`)
        conjuncts = s.test.values if isinstance(s.test, ast.BoolOp) and isinstance(s.test.op, ast.And) else ()
        self._proven = proven_before.union(is_tensor, *(tensor_tests(v, self.symbols)[0] for v in conjuncts))
        for name in not_tensor:
            if self.env.kinds.get(name) is Kind.TENSOR:
                self.env.kinds[name] = Kind.UNKNOWN
        for name in [*not_tensor_unless(s.test, self.symbols, False, self.fi.node),
                     *isinstance_containers(s.test, self.symbols, True)]:
            if self.env.kinds.get(name) is Kind.TENSOR:
                self.env.kinds[name] = Kind.UNKNOWN
        for name in isinstance_numbers(s.test, self.symbols):
            # `if isinstance(mean, (int, float)):` a Python number in the body (kornia's gaussian:
            # `float(mean)` there is no read of a tensor; Dynamo does not trace the body for one)
            self.env.kinds[name] = Kind.STATIC
        narrowed_before = self._narrowed
        narrowed = isinstance_classes(s.test, self.symbols)
        if narrowed:
            self._narrowed = {**narrowed_before, **narrowed}
        numpy_before = set(self._numpy_names)
        conds_before = dict(self._numpy_conds) if self._numpy_conds else {}
        attrs_before = set(self._computed_attrs)
        self.block(s.body)
        attrs_body, self._computed_attrs = self._computed_attrs, attrs_before
        self._narrowed = narrowed_before
        self.path[-1] = (s.test, False)
        after_body, facts_body = self.env.kinds, self.facts
        self.env.kinds, self.facts = dict(before), facts_before.copy()
        either_body, self.env.number_or_tensor = self.env.number_or_tensor, either_before
        # the else side does not see the body's arrays (POT's `if m is None: m = np.min(...)` then
        # `elif m < 0:`, a number there); after the if, a name either side made an array may be one
        numpy_body, self._numpy_names = self._numpy_names, numpy_before
        for name in [*is_tensor, *none_tensor, *not_tensor_unless(s.test, self.symbols, True, self.fi.node),
                     *isinstance_containers(s.test, self.symbols, False)]:
            # the else side: not a tensor (gpytorch's dtype-or-tensor argument; pomegranate's
            # `isinstance(parameter, vector)`, `vector = (numpy.ndarray, torch.Tensor, ...)`)
            if self.env.kinds.get(name) is Kind.TENSOR:
                self.env.kinds[name] = Kind.UNKNOWN
        for name in not_tensor:
            self.env.kinds[name] = Kind.TENSOR
        self._proven = proven_before.union(not_tensor)
        self.assume_none(none_else)
        self.block(s.orelse)
        self._proven = proven_before
        for name in numpy_body ^ self._numpy_names:  # an array on one side only: named with the test
            # (the first such test kept: `if dim is None: dim = np.arange(...)`, then `if not
            # hasattr(dim, "__len__"): dim = [dim]` rebinding it on one side again)
            self._numpy_conds[name] = conds_before.get(name) or self._numpy_conds.get(name) or (
                s.test, name in numpy_body)
        self._numpy_names |= numpy_body
        body_exits, else_exits = always_exits(s.body), always_exits(s.orelse)
        # a name a tensor or a number on one side that goes on is one after the if, unless the
        # other side made it a tensor (xitorch's `if s is None: s = 1.0` after `s, phi1 =
        # search(...)`, `s` a tensor on some paths; not botorch's `if type(eta) is not Tensor:
        # eta = torch.full(...)`)
        if either_body or self.env.number_or_tensor:
            sides = [(names, kinds) for names, kinds, exits in (
                (either_body, after_body, body_exits), (self.env.number_or_tensor, self.env.kinds, else_exits))
                if not exits or body_exits == else_exits]
            either = set().union(*(names for names, _ in sides))
            for names, kinds in sides:
                either -= {n for n in either if n not in names and kinds.get(n) is Kind.TENSOR}
            self.env.number_or_tensor = either
        if not body_exits and not else_exits and any(before.get(n) is not Kind.TENSOR for n in is_tensor):
            # `if isinstance(embed_dim, Tensor): head_dim = embed_dim.div(...)` / `else: head_dim =
            # embed_dim // num_heads`: what the tensor side binds to a tensor, and the other side
            # does not, is a tensor only where the test held (brevitas' QuantMultiheadAttention,
            # realcode round 37); a read of it breaks only when it is one
            bound_body = {n for st in s.body for n in _bound_names(st, stored_only=True)}
            self.env.number_or_tensor |= {n for n in bound_body if after_body.get(n) is Kind.TENSOR
                                          and self.env.kinds.get(n) is not Kind.TENSOR}
            # and the tested name itself, a tensor where the test held (`assert head_dim * num_heads
            # == embed_dim`, `embed_dim` an int unpacked from a shape otherwise)
            self.env.number_or_tensor |= {n for n in is_tensor if before.get(n) is not Kind.TENSOR
                                          and self.env.kinds.get(n) is not Kind.TENSOR}
        if not body_exits and not else_exits and s.orelse:
            # a name one side binds to a tensor and the other to a Python number is either after
            # the if: a read of it breaks only when it is a tensor (ranger21's `variance_normalized =
            # torch.pow(...)` under `if self.use_madgrad:`, `math.sqrt(...)` else, then
            # `math.isnan(variance_normalized)`: realcode round 36)
            numbers = number_bindings(s.body) ^ number_bindings(s.orelse)
            self.env.number_or_tensor |= {n for n in numbers if Kind.TENSOR in (after_body.get(n), self.env.kinds.get(n))}
        if body_exits != else_exits:  # only the side that runs on reaches what follows
            self._computed_attrs = set(self._computed_attrs if body_exits else attrs_body)
        else:
            self._computed_attrs &= attrs_body
        self.path.pop()
        if isinstance(s.test, ast.Compare) and len(none_body) == 1:
            self.record_none_split(none_body[0], after_body, self.env.kinds)
        self.facts = self.facts.merged(s.test if static_test else None, after_body, facts_body, self.env.kinds)
        kept = {n: self.env.kinds[n] for n in [*is_tensor, *none_tensor] if n in self.env.kinds}
        self.env.merge(after_body)
        if kept and body_exits and not else_exits:
            # the body returns or raises: after the if, only the else side's values go on
            # (torchdr's `check_neighbor_param`: a tensor branch that returns, then `if n_samples
            # <= 1: raise` on Python ints; the parameters' `.device` read in that branch is no
            # evidence below it; realcode round 27)
            self.env.kinds.update(kept)

    # --- values that depend on whether an optional argument is None ------------------------------
    # `if cache_position is not None: past = cache_position[0] (a tensor) else: past = 0` and,
    # later, `if cache_position is None: torch.arange(past, ...)`: on the path that reaches the
    # arange, `past` is the int. For each name whose kind differs between the two sides of such a
    # test, the kind on each side is kept (until the name or the tested one is rebound) and used
    # inside a later branch on the same test (Hugging Face's cache_position / past length).
    def record_none_split(self, test: tuple[str, bool], body: dict, orelse: dict) -> None:
        name, is_none = test
        none_side, other = (body, orelse) if is_none else (orelse, body)
        for n in set(body) | set(orelse):
            if n != name and none_side.get(n, Kind.STATIC) != other.get(n, Kind.STATIC):
                self.none_splits[n] = (name, none_side.get(n, Kind.STATIC), other.get(n, Kind.STATIC))

    def assume_none(self, tests: list[tuple[str, bool]]) -> None:
        for tested, is_none in tests:
            for n, (name, k_none, k_other) in self.none_splits.items():
                if name == tested:
                    self.env.kinds[n] = k_none if is_none else k_other

    def forget_splits(self, names: set[str]) -> None:
        if self.none_splits:
            self.none_splits = {n: v for n, v in self.none_splits.items()
                                if n not in names and v[0] not in names}

    def compile_only_none(self, s: ast.If) -> None:
        """GM501: `if X is None and not is_compiling(): X = <default>` leaves X None under
        torch.compile; report it when X is then dereferenced on the path after the if."""
        shape = compile_only_default(s, self.symbols)
        if shape is None:
            return
        name, guard = shape
        use = NoneUses(self.symbols).after(s, self.fi, name)
        if use is not None:
            self.add("GM501", s, test=guard, detail=name, use=use.describe(),
                     note="Dynamo then falls back to eager for the whole function, so no other "
                          "mend inside it shows until this one is applied")

    def scalar_condition(self, test: ast.expr) -> tuple[Optional[Extracted], Optional[ast.expr], list]:
        """A condition that reads a tensor into Python (`x.item() > c`, `bool(t)`), as the tensor
        condition it stands for: (translation, data-dependent part, static conjuncts), or Nones."""
        bound = self.single_use_reads(test)
        saved = {n: self.env.kinds.get(n) for n in bound}
        for n in bound:
            self.env.kinds[n] = Kind.TENSOR  # once its read is undone the name holds the tensor
        tr = Translator(self.env.kind, self.env.qualify, bound).translate(test)
        dd, static = self.split_condition(tr.test) if tr is not None else (None, [])
        used = {n for n in bound if tr is not None and any(c is bound[n][0] for c, _ in tr.bindings)}
        for n, k in saved.items():
            if dd is None or n not in used:
                self.env.kinds[n] = k
        if tr is None or dd is None:
            return None, None, []
        self._extracted |= tr.calls  # one finding for the branch, not one more for each read
        if tr.bindings:  # the read's own GM401, recorded at its assignment, is this branch's break
            claimed = {id(c) for c, _ in tr.bindings}
            self.sites = [x for x in self.sites if not (x.code == "GM401" and id(x.node) in claimed)]
        return tr, dd, static

    def single_use_reads(self, test: ast.expr) -> dict:
        """Locals in `test` bound once, earlier in the same block, to a read of a fresh tensor
        (`flag = mask.any().item()`, `v = float(x.max())`) and read nowhere else: the read can be
        undone (`flag = mask.any()`) and the branch decided on the tensor."""
        out = {}
        for n in fast_walk(test):
            if isinstance(n, ast.Name) and n.id in self._reads:
                stmt, call, tensor, how = self._reads[n.id]
                if _uses(self.fi.node, n.id) == (1, 1) and isinstance(tensor, ast.Call) \
                        and _fresh_tensor(tensor):
                    out[n.id] = (call, tensor, how)
        return out

    def cond(self, owner: ast.AST, test: ast.expr) -> None:
        """Record a data-dependent condition; its operands are scanned for other sites."""
        tr = None
        if isinstance(owner, ast.If) and not _is_guard(owner):
            tr, dd, static = self.scalar_condition(test)
        self.exprs(test, truth=True)
        if tr is None:
            dd, static = self.split_condition(test)
        if dd is None:
            return
        code = "GM201"
        if isinstance(owner, ast.If) and _is_guard(owner):
            code = "GM301"
        elif isinstance(owner, ast.Assert):
            code = "GM301"
        note = None
        if static:
            note = "only when " + " and ".join(ast.unparse(t) for t in static)
        values = self.facts.tensor_condition(dd) if tr is None else None
        if tr is None and dd is test and isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
            # `if last_layer_only or n == 0:` takes the tensor's truth only when the static
            # operands before it are false (torchbnn's kl loss, realcode round 24)
            values = (values or []) + [(v, False) for v in self.static_prefix(test)]
        self.add(code, owner, test=dd, static_test=static, note=note, extracted=tr,
                 gb_id=_extraction_gb(tr), values=values)

    def type_test_of(self, test: ast.expr, node: ast.AST) -> bool:
        """`test` is `isinstance(x, ...)` or `torch.is_tensor(x)` of a name `node` reads, and says
        something the walk did not know otherwise: a test of another class than a tensor, or of a
        tensor where `x` is no tensor outside the arm (`_assumed`) or not known as one."""
        if not (isinstance(test, ast.Call) and len(test.args) >= 1 and isinstance(test.args[0], ast.Name)):
            return False
        name = test.args[0].id
        q = self.env.qualify(test.func) or ""
        if q not in ("isinstance", "torch.is_tensor"):
            return False
        if not any(isinstance(n, ast.Name) and n.id == name for n in fast_walk(node)):
            return False
        tensor = name in tensor_tests(test, self.symbols)[0]
        return not tensor or name in self._assumed or self.env.kinds.get(name) is not Kind.TENSOR

    def arm_tensors(self, node: ast.AST) -> list[str]:
        """The names not known as tensors that the tests of the conditional expressions `node` is
        an arm of prove tensors there (`torch.is_tensor(l)`, `isinstance(l, torch.Tensor)`, true
        for the body, their `not` for the else arm)."""
        out = []
        for test, holds in self._arms.get(id(node), ()):
            yes, no = tensor_tests(test, self.symbols)
            out += [n for n in (yes if holds else no) if self.env.kinds.get(n) is not Kind.TENSOR]
        return out

    def static_prefix(self, b: ast.BoolOp) -> list[ast.expr]:
        """The static operands of `b` before its first operand that is not static."""
        out = []
        for i, v in enumerate(b.values):
            if self.operand(b, i)[0] is not Kind.STATIC:
                break
            out.append(v)
        return out

    def split_condition(self, test: ast.expr) -> tuple[Optional[ast.expr], list[ast.expr]]:
        """(data-dependent part, static `and` conjuncts before it) or (None, [])."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            static = []
            for i, v in enumerate(test.values):
                k, truth = self.operand(test, i)
                if k is Kind.STATIC:
                    static.append(v)
                    continue
                if truth:
                    rest = test.values[i:]
                    dd = rest[0] if len(rest) == 1 else ast.BoolOp(ast.And(), rest)
                    if len(rest) > 1:
                        ast.copy_location(dd, rest[0])
                        dd.end_lineno, dd.end_col_offset = rest[-1].end_lineno, rest[-1].end_col_offset
                    return dd, static
                return None, []
            return None, []
        if self.env.kind(test) is Kind.TENSOR and self.truth_of_tensor(test):
            return test, []
        if self.numpy_truth(test):
            return test, []
        return None, []

    def bound_call(self, e: ast.expr) -> tuple[Optional[ast.Call], str]:
        """The call a local `e` is bound to (every binding of it that one call) and its callee's
        qualified name, else (None, "")."""
        bound = self.single_bindings().get(e.id) if isinstance(e, ast.Name) else None
        if not isinstance(bound, ast.Call):
            return None, ""
        return bound, self.env.qualify(bound.func) or ""

    def backward_runner(self, e: ast.expr) -> bool:
        """`e` holds an Accelerate `Accelerator` or a Lightning `Fabric`: a local bound to one's
        constructor, or a name or attribute called `accelerator` or `fabric` (`self._accelerator`)."""
        name = e.id if isinstance(e, ast.Name) else e.attr if isinstance(e, ast.Attribute) else None
        if name is None:
            return False
        call, q = self.bound_call(e)
        if call is not None:
            return q.rsplit(".", 1)[-1] in ("Accelerator", "Fabric") and q.split(".", 1)[0] in (
                "accelerate", "lightning", "lightning_fabric")
        return name.strip("_") in ("accelerator", "fabric")

    def data_object(self, e: ast.expr) -> Optional[str]:
        """The torch.utils.data class a local holds (`ds = TensorDataset(x, y)`, every binding of
        it such a call), else None."""
        _, q = self.bound_call(e)
        cls = q.rsplit(".", 1)[-1]
        return cls if torch_utils_data(q) and cls[:1].isupper() else None

    def optimizer(self, e: ast.expr) -> bool:
        """`e` holds a torch optimizer: a parameter annotated as one (`optimizer: Optimizer`), a
        local bound to `torch.optim.<Class>(...)`, or a name or attribute named as one (`optimizer`,
        `opt`, `self.optim`, `actor_optimizer`, cooper's `primal_optimizer`), but not a local bound
        to an instance of a class of this module that defines a `zero_grad` of its own and derives
        from no optimizer."""
        name = e.id if isinstance(e, ast.Name) else e.attr if isinstance(e, ast.Attribute) else None
        if name is None:
            return False
        if isinstance(e, ast.Name):
            bound, q = self.bound_call(e)
            if bound is not None:
                if isinstance(bound.func, ast.Name) and _own_zero_grad(self.symbols, bound.func.id):
                    return False
                if q.startswith("torch.optim.") and q.rsplit(".", 1)[-1][:1].isupper():
                    return True
            args = self.fi.node.args
            if any(a.arg == name and a.annotation is not None and "Optimizer" in ast.unparse(a.annotation)
                   for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)):
                return True  # `o: Optimizer`, `optimizer: Optional[torch.optim.Optimizer]`
        return bool(_OPTIMIZER_NAME.match(name))

    def numpy_truth(self, e: ast.expr) -> bool:
        """Python takes the truth of an array Dynamo traces as a tensor (numpy_value): `if c < 1:`
        with `c = max_norm / (np.linalg.norm(...) + 1e-6)` jumps on a tensor (GB0170, "generic_jump
        NumpyNdarrayVariable()", measured on torch 2.13: pfrl's clip_l2_grad_norm_, realcode round 19)."""
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            return self.numpy_truth(e.operand)
        return isinstance(e, (ast.Name, ast.Call, ast.Compare)) and self.numpy_value(e)

    def truth_of_tensor(self, e: ast.expr) -> bool:
        """Whether Python takes the truth of a tensor's VALUE here (not of a static part)."""
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            return self.truth_of_tensor(e.operand)
        if isinstance(e, ast.BoolOp):
            return any(self.operand(e, i)[1] for i in range(len(e.values)))
        return self.env.kind(e) is Kind.TENSOR

    def operand(self, b: ast.BoolOp, i: int) -> tuple[Kind, bool]:
        """(kind, whether Python takes the truth of a tensor's value) of operand `i` of `b`, with
        the names the operands before it prove no tensor where it runs (they were false for an
        `or`, true for an `and`): pytorch-optimizer's `isinstance(c, torch.Tensor) or c != 1.0`
        compares a Python number (realcode round 11)."""
        v, kinds, saved = b.values[i], self.env.kinds, {}
        both = isinstance(b.op, ast.And)
        for prev in b.values[:i]:
            if isinstance(prev, (ast.Call, ast.UnaryOp)):
                yes, no = tensor_tests(prev, self.symbols)
                # after `isinstance(s, str) and ...` s is a str (torchmin's `x_scale == 'jac'`, round 13)
                python = isinstance_numbers(prev, self.symbols) if both else []
                saved.update((n, Kind.TENSOR) for n in [*(no if both else yes), *python]
                             if kinds.get(n) is Kind.TENSOR)
        if not saved:
            k = self.env.kind(v)
            return k, k is Kind.TENSOR and self.truth_of_tensor(v)
        for n in saved:
            kinds[n] = Kind.UNKNOWN
        try:
            k = self.env.kind(v)
            return k, k is Kind.TENSOR and self.truth_of_tensor(v)
        finally:
            kinds.update(saved)

    # --- expressions -------------------------------------------------------------------------
    def exprs(self, e: ast.expr, truth: bool = False) -> None:
        """Sites in `e`; `truth`: `e` is a condition whose truth `cond` reports (so are the tests
        of conditional expressions in it)."""
        lambdas: list[ast.Lambda] = []
        nodes = _walk_expr(e, lambdas)
        bound = self._comprehension_tensors(nodes)
        try:
            self._exprs(e, nodes, truth)
        finally:
            for name in bound:
                self.env.kinds.pop(name, None)
                self.env.containers.pop(name, None)
        for lam in lambdas:
            self.lambda_body(lam)

    def ranged_lambdas(self) -> frozenset[int]:
        if self._ranged is None:
            self._ranged = over_range(self.fi.node)
        return self._ranged

    def default_lambdas(self) -> None:
        """A lambda given as a parameter's default runs where the function calls the parameter, and
        an annotation `Callable[[A, B, ...], R]` types its parameters: ignite's `output_transform:
        Callable[[Any, Any, Any, torch.Tensor], Any] = lambda x, y, y_pred, loss: loss.item()`
        (GB0124 in the compiled step, realcode round 22)."""
        a = self.fi.node.args
        params = [*a.posonlyargs, *a.args]
        pairs = [*zip(params[len(params) - len(a.defaults):], a.defaults),
                 *((k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None)]
        for p, d in pairs:
            if isinstance(d, ast.Lambda):
                types = _callable_arg_types(p.annotation, self.env.qualify)
                names = [x.arg for x in (*d.args.posonlyargs, *d.args.args)]  # the positional ones the types match
                self.lambda_body(d, {n: Kind.TENSOR for n, t in zip(names, types) if t in TENSOR_TYPES})

    def lambda_body(self, lam: ast.Lambda, known: Optional[dict] = None) -> None:
        """Sites in a lambda's body, which Dynamo traces where the lambda is called (torchsurv's
        `groupby(..., key=lambda i: self.time[order[i]])`, realcode round 23): the names it closes
        over are the function's; its parameters are of kinds nothing shows (or `known` gives)."""
        params = arg_names(lam.args)
        kinds, containers = self.env.kinds, self.env.containers
        saved = [(n, kinds.get(n), containers.get(n)) for n in params]
        for n in params:
            kinds[n] = (known or {}).get(n, Kind.UNKNOWN)
            containers.pop(n, None)
        scope = self._lambda_ints
        # `groupby(range(n), key=lambda i: ...)`: the parameter is an int (torchsurv's `key=lambda
        # i: self.time[order[i]]`, realcode round 23); otherwise it is no int the function has
        ranged = id(lam) in self.ranged_lambdas() and len(params) == 1
        self._lambda_ints = (scope[0] | set(params), scope[1] - set(params)) if ranged else \
            (scope[0] - set(params), scope[1] | set(params))
        try:
            self.exprs(lam.body)
        finally:
            self._lambda_ints = scope
            for n, k, c in saved:
                if k is None:
                    kinds.pop(n, None)
                else:
                    kinds[n] = k
                if c is not None:
                    containers[n] = c

    def _comprehension_tensors(self, nodes: list) -> list[str]:
        """Bind, for the walk of one expression, a comprehension's target that iterates a tensor
        (what iterating a tensor gives is a tensor: a row, or a 0-dim element), as a `for`
        statement's target is: `{names[fi.item()]: ... for fi in frame_indices}` reads an element
        into Python as the loop does (pytorch-kinematics' chain.py, realcode round 29). Only a
        name not bound in the function: the comprehension's own scope never shadows a local here.
        Returns the names bound (unbound again after the walk)."""
        comps = [n for n in nodes if isinstance(n, _COMPREHENSIONS)]
        if not comps:
            return []
        env, out = self.env, []
        for comp in comps:  # parents first: an inner generator may iterate an outer target
            for gen in comp.generators:
                pairs = zipped(gen.target, gen.iter, env.locals) or [(gen.target, gen.iter)]
                for t, it in pairs:  # `for c, n in zip(coords, nodes)`: each its own iterable
                    if isinstance(t, ast.Name) and t.id not in env.locals and t.id not in env.kinds:
                        if env.iter_kind(it) is Kind.TENSOR:
                            env.kinds[t.id] = Kind.TENSOR
                            out.append(t.id)
                        elif env.iter_container(it) == "sequence" and t.id not in env.containers:
                            env.containers[t.id] = "sequence"  # a list of tensors (unbound with it)
                            out.append(t.id)
        return out

    def _exprs(self, e: ast.expr, nodes: list, truth: bool) -> None:
        tested = {id(n) for n in nodes if isinstance(n, ast.BoolOp)} if truth else set()
        truth_of: Optional[set[int]] = None  # _truth_positions, computed at the first `not`
        for b in nodes:
            if isinstance(b, ast.BoolOp) and id(b) not in self._short_circuit_seen:
                self._short_circuit_seen.add(id(b))
                holds = isinstance(b.op, ast.And)  # what the operands before were, where `v` runs
                for i, v in enumerate(b.values[1:], 1):
                    before = [(w, holds) for w in b.values[:i]]
                    for n in ast.walk(v):
                        self._short_circuit[id(n)] = self._short_circuit.get(id(n), []) + before
            elif isinstance(b, ast.IfExp) and id(b) not in self._short_circuit_seen:
                # an arm runs only where the test is true (false): a break in it is conditional
                # as one in an operand of `and` is (higher's `p if p.requires_grad else
                # torch.tensor([], requires_grad=True)` for frozen parameters, realcode round 30)
                # What a condition names (a dtype, self.training, a config attribute), a
                # `requires_grad` test and a comparison with a number count (poutyne's
                # `tuple(m.tolist()) if len(m) <= 1 else (m,)`, realcode round 32), not a test
                # that something is not empty: `int(i.max()) + 1 if i.numel() > 0 else 0` guards an
                # empty input, and is no condition a user wants a real break demoted for.
                self._short_circuit_seen.add(id(b))
                self._ifexp_of_test[id(b.test)] = b
                for arm, holds in ((b.body, True), (b.orelse, False)):
                    for n in ast.walk(arm):
                        self._arms[id(n)] = self._arms.get(id(n), []) + [(b.test, holds)]
        if self._numpy_names or self._numpy_nodes or imports(self.symbols, "numpy"):
            for node in nodes:
                # over a name bound to an array, or over a numpy call (`for d in np.arange(t.dim())`)
                if isinstance(node, _COMPREHENSIONS) and (self._numpy_names or self._numpy_nodes or any(
                        isinstance(g.iter, ast.Call) for g in node.generators)):
                    self.numpy_comprehension(node)
        comp_items: dict[int, ast.expr] = {}  # id() of loads of a comprehension's target over a tensor
        for node in nodes:
            if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) \
                    and not isinstance(node.operand, (ast.BoolOp, ast.UnaryOp)) \
                    and id(node) not in (truth_of := truth_of if truth_of is not None
                                         else self._truth_positions(e, nodes, truth)) \
                    and self.env.kind(node.operand) is Kind.TENSOR and self.truth_of_tensor(node.operand):
                # `p = not t`: Python reads the tensor's truth at the `not` (Dynamo breaks there:
                # explain's step_unsupported, measured on torch 2.13), and `p` is a Python bool
                # (xitorch's RK45 `prev_rejected = not accepted`, realcode round 29). Not of an
                # `and`/`or` or another `not`: their own operands' truth is read first (and
                # reported there); what they give is mostly a bool
                self.add("GM201", node, test=node.operand)
            if isinstance(node, ast.Call):
                # `l.squeeze().tolist() if torch.is_tensor(l) else l`: in the arm the test proves
                # `l` a tensor (torchnlp's `lengths_to_mask`, realcode round 35)
                assumed = self.arm_tensors(node)
                with self.env.assuming(assumed, Kind.TENSOR):
                    kept, self._assumed = self._assumed, self._assumed.union(assumed)
                    try:
                        self.call(node)
                    finally:
                        self._assumed = kept
            elif isinstance(node, _COMPREHENSIONS):  # before its element (pre-order)
                self.comprehension_items(node, comp_items)
            elif isinstance(node, ast.BoolOp) and id(node) not in tested:
                self.operand_truth(node)
            elif isinstance(node, ast.IfExp):
                tested.update(id(n) for n in fast_walk(node.test) if isinstance(n, ast.BoolOp))
                tr, dd, static = self.scalar_condition(node.test)
                if tr is None:
                    dd, static = self.split_condition(node.test)
                if dd is not None:
                    self.add("GM201", node, test=dd, static_test=static, extracted=tr,
                             gb_id=_extraction_gb(tr))
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and self.percent_of_tensor(node):
                # `"%8.2e" % t` formats the tensor's value (GB0033, `%s`, `%d`, `%r` alike; an
                # f-string does not break, measured on torch 2.13): torchsparsegradutils'
                # `settings.logger.info("Initial residual = %8.2e" % residNorm0)`, realcode round 31
                self.add("GM401", node, detail="`%`-formatting of a tensor", gb_id="GB0033")
            elif isinstance(node, ast.Subscript):
                sl = node.slice
                # a read `x[x > 0]` has a data-dependent shape; an assignment `y[m] = v` is an
                # index_put that Dynamo traces (measured, torch 2.13): only loads are reported.
                # What a boolean tensor indexes is a tensor (or an array) even where the walk does
                # not know it (circle_loss' `mat[pos_mask_bool]`, `mat` from `self.distance(...)`)
                # A value indexed by an elementwise comparison of itself (`losses[losses > low]`,
                # threshold_reducer's `low_condition = losses > self.low`, then
                # `losses[low_condition]`) is an array whatever the walk knows of it: a Python
                # number or list ordered against a number raises (TypeError).
                parts = sl.elts if isinstance(sl, ast.Tuple) else [sl]  # `x[m]`, `x[m, :]`
                value_kind = self.env.kind(node.value)
                # A mask may be combined or reshaped in the brackets (torchani's
                # `pairs[:, mask.view(-1)]`, `x[~m]`, `x[m1 & m2]`: boolean_expr).
                read = not isinstance(node.ctx, ast.Store) or id(node) in self._aug_targets
                masked = value_kind in (Kind.TENSOR, Kind.UNKNOWN) and read and any(
                    self.is_mask_expr(x) or self.compares_itself(node.value, x) for x in parts)
                if masked:
                    self.add("GM402", node, detail="boolean-mask indexing")
                elif read and (self._numpy_names or self._numpy_nodes) and self.numpy_value(node.value) and any(
                        self.numpy_value(x) for x in parts if isinstance(x, ast.Compare)):
                    # a numpy array indexed by a comparison of arrays (torch-ac's `indexes =
                    # indexes[(indexes + self.recurrence) % self.num_frames_per_proc != 0]`, realcode
                    # round 36): Dynamo traces numpy as tensors, and the mask's nonzero has a
                    # data-dependent shape (GB0036, measured on torch 2.13)
                    masked = True
                    self.add("GM402", node, detail="boolean-mask indexing of a numpy array (Dynamo traces numpy as "
                                                   "tensors)", gb_id="GB0036")
                if self.env.item_container(node.value) is not None:
                    # a Python list or tuple of tensors indexed or sliced by a tensor: the index
                    # is read with `Tensor.__index__`, an `.item()` (GB0124, measured on torch
                    # 2.13; TorchCRF's `score[seq_end_idx]`, `path[:seq_end_idx]`; an item of a
                    # list of such lists, torch-interpol's `[c[n] for c, n in zip(coords, nodes)]`)
                    index = [b for b in (sl.lower, sl.upper, sl.step) if b is not None] \
                        if isinstance(sl, ast.Slice) else [sl]
                    if any(self.proven_tensor(b, node) for b in index):
                        self.add("GM401", node, detail=f"a tensor as an index of the list `{ast.unparse(node.value)}` "
                                                       "(`Tensor.__index__`)", gb_id="GB0124")
                if read and not masked and (self._numpy_items or self._numpy_nodes or imports(self.symbols, "numpy")) and (
                        item := next((x for x in parts if (
                            isinstance(x, (ast.Call, ast.BinOp)) or self._numpy_items or self._numpy_nodes)
                            and self.numpy_item(x)), None)) is not None:
                    # an item of a numpy array as an index, of a shape, a list, a tensor or another
                    # array: Dynamo traces numpy as tensors, so the item is a 0-dim tensor read into
                    # Python (GB0033, measured on torch 2.13; tntorch's `t.shape[d]` for `d in
                    # np.arange(t.dim())`, realcode round 28); named with the test where the array
                    # is one on one side of it only (`if dim is None: dim = np.arange(...)`)
                    cond = self.numpy_cond(item) if self._numpy_conds or self._numpy_node_conds else None
                    self.add("GM401", node, detail="a numpy array's item as an index (Dynamo traces numpy as "
                                                   "tensors)", gb_id="GB0033", values=[cond] if cond else None)
                elif value_kind is Kind.TENSOR and not masked and any(self.zero_dim(x) for x in parts):
                    # a 0-dim tensor the frame computed as an index (`x[y.argmax()]`, `x[i] = v`,
                    # `x[t.sum() > 0] = 0`): its value is read into Python (GB0033, measured on
                    # torch 2.13; a 1-d index tensor is advanced indexing, and traces)
                    self.add("GM401", node, detail="a 0-dim tensor as an index", gb_id="GB0033")
                elif value_kind is Kind.TENSOR and not masked and (got := next(filter(None, (
                        self.element_index(x, node, parts) for x in parts)), None)) is not None:
                    # an element of a tensor (`time[order[i]]`, `order = torch.argsort(time)`, `i` a
                    # Python int): 0-dim when that tensor is 1-d, and read into Python as an index
                    # (GB0033, measured on torch 2.13; of a 2-d tensor a row, which traces). Where
                    # the rank is not in the code, named with its condition (torchsurv's cindex.py)
                    held, certain = got
                    name = ast.unparse(held)
                    self.add("GM401", node, detail=f"an element of `{name}` as an index" if certain else
                             f"an element of `{name}` as an index (a row, when `{name}` is boolean, as a mask)",
                             gb_id="GB0033", values=[] if certain else [(element_is_scalar_or_mask(held), True)])
                elif value_kind is Kind.TENSOR and not masked and (self._items or comp_items):
                    # an item of iterating a tensor (`for idx in perm: y[..., idx] = ...`,
                    # `[final[:, i, l] for i, l in enumerate(lengths)]`): 0-dim when the tensor is
                    # 1-d, and then read into Python (GB0033, and the loop's frame is skipped; an
                    # item of a 2-d tensor is a 1-d index, which traces: measured on torch 2.13).
                    # The rank is not in the code: the break is named with its condition.
                    held = next(filter(None, (self.tensor_item(x, comp_items) for x in parts)), None)
                    # not `d[k] for k in d`: a mapping the walk took for a tensor, iterated for its
                    # keys (monai's checkpoint `["network_weights"]`, torchmetrics' `res1[k] for k in
                    # res1` under `isinstance(res1, Mapping)`)
                    if held is not None:  # `cast(torch.LongTensor, permutation)`: name `permutation`
                        held = cast_value(held, self.env.qualify) or held
                    if held is not None and ast.dump(node.value) != ast.dump(held):
                        name = ast.unparse(held)
                        self.add("GM401", node, detail=f"an item of iterating `{name}` as an index (a row, when "
                                                       f"`{name}` is boolean, as a mask)",
                                 gb_id="GB0033", values=[(element_is_scalar_or_mask(held), True)])
                bounds = [b for x in parts if isinstance(x, ast.Slice) for b in (x.lower, x.upper, x.step)
                          if b is not None]
                # whatever is sliced (a tensor, or a value the walk does not know: e2cnn's
                # `input.tensor[:, indices[0]:indices[1]]`), a tensor bound is read into Python
                if value_kind in (Kind.TENSOR, Kind.UNKNOWN) and any(self.env.kind(b) is Kind.TENSOR for b in bounds):
                    self.add("GM401", node, detail="slicing with tensor-valued bounds", gb_id="GB0038")

    @staticmethod
    def _truth_positions(e: ast.expr, nodes: list, truth: bool) -> set[int]:
        """id() of the nodes of `e` whose truth a condition takes, and whose `not` is therefore
        the condition's (reported with it): `e` itself when it is one, the operands of `and`/`or`
        but the last of a value's (operand_truth reports those), what `not` negates there, the
        test of a conditional expression, a comprehension's `if`s."""
        out: set[int] = {id(e)} if truth else set()
        for n in nodes:  # parents first
            if isinstance(n, ast.BoolOp):
                out.update(id(v) for v in (n.values if id(n) in out else n.values[:-1]))
            elif isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not) and id(n) in out:
                out.add(id(n.operand))
            elif isinstance(n, ast.IfExp):
                out.add(id(n.test))
            elif isinstance(n, _COMPREHENSIONS):
                out.update(id(x) for g in n.generators for x in g.ifs)
        return out

    def operand_truth(self, b: ast.BoolOp) -> None:
        """An `and` / `or` that is not a condition still takes the truth of every operand but the
        last: a tensor there is a jump on its value (POT's `is_perm = (n == m) and (a == a.sum() /
        n).all() and ...`, measured: Dynamo breaks on that line, GB0170). Static operands before
        it are the condition it breaks under. Not a name that may be None: `size = size or
        (h, w)` defaults an optional argument, whatever the walk took it for (a tuple, a type,
        torch_geometric's and monai's), and a tensor there would be an error, not a branch."""
        static = []
        for i, v in enumerate(b.values[:-1]):
            k, truth = self.operand(b, i)
            if k is Kind.STATIC:
                static.append(v)
                continue
            if isinstance(v, ast.Name) and v.id in self.maybe_none_names():
                return
            if truth:
                if isinstance(b.op, ast.Or):  # the operands before it were false
                    self.add("GM201", b, test=v, values=[(t, False) for t in static])
                    return
                note = "only when " + " and ".join(ast.unparse(t) for t in static) if static else None
                self.add("GM201", b, test=v, static_test=static, note=note)
            return

    def compares_itself(self, value: ast.expr, index: ast.expr) -> bool:
        """`index` is an ordering comparison (`<`, `<=`, `>`, `>=`; or a mask name bound to one,
        through `~`, `&`, `|`) one of whose operands is `value` itself, a name or a `self.`
        attribute. Not `==`/`!=`: a list compared so gives False, and `xs[False]` is `xs[0]`."""
        if not (isinstance(value, ast.Name) or (isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name))):
            return False
        if isinstance(index, ast.Name):  # a mask bound in this flow (`low_condition = losses > low`)
            held = self._flow_masks.get(index.id)
            if held is None or held[1] not in self._blocks or index.id == getattr(value, "id", None):
                return False
            index = held[0]
        if not isinstance(index, (ast.Compare, ast.UnaryOp, ast.BinOp)):
            return False
        want = ast.dump(value)
        todo, seen = [index], 0
        while todo and seen < 16:
            e = todo.pop()
            seen += 1
            if isinstance(e, ast.Compare):
                if all(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in e.ops) and any(
                        ast.dump(x) == want for x in [e.left, *e.comparators]):
                    return True
            elif isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Invert):
                todo.append(e.operand)
            elif isinstance(e, ast.BinOp) and isinstance(e.op, (ast.BitAnd, ast.BitOr)):
                todo += [e.left, e.right]
            elif isinstance(e, ast.Name) and self._known_mask(e) and e.id != getattr(value, "id", None):
                todo.append(self._mask_value(e.id))
        return False

    def percent_of_tensor(self, e: ast.BinOp) -> bool:
        """`"..." % v` of a string, `v` a tensor or a tuple holding one."""
        if not (isinstance(e.left, ast.Constant) and isinstance(e.left.value, str)):
            return False
        values = e.right.elts if isinstance(e.right, ast.Tuple) else [e.right]
        return any(self.env.kind(v) is Kind.TENSOR for v in values)

    def is_mask_expr(self, x: ast.expr) -> bool:
        """A boolean tensor here: a comparison of tensors, a mask name or attribute, such a mask
        combined or reshaped (torchani's `pairs[:, mask.view(-1)]`, `x[~m]`, `x[m1 & m2]`)."""
        if isinstance(x, ast.Attribute) and isinstance(x.value, ast.Attribute) \
                and isinstance(x.value.value, ast.Name) and x.value.value.id == "self":
            return self.is_mask_attr(x)  # a submodule's buffer its class registers as a mask
        return self.env.kind(x) is Kind.TENSOR and (
            isinstance(x, ast.Compare) or self.is_mask_name(x) or self.is_mask_attr(x)
            or (isinstance(x, (ast.Call, ast.UnaryOp, ast.BinOp, ast.Subscript)) and boolean_expr(x, self._mask_operand)))

    def _mask_operand(self, e: ast.expr) -> bool:
        """A mask name or mask attribute inside a boolean expression (torch-linode's
        `unique_indices[~self.P_available[unique_indices]]`, realcode round 28)."""
        return self.is_mask_name(e) or self.is_mask_attr(e)

    def is_mask_name(self, e: ast.expr) -> bool:
        """A local bound once, to a boolean tensor expression (a comparison, `~`, `&`, `|` of
        such, torch.isnan/isinf/isfinite/logical_*, another such name): `x[m]` with it reads a
        data-dependent number of entries (nflows' `inputs[outside_interval_mask]`, measured GB0036)."""
        if not isinstance(e, ast.Name):
            return False
        if self._masks is None:
            self._masks = bool_mask_names(self.fi.node, self.env.seeded_masks)
            self._masks.update(unpacked_masks(self.fi, self.env.symbols, self._masks))
        if e.id in self._masks:
            return True
        held = self._flow_masks.get(e.id)
        return held is not None and held[1] in self._blocks

    def is_mask_attr(self, e: ast.expr) -> bool:
        """`self.<attr>` that every method of the class, and of its bases in this file, stores only
        boolean tensor expressions in (nnAudio's `self.nonzero_indices = self.w_sum > 1e-10`, then
        `real[:, self.nonzero_indices]`; pytorch-kinematics' `self._revolute_mask = torch.tensor(...,
        dtype=torch.bool)` in InverseKinematics.__init__, read in a subclass: realcode round 29)."""
        cls = self.fi.cls
        if cls is None or not isinstance(e, ast.Attribute):
            return False
        if isinstance(e.value, ast.Attribute) and isinstance(e.value.value, ast.Name) and e.value.value.id == "self":
            # `self.impl.mask`, a buffer of a submodule of a class of this file (rtdl-num-embeddings'
            # PiecewiseLinearEncoding, `x[:, self.impl.mask]`, realcode round 35)
            cls = local_class(cls.attr_ctors.get(e.value.attr) or "", self.symbols)
            if cls is None:
                return False
        elif not (isinstance(e.value, ast.Name) and e.value.id == "self"):
            return False
        stores = 0
        for fi in [m for _, c in lineage(self.symbols, cls, local=True) for m in c.methods.values()]:
            for st in _statements(fi.node.body):
                if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and registered_name(st.value) == e.attr:
                    # `self.register_buffer("mask_", mask)`, `mask` a boolean expression or a local
                    # bound once to one (torchdr's UMAP `mask_affinity_in_`, realcode round 27)
                    value = st.value.args[1] if len(st.value.args) > 1 else None
                    if isinstance(value, ast.IfExp) and self.not_none_here(e) and any(
                            isinstance(a, ast.Constant) and a.value is None for a in (value.body, value.orelse)):
                        # `None if ... else <mask>`, read where it is not None (`... if self.impl.mask
                        # is None else x[:, self.impl.mask]`)
                        value = value.orelse if isinstance(value.body, ast.Constant) else value.body
                    local = bool_mask_names(fi.node) if value is not None and any(
                        isinstance(n, ast.Name) for n in fast_walk(value)) else {}
                    if value is None or not boolean_expr(value, lambda n: isinstance(n, ast.Name) and n.id in local):
                        return False
                    stores += 1
                    continue
                targets = st.targets if isinstance(st, ast.Assign) else \
                    [st.target] if isinstance(st, (ast.AnnAssign, ast.AugAssign)) else []
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Attribute) and n.attr == e.attr and isinstance(n.ctx, ast.Store) \
                                and isinstance(n.value, ast.Name) and n.value.id == "self":
                            if n is not t or not isinstance(st, ast.Assign) or not boolean_expr(st.value, lambda _: False):
                                return False
                            stores += 1
        return stores > 0

    def not_none_here(self, e: ast.expr) -> bool:
        """`e` is read where a test around it (an `if`, or a conditional expression's arm) shows
        it is not None: `x if e is None else <here>`, `if e is not None: <here>`."""
        text = ast.unparse(e)
        return any((t := none_compare(test)) is not None and holds != t[1] and ast.unparse(t[0]) == text
                   for test, holds in [*self._arms.get(id(e), ()), *self.path])

    def _mask_value(self, name: str) -> ast.expr:
        return self._masks[name] if self._masks is not None and name in self._masks else self._flow_masks[name][0]

    def call(self, c: ast.Call) -> None:
        env = self.env
        func = c.func
        q = env.qualify(func) or ""
        self.note_call(c, q)
        if q == "print":
            self.add("GM101", c, detail="print()")
            return
        if q == "warnings.warn":
            self.add("GM103", c, detail="warnings.warn()",
                     note="breaks when this frame is inlined (a helper or a submodule's forward); "
                          "in the compiled function's own frame Dynamo keeps it")
            return
        if isinstance(func, ast.Attribute) and func.attr in LOG_METHODS and self.is_logger(func.value):
            self.add("GM102", c, detail=f"{ast.unparse(func.value)}.{func.attr}()")
            return
        if q == "torch.random.fork_rng":
            # "torch.* op returned non-Tensor" (GB0208, measured on torch 2.13: in an inlined
            # frame; the reversible layers' Deterministic wrapper)
            self.add("GM403", c, detail="torch.random.fork_rng()", gb_id="GB0208",
                     note="breaks when this frame is inlined (a helper or a submodule's forward)")
            return
        if q in UNTRACEABLE or q.startswith(("pdb.", "ipdb.")):
            self.add("GM403", c, detail=UNTRACEABLE.get(q, q + "()"))
            return
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute) \
                and isinstance(func.value.value, ast.Name) and func.value.value.id == "self" \
                and self.fi.cls is not None and progress_bar_attr(self.symbols, self.fi.cls, func.value.attr):
            # `self.pbar.update(1)`, the bar made in another method (tqdm's methods are skipped)
            self.add("GM403", c, detail=f"{TQDM}'s `{func.attr}()`", gb_id="GB0008")
            return
        if torch_utils_data(q):
            # Dynamo skips torch.utils (GB0008 "marked as skipped", measured on torch 2.13:
            # `TensorDataset(x, y)` and `DataLoader(...)` in deepctr-torch's `fit`, realcode round 33)
            self.add("GM403", c, detail=f"`{q.rsplit('.', 1)[-1]}(...)` of torch.utils.data", gb_id="GB0008",
                     note=DATA_NOTE)
            return
        if q in ("len", "iter") and len(c.args) == 1 and (cls := self.data_object(c.args[0])) is not None:
            # `len(ds)` runs `TensorDataset.__len__`, which Dynamo skips like the constructor
            # (deepctr-torch's `print("Train on {0} samples".format(len(train_tensor_data)))`: a
            # deferred print still broke there, round 33)
            self.add("GM403", c, detail=f"`{q}()` of a torch.utils.data `{cls}`", gb_id="GB0008", note=DATA_NOTE)
            return
        if isinstance(func, ast.Attribute) and func.attr == "zero_grad" and self.optimizer(func.value):
            # `Optimizer.zero_grad` is marked as skipped (GB0008, measured on torch 2.13; lampe's
            # `GDStep`, poutyne's `_fit_batch_n_batches_per_step`, realcode round 32); a module's
            # `zero_grad` traces
            self.add("GM403", c, detail=f"{ast.unparse(func.value)}.zero_grad()", gb_id="GB0008",
                     note="Dynamo skips `Optimizer.zero_grad`; zero the gradients outside the compiled function")
            return
        if q == "torch.backends.cuda.sdp_kernel":
            self.add("GM404", c, detail="torch.backends.cuda.sdp_kernel()")
            return
        if q.startswith("torch.") and q.count(".") == 1:
            sets, flag = requires_grad_flag(c, method=False)
            if sets:
                # "Attempted to use tensor creation function with requires_grad=True" (GB0225,
                # measured on torch 2.13: in an inlined frame only; routing-transformer's
                # `total_loss = torch.tensor(0., requires_grad=True, **to(x))`)
                self.add("GM405", c, detail=f"creating a tensor with `requires_grad=True` (`{q}()`)",
                         gb_id="GB0225", note="breaks when this frame is inlined (a helper or a submodule's "
                                              "forward); in the compiled function's own frame Dynamo traces it",
                         values=[(flag, True)] if flag is not None else None)
        if isinstance(func, ast.Attribute) and func.attr == "requires_grad_":
            sets, flag = requires_grad_flag(c)
            if sets:
                self.requires_grad(func.value, c, "`requires_grad_()` on", "GB8985", flag)
        if id(c) in self._extracted:
            return  # the GM201 of the branch whose condition this read is stands for it
        if isinstance(func, ast.Attribute):
            base = env.receiver_kind(func.value)
            # not `.numpy()`: Dynamo traces the array it gives (torch._numpy, measured on torch 2.13:
            # `x.detach().cpu().numpy()` fed back to torch is one graph, deepxde, realcode round 9);
            # a Python branch on it breaks, and is found there (its kind is DATA)
            if base is Kind.TENSOR and func.attr in ("item", "tolist") \
                    and not env.is_submodule_call(func):
                self.add("GM401", c, detail=f"`.{func.attr}()`")
                return
            if base is Kind.UNKNOWN and func.attr == "item" and not c.args and not c.keywords \
                    and isinstance(func.value, ast.Call) and not env.is_submodule_call(func) \
                    and "item" not in method_names(self.symbols):
                # `.item()` of what a callable the walk does not know returns: only a tensor (or
                # a numpy value, which Dynamo traces as one) has an `.item()`, unless a class of
                # this file defines one (torchkeras' `metric_fn(all_preds, all_labels).item()`
                # over `self.metrics_dict.items()`, realcode round 33)
                self.add("GM401", c, detail="`.item()`")
                return
            if base is not Kind.STATIC and func.attr in ("add_", "addcmul_", "addcdiv_"):
                from graphmend.rules.scalar_first import scalar_first  # rules import this module
                # `exp_avg.add_(1 - beta1, grad)`: "Unhandled args for method"; of a receiver the
                # walk does not know (RangerQH's `p.data.addcdiv_(-lr, avg_grad, avg_grad_rms)`,
                # `p` a parameter of the group) where the number is written as one
                if scalar_first(c, known_tensor=base is Kind.TENSOR):
                    self.add("GM406", c, detail=f"`.{func.attr}()`", gb_id="GB0117")
                    return
            if base is Kind.TENSOR and func.attr == "backward" and not env.is_submodule_call(func):
                # "Unsupported Tensor.backward() call" (GB0123, measured on torch 2.13): a
                # compiled train step, reformer's reversible recomputation
                recv = ast.unparse(func.value)
                recv = recv if isinstance(func.value, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) \
                    else f"({recv})"
                self.add("GM403", c, detail=f"`{recv}.backward()`" if len(recv) <= 40 else "`.backward()` of a tensor",
                         gb_id="GB0123")
                return
            if func.attr == "backward" and len(c.args) == 1 and self.backward_runner(func.value):
                # Accelerate's `accelerator.backward(loss)` (Lightning Fabric's alike) runs
                # `loss.backward()` (GB0123 inside accelerate, measured on torch 2.13: torchkeras'
                # step, realcode round 33)
                self.add("GM403", c, detail=f"`{ast.unparse(func)}()` (it runs `.backward()` of the loss)",
                         gb_id="GB0123")
                return
            if base is Kind.TENSOR and func.attr in DYNAMIC_SHAPE_FUNCS:
                if func.attr != "repeat_interleave" or self.dynamic_repeats(c, method=True):
                    data = self.facts.nonempty_condition(func.value, env.qualify)
                    self.add("GM402", c, detail=f"`.{func.attr}()`",
                             values=[(data, True)] if data is not None else None)
                return
        if q in DATA_BOOL_FUNCS or (isinstance(func, ast.Attribute) and func.attr in ("equal", "allclose")
                                    and env.kind(func.value) is Kind.TENSOR and c.args):
            # a Python bool computed from tensor values: Dynamo breaks at the call itself, whether or
            # not a branch reads it ("Data dependent operator", measured, torch 2.13)
            name = q if q in DATA_BOOL_FUNCS else f".{func.attr}"
            self.add("GM401", c, detail=f"`{name}()`", gb_id="GB0033")
            return
        scalars = SCALAR_KWARG_FUNCS.get(q) if q.startswith("torch.") else (
            SCALAR_KWARG_METHODS.get(func.attr) if isinstance(func, ast.Attribute)
            and env.kind(func.value) is Kind.TENSOR else None)
        kw = next((k.arg for k in c.keywords if k.arg in scalars and self.proven_tensor(k.value, c)),
                  None) if scalars else None
        if kw is not None:
            self.add("GM401", c, detail=f"a tensor as `{kw}=` of `{ast.unparse(func)}()` (a Python number there)",
                     gb_id="GB0033")
            return
        if q in ("int", "float", "bool") and len(c.args) == 1 and self.numpy_value(c.args[0]):
            # numpy's reductions and array builders over Python sequences are traced as tensors
            # (torch._numpy): their value read into Python is a data-dependent operator (GB0033,
            # measured on torch 2.13: `int(np.prod(x.shape[1:]))`, deepxde's `np.cumsum(...)`)
            self.add("GM401", c, detail=f"`{q}()` of a numpy array value (Dynamo traces numpy as tensors)",
                     gb_id="GB0033")
            return
        if q == "slice" and any(self.numpy_value(a) for a in c.args):
            # a slice bound from a numpy array's item: Dynamo reads the (0-dim tensor) value into
            # Python (GB0033, measured on torch 2.13; monai's dense_patch_slices builds
            # `slice(s, s + patch_size[d])` from the rows of `np.asarray(...).T`)
            self.add("GM401", c, detail="`slice()` bounded by a numpy array's item (Dynamo traces numpy as "
                                        "tensors)", gb_id="GB0033")
            return
        if q == "map" and len(c.args) == 2 and isinstance(c.args[0], ast.Name) \
                and c.args[0].id in ("int", "float") and self.numpy_value(c.args[1]):
            self.add("GM401", c, detail=f"`map({c.args[0].id}, ...)` over a numpy array (Dynamo traces numpy "
                                        "as tensors)", gb_id="GB0033")
            return
        if q in ("int", "float", "bool") and len(c.args) == 1 and env.kind(c.args[0]) is Kind.TENSOR:
            self.add("GM401", c, detail=f"`{q}()` of a tensor")
            return
        if q.startswith("math.") and c.args and isinstance(c.args[0], ast.GeneratorExp):
            from graphmend.rules.listify import generator_argument  # rules import this module
            if generator_argument(c, q) is not None:
                # `math.prod((series.shape[d] for d in batch_dim))`: Dynamo cannot pass a generator
                # to it (GB0055) and runs the whole function eagerly (torchcast, realcode round 36)
                self.add("GM407", c, detail=f"`{q}()`", gb_id="GB0055")
                return
        if q.startswith("math.") and q not in MATH_OF_TENSORS and any(env.kind(a) is Kind.TENSOR for a in c.args):
            # `math.sqrt(variance_ma_sum / param_size)`, `math.isnan(loss)`: the math module takes
            # Python floats, and a tensor is read into one ("Data dependent operator", GB0033,
            # measured on torch 2.13 for each function of math that takes numbers; ranger21's
            # step, realcode round 36)
            self.add("GM401", c, detail=f"`{q}()` of a tensor", gb_id="GB0033")
            return
        spec = None
        if q in SIZE_FACTORIES:
            what, spec, bound, methods = f"`{q}()`", SIZE_FACTORIES[q], " or bound", False
        elif isinstance(func, ast.Attribute) and func.attr in SIZE_METHODS and not q.startswith(("torch.", "numpy.")) \
                and env.receiver_kind(func.value) is Kind.TENSOR and not env.is_submodule_call(func):
            what, spec, bound, methods = f"`.{func.attr}()`", SIZE_METHODS[func.attr], "", True
        if spec is not None and (read := self.size_read(c, _size_args(c, *spec), methods)) is not None:
            self.add("GM401", c, gb_id="GB0033", detail=f"{what} with a tensor as a size{bound}" if read == "tensor"
                     else f"{what} sized by a numpy array value (Dynamo traces numpy as tensors)",
                     subject=ast.Tuple(elts=[a for a in _size_args(c, *spec) if env.kind(a) is Kind.TENSOR],
                                       ctx=ast.Load()))
            return
        if q.startswith("torch."):
            name = q.split(".")[-1]
            if name in DYNAMIC_SHAPE_FUNCS and q.count(".") == 1:
                if name != "repeat_interleave" or self.dynamic_repeats(c, method=False):
                    data = self.facts.nonempty_condition(c.args[0], env.qualify) if c.args else None
                    self.add("GM402", c, detail=f"`torch.{name}()`",
                             values=[(data, True)] if data is not None else None)
            elif name == "where" and q.count(".") == 1 and len(c.args) == 1 and not c.keywords:
                self.add("GM402", c, detail="one-argument `torch.where()`")
            elif q == "torch.linalg.lstsq":
                # aten.linalg_lstsq is tagged dynamic_output_shape (its residuals' and rank's
                # shapes depend on the data): "Dynamic shape operator", GB0036, whatever the
                # driver or dtype (measured on torch 2.13; torchimize's solvers, realcode round 30)
                self.add("GM402", c, detail=LSTSQ)
        else:
            target = None
            if q and self.symbols.module and q.startswith(self.symbols.module + "."):
                target = self.symbols.functions.get(q.rsplit(".", 1)[1])
            elif (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                  and func.value.id == "self" and self.fi.cls is not None):
                target = self.fi.cls.methods.get(func.attr)  # self.m(): a method of this class
            if target is not None and _is_disabled(target.node, self.symbols):
                self.add("GM403", c, detail=f"`{target.qualname}()`, a torch.compiler.disable()d function")

    def numpy_value(self, e: ast.expr) -> bool:
        """`e` is (an item or the transpose of) an array one of numpy's reductions or array
        builders made (NUMPY_ARRAY_FUNCS): a call of one, a name last bound to one (track_numpy),
        or a comprehension's target over one (numpy_comprehension). Also the array a tensor's
        `.numpy()` gives, and what a numpy function makes of such an array (a list of them too):
        Dynamo traces both as tensors (pfrl's `float(loss.detach().cpu().numpy())` and
        `np.linalg.norm([np.linalg.norm(p.grad.detach().cpu().numpy()) for p in parameters])`,
        realcode round 19)."""
        while isinstance(e, ast.Subscript) or (isinstance(e, ast.Attribute) and e.attr == "T"):
            e = e.value
        if isinstance(e, ast.Call):
            func = e.func
            if isinstance(func, ast.Attribute) and func.attr == "numpy" and not e.args and not e.keywords:
                # `t.detach().cpu().numpy()`, also where the walk does not know `t` (pfrl's `p.grad` of
                # a filtered parameter list): of the values compiled code holds only a tensor has a
                # `.numpy()` (not numpy's arrays, Python numbers or lists)
                return True
            q = self.env.qualify(func) or ""
            if q in NUMPY_ARRAY_FUNCS:
                return True
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self" \
                    and self.fi.cls is not None and numpy_func_attr(self.symbols, self.fi.cls, func.attr):
                return True  # `self.monitor_op(current, self.best)`, `self.monitor_op = np.less`
            return q.startswith("numpy.") and q not in NUMPY_STATIC_FUNCS and any(
                self.numpy_value(a) or (isinstance(a, (ast.List, ast.Tuple)) and any(
                    self.numpy_value(x) for x in a.elts))
                or (isinstance(a, (ast.ListComp, ast.GeneratorExp)) and self.numpy_value(a.elt))
                for a in e.args)
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id in self._narrowed \
                and id(e.value) not in self._shadowed and id(e.value) not in self._numpy_nodes:
            # `space.nvec` in `if isinstance(space, MultiDiscrete):` (analysis/numpy_attrs.py)
            return class_attr_is_array(self.symbols.workspace, self._narrowed[e.value.id], e.attr,
                                       NUMPY_ARRAY_FUNCS)
        if isinstance(e, ast.BinOp) and not isinstance(e.op, (ast.Mod, ast.MatMult)):
            return self.numpy_value(e.left) or self.numpy_value(e.right)  # `s + 1`: numpy's too
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mod):
            return self.numpy_value(e.left)  # `(indexes + 2) % n`; not `"%s" % a`, a str
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
            return self.numpy_value(e.operand)
        if isinstance(e, ast.Compare):  # `np.array(t.shape)[dim] == 1`: an array of bools
            return not any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in e.ops) \
                and any(self.numpy_value(x) for x in [e.left, *e.comparators])
        return isinstance(e, ast.Name) and (id(e) in self._numpy_nodes or (
            e.id in self._numpy_names and id(e) not in self._shadowed))

    def numpy_item(self, e: ast.expr) -> bool:
        """`e` is one value of a numpy array (a 0-dim array Dynamo traces as a tensor): an item a loop
        or comprehension takes of one (`for d in np.arange(t.dim())`), a reduction of one without
        an axis (`np.argmax(a)`), arithmetic on such. Not a whole array: `x[:, :, i, j]` with `i`,
        `j` arrays is advanced indexing, which traces (pytorch-wavelets' `np.outer` grids)."""
        if isinstance(e, ast.BinOp) and not isinstance(e.op, (ast.Mod, ast.MatMult)):
            return self.numpy_item(e.left) or self.numpy_item(e.right)
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
            return self.numpy_item(e.operand)
        if isinstance(e, ast.Name):
            return id(e) in self._numpy_nodes or (e.id in self._numpy_items and id(e) not in self._shadowed)
        if isinstance(e, ast.Call) and len(e.args) <= 1 and not any(k.arg == "axis" for k in e.keywords):
            return (self.env.qualify(e.func) or "") in NUMPY_REDUCTIONS
        return False

    def numpy_cond(self, e: ast.expr) -> Optional[tuple[ast.expr, bool]]:
        """The test under which a name in `e` holds a numpy array, when it does on one side of that
        test only (tntorch's `if dim is None: dim = np.arange(t.dim())`: an item of `dim` is a
        0-dim tensor only when `dim is None`)."""
        for n in fast_walk(e):
            if isinstance(n, ast.Name):
                cond = self._numpy_node_conds.get(id(n)) or self._numpy_conds.get(n.id)
                if cond is not None:
                    return cond
        return None

    def numpy_item_target(self, iterable: ast.expr, target: ast.expr) -> Optional[str]:
        """The name a loop over a numpy array binds to its items (rows of a 2-dim one, 0-dim
        values of a 1-dim one: Dynamo iterates the tensor it traces): `for x in a`, the value
        of `for i, x in enumerate(a)`; None when it binds none."""
        iterable, target = _enumerated(iterable, target, self.env.locals)
        if isinstance(target, ast.Name) and self.numpy_value(iterable):
            return target.id
        return None

    def numpy_comprehension(self, comp: ast.expr) -> None:
        """Mark the loads of a comprehension's targets that take a numpy array's items (monai's
        `[tuple(slice(s, ...) for d, s in enumerate(x)) for x in out]`, `out` an array)."""
        names: set[str] = set()
        bound: set[str] = set()
        conds: dict[str, tuple[ast.expr, bool]] = {}  # an item name -> the test its array needs
        for gen in comp.generators:
            ids = _target_ids(gen.target)
            names -= ids
            bound |= ids
            name = self.numpy_item_target(gen.iter, gen.target)
            if name is not None:
                names.add(name)
                if self._numpy_conds and (cond := self.numpy_cond(gen.iter)) is not None:
                    conds[name] = cond
        parts = _element_parts(comp)
        parts += [x for gen in comp.generators for x in gen.ifs] + [gen.iter for gen in comp.generators[1:]]
        others = (bound - names) & self._numpy_names  # `[... s ... for s in range(n)]`: not the array `s`
        for part in parts:
            if names:
                _mark_loads(part, names, self._numpy_nodes)
                for n in (fast_walk(part) if conds else ()):
                    if isinstance(n, ast.Name) and n.id in conds:
                        self._numpy_node_conds[id(n)] = conds[n.id]
            if others:
                _mark_loads(part, others, self._shadowed)

    def track_numpy(self, s: ast.stmt) -> None:
        """After statement `s`: the names it bound to a numpy array (`c = np.cumsum(...)`,
        `out = np.asarray(...).T`, `row = out[0]`) are numpy values until rebound (deepxde's
        `bcs_start = list(map(int, bcs_start))` reads the array the line before bound)."""
        if self._narrowed:
            bound = _bound_names(s)
            if bound & self._narrowed.keys():
                self._narrowed = {k: v for k, v in self._narrowed.items() if k not in bound}
        v = s.value if isinstance(s, ast.Assign) else None
        made = v is not None and (
            (isinstance(v, ast.Call) and getattr(v.func, "attr", getattr(v.func, "id", None)) in _NUMPY_ARRAY_NAMES
             and (self.env.qualify(v.func) or "") in NUMPY_ARRAY_FUNCS)
            or (isinstance(v, (ast.Subscript, ast.Attribute)) and self.numpy_value(v)
                and (isinstance(v, ast.Subscript) or v.attr == "T"))
            # `a = t.numpy()`, `n = np.linalg.norm(a)`, `c = m / (n + 1e-6)`: arrays Dynamo traces
            or (isinstance(v, (ast.Call, ast.BinOp)) and _may_make_array(v) and self.numpy_value(v)))
        bound = _bound_names(s) if made or self._numpy_names or self._numpy_items or self._numpy_conds else ()
        if self._numpy_items or self._numpy_conds:
            self._numpy_items -= bound
            for name in bound & self._numpy_conds.keys():
                del self._numpy_conds[name]
        if not (made or self._numpy_names):
            return
        self._numpy_names -= bound
        if made:
            self._numpy_names |= {t.id for t in s.targets if isinstance(t, ast.Name)}

    def note_attr_store(self, s: ast.stmt) -> None:
        """After `self.x = <computed>` (or `self.x += ...`): `self.x` holds a tensor this frame
        computed, until stored otherwise (torchdr's `self.embedding_ = self.init_scaling *
        embedding_ / ...` in each branch, then `return self.embedding_.requires_grad_()`: GB8985,
        realcode round 27)."""
        targets = s.targets if isinstance(s, ast.Assign) else [s.target]
        attrs = _self_attrs(targets)
        if attrs and (isinstance(s, ast.AugAssign) or (s.value is not None and computed(s.value))):
            self._computed_attrs.update(attrs)
        elif attrs:
            self._computed_attrs.difference_update(attrs)
        if self._computed_attrs:  # unpacked into: no longer known
            for t in targets:
                if isinstance(t, (ast.Tuple, ast.List)):
                    self._computed_attrs -= {e.attr for e in ast.walk(t) if isinstance(e, ast.Attribute)}

    def requires_grad(self, tensor: ast.expr, node: ast.AST, what: str, gb: str,
                      flag: Optional[ast.expr] = None) -> None:
        """GM405: `what` changes `requires_grad` of `tensor`, a break when it is a tensor this
        frame computed (analysis/intermediates.py); `flag`: the argument it needs true."""
        if self.env.kind(tensor) is not Kind.TENSOR:
            return
        if self._computed is None:
            self._computed = computed_names(self.fi.node)
        if is_intermediate(tensor, self._computed) or (
                isinstance(tensor, ast.Attribute) and isinstance(tensor.value, ast.Name) and tensor.value.id == "self"
                and tensor.attr in self._computed_attrs):
            self.add("GM405", node, detail=f"{what} `{ast.unparse(tensor)[:40]}` (computed in the graph)",
                     gb_id=gb, values=[(flag, True)] if flag is not None else None)

    def note_call(self, c: ast.Call, q: str) -> None:
        """Record a call to a function of this file (`f(...)`, `self.m(...)`) or of another module
        (`mod.f(...)`, an imported `f(...)`, a local bound to one: `fn = mod.f; fn(x)`) that passes
        tensors (CallFact)."""
        func = c.func
        if isinstance(func, ast.Name) and func.id in self.env.locals:
            if self._refs is None:
                self._refs = function_refs(self.fi.node)
            for ref in self._refs.get(func.id, ()):
                self.note_target(c, ref, self.symbols.qualify(ref) or "")
            return
        self.note_target(c, func, q)

    def note_target(self, c: ast.Call, func: ast.expr, q: str) -> None:
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id in ("self", "cls"):  # `cls.m(...)` in a classmethod too
            cls = self.fi.cls
            if cls is None:
                return
            for name in called_methods(cls, func.attr):  # `self.loss_method(...)`: the methods it holds
                own = cls.methods.get(name)
                # the method itself, and its overrides in this file's subclasses (what `self` may be)
                for target in ([own] if own is not None else []) + overrides(self.symbols, cls, name):
                    self.note_fact(c, self.symbols.module, target.qualname, 0 if is_static(target.node) else 1)
                if own is None:  # a method this class inherits, or one only other files' subclasses
                    # define: the fact is for their overrides (callers.inherited_facts)
                    self.note_fact(c, self.symbols.module, f"{cls.name}.{name}", 1)
            if func.attr not in cls.methods and func.attr not in cls.attr_ctors \
                    and not method_aliases(cls).get(func.attr) and self.tensor_args(c):
                # `self.bm(t0, t1)` of an attribute holding an instance of a known class: its
                # `__call__` or a subclass's (attr_types.py, callers.py)
                from graphmend.analysis.attr_types import attribute_class

                held = attribute_class(self.symbols, cls, func.attr)
                if held is not None:
                    module, name = held.rsplit(".", 1)
                    self.note_fact(c, module, f"{name}.__call__", 1, virtual=True)
            return
        ws = self.symbols.workspace
        if isinstance(func, ast.Attribute) and func.attr == "apply" and isinstance(func.value, ast.Name) \
                and func.value.id in self.symbols.classes and ws is not None and ws.is_autograd_function(
                    self.symbols, self.symbols.classes[func.value.id]):  # `MyFunction.apply(x)`: forward(ctx, x)
            fwd = self.symbols.classes[func.value.id].methods.get("forward")
            if fwd is not None:
                self.note_fact(c, self.symbols.module, fwd.qualname, 1 if is_static(fwd.node) else 2)
            return
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in self.env.locals \
                and func.attr in method_names(self.symbols):
            # `hess.update(s, y)` with `hess = L_BFGS(...) if low_mem else BFGS(...)`, classes of this
            # file (torchmin, realcode round 13): the method each may run, its own or a base's here
            for ci in self.env.local_instances().get(func.value.id, ()):
                target = next((k.methods[func.attr] for _, k in lineage(self.symbols, ci, local=True)
                               if func.attr in k.methods), None)
                if target is not None:
                    self.note_fact(c, self.symbols.module, target.qualname, 0 if is_static(target.node) else 1)
            return
        if not q or "." not in q or q.startswith(("torch.", "builtins.", "typing.", "math.")):
            return
        if isinstance(func, ast.Attribute):
            root = func
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in self.env.locals:
                return  # a method of a local value (`mask.masked_select(...)`), not a module's function
        module, qualname = q.rsplit(".", 1)
        if module == self.symbols.module and qualname not in self.symbols.functions:
            return
        self.note_fact(c, module, qualname, 0)


    def tensor_args(self, c: ast.Call) -> list:
        """The arguments of `c` that are tensors here: (position, keyword, argument)."""
        kind = self.env.kind
        tensors = []
        for i, a in enumerate(c.args):
            if isinstance(a, ast.Starred):
                break  # the positions after it are unknown
            if kind(a) is Kind.TENSOR or self.tensor_map(a):
                tensors.append((i, None, a))
        for k in c.keywords:
            if k.arg is not None and (kind(k.value) is Kind.TENSOR or self.tensor_map(k.value)):
                tensors.append((None, k.arg, k.value))
        return tensors

    def tensor_map(self, e: ast.expr) -> bool:
        """`e` is a local or parameter holding a dict of tensors only (dataflow.TENSOR_MAP)."""
        return isinstance(e, ast.Name) and self.env.containers.get(e.id) == TENSOR_MAP

    def note_fact(self, c: ast.Call, module: str, qualname: str, skip: int, virtual: bool = False) -> None:
        tensors = self.tensor_args(c)
        key = (id(c), module, qualname)
        if tensors:
            # a mask passed down (`gather(t, x > 0)`, then `def gather(t, idx): return t[idx]`:
            # GB0036 in the callee, realcode round 25)
            maps = frozenset((pos, kw) for pos, kw, a in tensors if self.tensor_map(a))
            masks = frozenset((pos, kw) for pos, kw, a in tensors if (pos, kw) not in maps and self.is_mask_expr(a))
            self.calls_out[key] = CallFact(c, module, qualname, skip, tuple(tensors), virtual, masks, maps)
        else:
            self.calls_out.pop(key, None)

    # --- GM401/GM402: which arguments Dynamo must read as Python values --------------------------
    def dynamic_repeats(self, c: ast.Call, method: bool) -> bool:
        """`repeat_interleave` has a data-dependent output shape only when its repeats are a tensor
        and no `output_size=` gives the shape: with Python-int or shape-derived repeats, or with
        `output_size`, Dynamo traces it into the graph (measured, torch 2.13). The one-argument
        `torch.repeat_interleave(r)` repeats `r` itself. Repeats not proven a tensor are not
        reported (precision first)."""
        if any(k.arg == "output_size" and not (isinstance(k.value, ast.Constant) and k.value.value is None)
               for k in c.keywords):
            return False
        kw = next((k.value for k in c.keywords if k.arg == "repeats"), None)
        if method:
            rep = c.args[0] if c.args else kw
        else:
            rep = c.args[1] if len(c.args) > 1 else kw
            if rep is None and len(c.args) == 1:
                return True  # torch.repeat_interleave(repeats): its output length is sum(repeats)
        return rep is not None and self.proven_tensor(rep, c)

    def proven_tensor(self, e: ast.expr, at: ast.AST) -> bool:
        """`e` is known to be a tensor where `at` is evaluated: its kind is TENSOR and it is not a
        name that an enclosing `if isinstance(name, int)` (float, bool, ...) proves a Python
        number there (`if isinstance(pos, int): pos = torch.arange(pos)`)."""
        if self.env.kind(e) is not Kind.TENSOR:
            return False
        return not (isinstance(e, ast.Name) and e.id in self.numbers_at(at))

    def constant_tensor(self, e: ast.expr, depth: int = 0) -> bool:
        """`e` is a tensor the function builds from Python numbers: `torch.tensor(m)` or
        `torch.as_tensor(m)` of a value that is not a tensor nor a sequence, arithmetic of such a
        tensor with numbers, or a name bound once to one of these. Dynamo knows its value: a size
        or bound of a factory given one does not break (`torch.arange(torch.tensor(m) * 2)`,
        `torch.fft.fftfreq(torch.tensor(n))`, measured on torch 2.13; `range()` of one, an item
        of `torch.tensor([m, n])` and `int()` of one do)."""
        if depth > 4:
            return False
        if isinstance(e, ast.Name):
            bound = self.single_bindings().get(e.id)
            return bound is not None and self.constant_tensor(bound, depth + 1)
        if isinstance(e, ast.BinOp):
            sides = [x for x in (e.left, e.right) if self.env.kind(x) is Kind.TENSOR]
            return bool(sides) and all(self.constant_tensor(x, depth + 1) for x in sides)
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            return self.constant_tensor(e.operand, depth + 1)
        if self.env.constant_fold(e):
            return True
        if isinstance(e, ast.Call) and self._constant_call(e, depth):
            return True
        if not (isinstance(e, ast.Call) and e.args
                and self.env.qualify(e.func) in ("torch.tensor", "torch.as_tensor")):
            return False
        v = e.args[0]
        return not self.env.python_container(v) and not isinstance(v, (ast.GeneratorExp, ast.Starred)) \
            and self.env.kind(v) is not Kind.TENSOR and not self.numpy_value(v)

    def size_read(self, c: ast.Call, sizes: list[ast.expr], methods: bool) -> Optional[str]:
        """How a size argument of `c` reads a value into Python while Dynamo traces: "tensor" (a
        tensor not known to be constant), "numpy" (a numpy value: Dynamo traces numpy as tensors),
        or None. `methods`: a tensor method's sizes, where an item of a tuple a call returned is
        not taken for a tensor (timesformer's `embeddings, num_frames, patch_width =
        self.patch_embeddings(pixel_values)`: the walk's tensor, may be ints)."""
        if any(self.proven_tensor(a, c) and not self.constant_tensor(a)
               and not (methods and isinstance(a, ast.Name) and a.id in self.env.tuple_items) for a in sizes):
            return "tensor"
        return "numpy" if any(self.numpy_value(a) for a in sizes) else None

    def _constant_call(self, e: ast.Call, depth: int) -> bool:
        """A torch function of Python numbers or constant tensors (longformer's
        `torch.div(hidden_states.size(1), window_overlap * 2, rounding_mode="trunc")` as a size of
        `.view()`), or a cast or elementwise method of a constant tensor (`torch.tensor(n).long()`):
        a single value Dynamo computes while tracing (measured on torch 2.13). Not a factory of
        several elements (`torch.arange(3).sum()` as a size breaks) nor a random one."""
        args = [*e.args, *(k.value for k in e.keywords)]
        if any(isinstance(a, ast.Starred) for a in args) or self.numpy_value(e):
            return False
        q = self.env.qualify(e.func) or ""
        f = e.func
        function = q.startswith("torch.") and q.count(".") == 1 and bool(e.args) and q not in SIZE_FACTORIES \
            and q[len("torch."):] not in NOT_CONSTANT_FUNCS and self.env.kind(e) is Kind.TENSOR
        if not function and not (isinstance(f, ast.Attribute) and f.attr in CONSTANT_METHODS and not q
                                 and self.env.kind(f.value) is Kind.TENSOR and self.constant_tensor(f.value, depth + 1)):
            return False
        # per input: "number" (a Python value), "constant" (a constant tensor), None (a value the
        # walk does not know), False (a tensor not known to be constant)
        known = []
        for a in args:
            k = self.env.kind(a)
            known.append("number" if k is Kind.STATIC else None if k is not Kind.TENSOR
                         else "constant" if self.constant_tensor(a, depth + 1) else False)
            if known[-1] is False:
                return False
        # a torch function needs at least one input known to be a Python number or a constant
        # tensor: a value the walk does not know (omdet-turbo's `torch.max(classes_structure)`)
        # may be a tensor of data
        return not function or any(known[:len(e.args)])

    def numbers_at(self, node: ast.AST) -> set[str]:
        """Names an enclosing `if isinstance(name, <number type>):` body proves Python numbers at
        `node`, up to the first statement of that body that rebinds the name."""
        if self._numbers is None:
            self._numbers = {}
            for s in fast_walk(self.fi.node):
                if not isinstance(s, ast.If):
                    continue
                for name in isinstance_numbers(s.test, self.symbols):
                    for stmt in s.body:
                        for n in fast_walk(stmt):
                            self._numbers.setdefault(id(n), set()).add(name)
                        if any(isinstance(t, ast.Name) and t.id == name and isinstance(t.ctx, ast.Store)
                               for t in fast_walk(stmt)):
                            break  # the statement that rebinds it still reads the number
        return self._numbers.get(id(node), set())

    def is_logger(self, e: ast.expr) -> bool:
        if isinstance(e, ast.Name):
            if e.id in self.env.locals:  # a local: a logger only if bound to getLogger(...) here
                return e.id in self.local_loggers()
            if e.id in self.symbols.logger_names or e.id in LOGGER_NAMES:
                return True
            return self.symbols.qualify(e) == "logging"
        if isinstance(e, ast.Attribute):
            # `self.logger`, and a logger held by any object (`settings.logger.info(...)`,
            # torchsparsegradutils' solver settings, realcode round 31); not `x.log`, a method
            return e.attr in LOGGER_NAMES and (isinstance(e.value, ast.Name) and e.value.id == "self"
                                               or e.attr in HELD_LOGGER_NAMES)
        if isinstance(e, ast.Call):
            q = self.symbols.qualify(e.func) or ""
            return q.endswith(("getLogger", "get_logger"))
        return False

    def local_loggers(self) -> set[str]:
        """Local names assigned `logging.getLogger(...)` / `get_logger(...)` in this function."""
        if self._local_loggers is None:
            self._local_loggers = {
                t.id for n in fast_walk(self.fi.node)
                if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                and (self.symbols.qualify(n.value.func) or "").endswith(("getLogger", "get_logger"))
                for t in n.targets if isinstance(t, ast.Name)}
        return self._local_loggers


def _empty_tensor(e: ast.expr, qualify) -> bool:
    """`torch.tensor([])`, `torch.empty(0)`, `torch.zeros((0, 4))`, `x.new_empty(0)`: no elements."""
    if not isinstance(e, ast.Call) or not e.args:
        return False
    q = qualify(e.func) or ""
    if q in ("torch.tensor", "torch.as_tensor") or (isinstance(e.func, ast.Attribute) and e.func.attr == "new_tensor"):
        return isinstance(e.args[0], (ast.List, ast.Tuple)) and not e.args[0].elts
    if q in _EMPTY_FACTORIES:
        dims = _size_args(e, *SIZE_FACTORIES[q])
    elif isinstance(e.func, ast.Attribute) and e.func.attr in ("new_empty", "new_zeros", "new_ones"):
        dims = _size_args(e, (0,), ("size",), True)
    else:
        return False
    return any(isinstance(d, ast.Constant) and type(d.value) is int and d.value == 0 for d in dims)


_EMPTY_FACTORIES = ("torch.empty", "torch.zeros", "torch.ones", "torch.rand", "torch.randn")  # in SIZE_FACTORIES


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _enumerated(iterable: ast.expr, target: ast.expr, local_names) -> tuple[ast.expr, ast.expr]:
    """`for i, x in enumerate(a)`: (a, x), what the loop's value iterates and binds; else
    (iterable, target) as they are."""
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "enumerate" \
            and "enumerate" not in local_names and iterable.args and not isinstance(iterable.args[0], ast.Starred) \
            and isinstance(target, ast.Tuple) and len(target.elts) == 2:
        return iterable.args[0], target.elts[1]
    return iterable, target


def _element_parts(comp: ast.expr) -> list[ast.expr]:
    """What a comprehension makes of each item: its element (a dict comprehension's key and value)."""
    return [comp.key, comp.value] if isinstance(comp, ast.DictComp) else [comp.elt]


def _target_ids(t: ast.expr) -> set[str]:
    return {n.id for n in fast_walk(t) if isinstance(n, ast.Name)}


def _mark_loads(e: ast.AST, names: set[str], into: set[int]) -> None:
    """Add the id() of each load of `names` in `e`, not inside a lambda or comprehension that
    binds the name again."""
    if isinstance(e, ast.Name):
        if e.id in names and isinstance(e.ctx, ast.Load):
            into.add(id(e))
        return
    if isinstance(e, ast.Lambda):
        names = names - set(arg_names(e.args))
    elif isinstance(e, _COMPREHENSIONS):
        _mark_loads(e.generators[0].iter, names, into)  # evaluated in the enclosing scope
        inner = names - {n for gen in e.generators for n in _target_ids(gen.target)}
        if inner:
            for child in ast.iter_child_nodes(e):
                if child is not e.generators[0]:
                    _mark_loads(child, inner, into)
            for child in ast.iter_child_nodes(e.generators[0]):
                if child is not e.generators[0].iter:
                    _mark_loads(child, inner, into)
        return
    if not names:
        return
    for child in ast.iter_child_nodes(e):
        _mark_loads(child, names, into)


def number_bindings(body: list[ast.stmt]) -> set[str]:
    """Names the statements of `body` (not nested blocks) bind, each time, to a Python number: a
    numeric literal, or `float()`, `int()` or a function of math of anything."""
    out: dict[str, bool] = {}
    for st in body:
        for name in _bound_names(st, stored_only=True):
            out[name] = out.get(name, True) and isinstance(st, ast.Assign) and len(st.targets) == 1 \
                and isinstance(st.targets[0], ast.Name) and _number_expr(st.value)
    return {n for n, ok in out.items() if ok}


def _number_expr(e: ast.expr) -> bool:
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        e = e.operand
    if isinstance(e, ast.Constant):
        return type(e.value) in (int, float)
    if isinstance(e, ast.Call) and not e.keywords:
        f = e.func
        return (isinstance(f, ast.Name) and f.id in ("float", "int")) or (
            isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "math")
    return False


def _bound_names(s: ast.stmt, stored_only: bool = False) -> set[str]:
    """The names a statement (re)binds: assignment targets, a loop's target, `with ... as x`
    (every name in a target, `i` of `x[i] = v` too, unless `stored_only`)."""
    return {n.id for t in statement_targets(s) for n in fast_walk(t)
            if isinstance(n, ast.Name) and (not stored_only or isinstance(n.ctx, ast.Store))}


def _size_args(c: ast.Call, positions: tuple[int, ...], keywords: tuple[str, ...],
               varargs: bool) -> list[ast.expr]:
    """The arguments of a SIZE_FACTORIES call that Dynamo reads as Python numbers: the listed
    positions and keywords (from the first position on when they are `*size` varargs), the
    elements of a tuple or list given there."""
    picked = [a for i, a in enumerate(c.args) if (i >= positions[0] if varargs else i in positions)]
    picked += [k.value for k in c.keywords if k.arg in keywords]
    out = []
    for a in picked:
        if isinstance(a, ast.Starred):
            continue
        out.extend(a.elts if isinstance(a, (ast.Tuple, ast.List)) else [a])
    return out


def _item_kind(k: Kind) -> Kind:
    """What iterating a value of kind `k` gives: a tensor's rows are tensors, a static value's
    items static, anything else unknown (a Python value read from a tensor is iterated in Python)."""
    return k if k in (Kind.TENSOR, Kind.STATIC) else Kind.UNKNOWN


# reductions over every element when called without a dim: a 0-dim tensor
FULL_REDUCTIONS = frozenset({"argmax", "argmin", "sum", "mean", "max", "min", "prod", "amax", "amin", "any",
                             "all", "std", "var", "median", "nansum", "nanmean", "norm", "count_nonzero"})
# methods that keep a tensor's rank
ZERO_DIM_CASTS = frozenset({"long", "int", "float", "double", "bool", "half", "to", "type", "clone", "detach",
                            "contiguous"})


def _may_iterate_a_tensor(iterable: ast.expr, env) -> bool:
    """A tensor to the walk, and not a value looked up by a string key (`ckpt["network_weights"]`:
    no tensor is indexed by a string)."""
    if isinstance(iterable, ast.Subscript) and isinstance(iterable.slice, ast.Constant) \
            and isinstance(iterable.slice.value, str):
        return False
    return env.kind(iterable) is Kind.TENSOR


def _may_make_array(v: ast.expr) -> bool:
    """A call of `.numpy()` or of a numpy function, or arithmetic on one or on a name: what
    `numpy_value` may find an array Dynamo traces (cheap, before it walks)."""
    if isinstance(v, ast.BinOp):
        return not isinstance(v.op, (ast.Mod, ast.MatMult))
    func = v.func if isinstance(v, ast.Call) else None
    return isinstance(func, ast.Attribute) and (func.attr == "numpy" or isinstance(func.value, (ast.Name, ast.Attribute)))


def _module_ref(e: ast.expr, qualify) -> bool:
    """`e` names a module (`torch`, `np`): `torch.max(...)` is a function, not a method."""
    q = qualify(e) or ""
    return isinstance(e, (ast.Name, ast.Attribute)) and q.split(".")[0] in ("torch", "numpy")


_MAYBE_SKIPPED = (ast.For, ast.AsyncFor, ast.While, ast.Try, ast.Match)


def always_exits(body: list[ast.stmt]) -> bool:
    """The block never runs on to the statement after it: it ends in `return`, `raise`,
    `continue` or `break`, or in an `if` both sides of which do."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    return isinstance(last, ast.If) and always_exits(last.body) and always_exits(last.orelse)


# what a torch optimizer is commonly named (FunctionWalker.optimizer)
_OPTIMIZER_NAME = re.compile(r"^_?(?:\w+_)?(?:optimizer|optimiser|optim|opt)_?$")


def _own_zero_grad(symbols: Symbols, name: str) -> bool:
    """`name` is a class of the module that defines `zero_grad` and derives from no optimizer (none
    of its bases names one): its instances' `zero_grad()` is that method."""
    ci = symbols.classes.get(name)
    return ci is not None and "zero_grad" in ci.methods and not any("Optim" in b for b in ci.bases)


def numpy_func_attr(sym: Symbols, ci: ClassInfo, attr: str) -> bool:
    """Every store of `self.<attr>` in the methods of `ci` is one of numpy's functions that make
    arrays (NUMPY_ARRAY_FUNCS): poutyne's early stopping keeps `self.monitor_op = np.less` (or
    `np.greater`) and branches on `self.monitor_op(current - self.min_delta, self.best)`, an array
    Dynamo traces as a tensor (GB0170, realcode round 32)."""
    values = self_attr_stores(sym, ci, attr)
    return bool(values) and all(v is not None and (sym.qualify(v) or "") in NUMPY_ARRAY_FUNCS for v in values)


def _same_read(node: ast.AST, b: ast.IfExp, holds: bool) -> bool:
    """The other arm of `b` (the one taken when its test is `not holds`) holds a read like
    `node` (`t.item() if t.numel() == 1 else t[0].item()`): the expression breaks either way."""
    def key(n: ast.AST):
        if isinstance(n, ast.Call):
            f = n.func
            return ("call", f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None)
        return (type(n).__name__,)
    want = key(node)
    return any(key(n) == want for n in ast.walk(b.orelse if holds else b.body))


def _callable_arg_types(ann: Optional[ast.expr], qualify) -> list[str]:
    """The qualified argument types of `Callable[[A, B], R]` (typing's or collections.abc's), else []."""
    if not (isinstance(ann, ast.Subscript) and (qualify(ann.value) or "").rsplit(".", 1)[-1] == "Callable"
            and isinstance(ann.slice, ast.Tuple) and ann.slice.elts and isinstance(ann.slice.elts[0], ast.List)):
        return []
    return [qualify(t) or "" for t in ann.slice.elts[0].elts]


def _grad_flag(e: ast.expr) -> bool:
    """`p.requires_grad`, `not p.requires_grad`: whether a tensor takes part in autograd, a
    test a user reads as the condition of a break on one side of it (frozen parameters)."""
    while isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        e = e.operand
    return isinstance(e, ast.Attribute) and e.attr == "requires_grad"


def is_static(fn: ast.AST) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in getattr(fn, "decorator_list", ()))


def _walk_expr(e: ast.expr, lambdas: Optional[list] = None):
    """Nodes of an expression in evaluation order, not entering lambdas (appended to `lambdas`)
    or comprehensions' own scopes twice."""
    # post-order would be evaluation order; pre-order keeps parents first, which is what the
    # de-duplication in `add` wants (print(x.item()) reports both the print and the .item());
    # the contexts and operators (astwalk.LEAF_TYPES) are left out: no caller looks at them
    return preorder(e, ast.Lambda, lambdas)


# calls that always return a new tensor (never a view or the input itself): a read of one can be
# undone without the name aliasing a tensor that later code updates in place
FRESH_RESULTS = frozenset({"any", "all", "sum", "mean", "max", "min", "prod", "amax", "amin", "norm",
                           "std", "var", "count_nonzero", "isnan", "isinf", "isfinite", "eq", "ne", "gt",
                           "lt", "ge", "le", "logical_and", "logical_or", "logical_not", "argmax", "argmin"})


def _fresh_tensor(e: ast.Call) -> bool:
    name = e.func.attr if isinstance(e.func, ast.Attribute) else getattr(e.func, "id", "")
    return name in FRESH_RESULTS


def _uses(fn: ast.AST, name: str) -> tuple[int, int]:
    """(stores, loads) of a name in a function (nested scopes included: conservative)."""
    st = ld = 0
    for n in fast_walk(fn):
        if isinstance(n, ast.Name) and n.id == name:
            if isinstance(n.ctx, ast.Load):
                ld += 1
            else:
                st += 1
        elif isinstance(n, ast.arg) and n.arg == name:
            st += 1
    return st, ld


def _extraction_gb(tr: Optional[Extracted]) -> Optional[str]:
    """Dynamo breaks at the read itself (GB0124, Tensor.item()) before it reaches the branch."""
    if tr is not None and any(d != "`bool()`" for d in tr.details):
        return "GB0124"
    return None


def _dynamo_asserts(s: ast.Assert) -> bool:
    """Whether Dynamo traces this assert into the graph itself (torch 2.13 rewrites `assert t`
    and `assert t, "constant"` on a tensor into `torch._assert`: one graph, fullgraph too, and the
    check stays under eager and inductor, raising RuntimeError with the message). It does that
    only for one test expression and a constant message: `assert not t`, `assert a and b`, a
    chained comparison `assert a <= b <= c` and a message that is not a constant (a name, an
    f-string) still break (measured with explain)."""
    if isinstance(s.test, (ast.BoolOp, ast.NamedExpr)) or (
            isinstance(s.test, ast.UnaryOp) and isinstance(s.test.op, ast.Not)) or (
            isinstance(s.test, ast.Compare) and len(s.test.ops) > 1):
        return False  # `a <= b <= c` takes the truth of `a <= b` before the assert sees anything
    return s.msg is None or (isinstance(s.msg, ast.Constant) and isinstance(s.msg.value, str))

def _is_guard(s: ast.If) -> bool:
    """`if C: raise ...` with no else branch (or `elif`)."""
    return (not s.orelse and len(s.body) == 1 and isinstance(s.body[0], ast.Raise))


def _is_disabled(fn: ast.AST, symbols: Symbols) -> bool:
    for d in getattr(fn, "decorator_list", []):
        target = d.func if isinstance(d, ast.Call) else d
        if (symbols.qualify(target) or "") in DISABLE_DECORATORS:
            return True
    return False


def is_disabled(fn: ast.AST, symbols: Symbols) -> bool:
    return _is_disabled(fn, symbols)


# --- GM501: a default that only eager builds ---------------------------------------------------
# Names whose call is True while Dynamo traces under plain torch.compile (not is_exporting).
COMPILING_NAMES = frozenset({"is_compiling", "is_dynamo_compiling", "is_torchdynamo_compiling",
                             "is_tracing_by_dynamo"})


def is_not_compiling(e: ast.expr, symbols: Symbols) -> bool:
    """`not is_compiling()` (any of the compile-time predicates): True in eager, False under Dynamo."""
    return (isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not) and isinstance(e.operand, ast.Call)
            and not e.operand.args and not e.operand.keywords
            and (symbols.qualify(e.operand.func) or "").split(".")[-1] in COMPILING_NAMES)


def compile_only_default(s: ast.If, symbols: Symbols) -> Optional[tuple[str, ast.expr]]:
    """(X, the `not is_compiling()` operand) for `if X is None and ... and not is_compiling():`
    whose body assigns X; else None."""
    t = s.test
    if not (isinstance(t, ast.BoolOp) and isinstance(t.op, ast.And)):
        return None
    guards = [v for v in t.values if is_not_compiling(v, symbols)]
    names = [n for n in map(is_none_test, t.values) if n]
    if not guards or not names:
        return None
    for name in names:
        if any(isinstance(b, (ast.Assign, ast.AnnAssign)) and any(
                isinstance(x, ast.Name) and x.id == name
                for x in (b.targets if isinstance(b, ast.Assign) else [b.target])) for b in s.body):
            return name, guards[0]
    return None
