"""Two rules of benchmarks/realcode.py's scoring, on hand-built child records (no torch import):

* a break id several causes share (GB0059 "Failed to trace builtin operator", GB0007 "Attempted
  to call function marked as skipped", GB0088 "Observed exception") is attributed to a GraphMend
  code only when the break's own text names what the code covers (realcode round 8: botorch's
  `scale_mat @ lcv @ scale_mat` broke with GB0059 on `matmul`, not a print; pyro's
  `sys._getframe(1)` and `importlib.import_module` with GB0007, not a warnings.warn);
* a finding on a line that ran eagerly in a frame Dynamo never traced, or after a break in its
  frame that Dynamo could not resume from, is "not traced": neither confirmed nor a false alarm
  (botorch's low_rank.py:164 after the unresumable break at :117). A line of a frame Dynamo traced
  still counts, also one its trace did not reach (a branch not taken under compile).

Texts are Dynamo's own (torch 2.13), shortened."""

from __future__ import annotations

from pathlib import Path

from loading import load_path

ROOT = Path(__file__).resolve().parent.parent

PRINT = ("Failed to trace builtin operator\n  Explanation: Dynamo does not know how to trace builtin operator "
         "`print` with argument types ['str'] (has_kwargs False)\n\n  Developer debug context: builtin print "
         "[<class 'torch._dynamo.variables.constant.ConstantVariable'>] False")
MATMUL = ("Failed to trace builtin operator\n  Explanation: Dynamo does not know how to trace builtin operator "
          "`matmul` with argument types ['DiagLinearOperator', 'DenseLinearOperator'] (has_kwargs False)\n"
          "  Hint: If you are attempting to call a logging function (e.g. `print`), you can try adding it to "
          "`torch._dynamo.config.reorderable_logging_functions`.\n\n  Developer debug context: builtin matmul "
          "[<class 'UserDefinedObjectVariable'>, <class 'UserDefinedObjectVariable'>] False")
WARN = ("Attempted to call function marked as skipped\n  Explanation: Dynamo does not know how to trace the "
        "Python builtin `_warnings.warn`.\n\n  Developer debug context: module: _warnings, qualname: warn, "
        "skip reason: cannot determine source file for _warnings (likely a C extension or builtin)")
GETFRAME = ("Attempted to call function marked as skipped\n  Explanation: Dynamo does not know how to trace the "
            "builtin `sys._getframe.` This function is either a Python builtin (e.g. _warnings.warn) or a "
            "third-party C/C++ Python extension (perhaps created with pybind).\n\n  Developer debug context: "
            "module: sys, qualname: _getframe, skip reason: cannot determine source file for sys")
IMPORT = ("Attempted to call function marked as skipped\n  Explanation: Dynamo developers have intentionally "
          "marked that the function `import_module` in file `/usr/lib/python3.11/importlib/__init__.py` "
          "should not be traced.\n\n  Developer debug context: module: importlib, qualname: import_module, "
          "skip reason: file is under skip directory (/usr/lib/python3.11/importlib/)")
PICKLE = ("Attempted to call function marked as skipped\n  Explanation: Dynamo does not know how to trace the "
          "builtin `_pickle.dumps.` This function is either a Python builtin (e.g. _warnings.warn) or a "
          "third-party C/C++ Python extension\n\n  Developer debug context: module: _pickle, qualname: dumps, "
          "skip reason: cannot determine source file for _pickle (likely a C extension or builtin)")
NONE_EXC = ("Observed exception\n  Explanation: Dynamo found no exception handler at the top-level compiled "
            "function when encountering an exception.\n\n  Developer debug context: raised exception "
            "AttributeError(\"'NoneType' object has no attribute 'shape'\")")
KEY_EXC = ("Observed exception\n  Explanation: Dynamo found no exception handler at the top-level compiled "
           "function when encountering an exception.\n\n  Developer debug context: raised exception "
           "KeyError('x')")
SDP_KERNEL = ("torch.* op returned non-Tensor\n  Explanation: torch.* ops that return a non-Tensor cannot be traced "
              "into the Dynamo FX graph output\n\n\n  Developer debug context: example_value type: "
              "_GeneratorContextManager; op: call_function; target: <function sdp_kernel at 0x7fc607d1b880>")
NUM_THREADS = ("torch.* op returned non-Tensor\n  Explanation: torch.* ops that return a non-Tensor cannot be traced "
               "into the Dynamo FX graph output\n\n\n  Developer debug context: example_value type: int; op: "
               "call_function; target: <built-in function get_num_threads>")
TQDM_NEW = ("Attempted to call function marked as skipped\n  Explanation: Dynamo developers have intentionally "
            "marked that the function `tqdm.__new__` in file `/sp/tqdm/std.py` should not be traced.\n\n"
            "  Developer debug context: module: tqdm.std, qualname: tqdm.__new__, skip reason: file is under "
            "skip directory (/sp/tqdm/)")
TQDM_ITER = ("Attempted to inline function marked as skipped\n  Explanation: Dynamo developers have intentionally "
             "marked that the function `tqdm.__iter__` should not be traced.\n\n  Developer debug context: "
             "qualname: tqdm.__iter__, name: __iter__, filename: `/sp/tqdm/std.py`, skip reason: file is under "
             "skip directory (/sp/tqdm/)")
VARIADIC = ("Attempted to inline function marked as skipped\n  Explanation: Dynamo developers have intentionally "
            "marked that the function `step` should not be traced.\n\n  Developer debug context: qualname: "
            "Optimizer.step, name: step, filename: `/sp/torch/optim/optimizer.py`")
NUMBER_FIRST = ("Unhandled args for method\n  Explanation: Dynamo encountered an error while calling the method "
                "`addcmul_`.\n\n  Developer debug context: call_method TensorVariable() addcmul_ [ConstantVariable("
                "float: 0.5), LazyVariableTracker(realized: TensorVariable()), LazyVariableTracker(realized: "
                "TensorVariable())] {}")
AS_SUBCLASS = ("Unhandled args for method\n  Explanation: Dynamo encountered an error while calling the method "
               "`as_subclass`.\n\n  Developer debug context: call_method TensorWithTFOverrideVariable() as_subclass "
               "[UserDefinedClassVariable()] {}")
ZERO_GRAD = ("Attempted to inline function marked as skipped\n  Explanation: Dynamo developers have intentionally "
             "marked that the function `Optimizer.zero_grad` should not be traced.\n  Hint: Avoid calling the "
             "function `Optimizer.zero_grad`.\n\n  Developer debug context: qualname: Optimizer.zero_grad, name: "
             "inner, filename: `/sp/torch/_compile.py`, skip reason: file matches MOD_SKIPLIST")
NONZERO = ("Dynamic shape operator\n  Explanation: Operator `aten.nonzero.default`'s output shape depends on "
           "input Tensor data.\n\n  Developer debug context: aten.nonzero.default")


def _bench():
    return load_path(ROOT / "benchmarks" / "realcode.py", "graphmend_bench_realcode_scoring", reuse=True)


def test_a_shared_break_id_is_attributed_by_its_text():
    a = _bench().attribute
    assert a("GB0059", PRINT) == "GM101"
    assert a("GB0059", MATMUL) is None  # the hint names `print`: the operator is `matmul`
    assert a("GB0007", WARN) == "GM103"
    assert a("GB0007", GETFRAME) is None  # the explanation names `_warnings.warn` as an example
    assert a("GB0007", IMPORT) is None
    assert a("GB0007", PICKLE) == "GM403"  # GM403's untraceable calls
    assert a("GB0088", NONE_EXC) == "GM501"
    assert a("GB0088", KEY_EXC) is None
    # GB0208: the deprecated sdp_kernel context manager is GM404's (mixture-of-attention, bs-roformer;
    # realcode round 18), torchkbnufft's get_num_threads() no code's
    assert a("GB0208", SDP_KERNEL) == "GM404"
    assert a("GB0208", NUM_THREADS) is None
    # a tqdm bar (GM403) as a skipped call or a skipped inlined `__iter__` (MEGABYTE's generate loop,
    # realcode round 18); GB0008 of anything else is no code's, with or without text
    assert a("GB0007", TQDM_NEW) == "GM403" and a("GB0008", TQDM_ITER) == "GM403"
    assert a("GB0008", VARIADIC) is None and a("GB0008", None) is None
    # an optimizer's `zero_grad` (GB0008) is GM403's too (lampe, poutyne; realcode round 32)
    assert a("GB0008", ZERO_GRAD) == "GM403"
    # GB0117 is GM406's for a deprecated Number-first overload, not for torch-hd's `as_subclass` of a
    # tensor subclass (realcode round 29)
    assert a("GB0117", NUMBER_FIRST) == "GM406" and a("GB0117", AS_SUBCLASS) is None
    # an id of one cause goes by the id; an id GraphMend has no code for is never attributed
    assert a("GB0036", NONZERO) == "GM402" and a("GB0036", "anything") == "GM402"
    assert a("GB0142", PRINT) is None and a(None, PRINT) is None
    # a record that kept no text of the break (an older child's log record): the id alone, as before
    assert a("GB0059", None) == "GM101" and a("GB0007", None) == "GM103"


def test_a_generator_argument_is_gm407_and_other_proxy_failures_are_not():
    """GB0055 "Failed to convert args/kwargs to proxy" is GM407's only for a generator handed to a
    call (torchcast's `prod((series.shape[d] for d in batch_dim))`, realcode round 36)."""
    a = _bench().attribute
    gen = ("Failed to convert args/kwargs to proxy\n  Explanation: Missing `as_proxy()` implementation for some "
           "arg/kwarg.\n\n  Developer debug context: call_function args: LocalGeneratorObjectVariable(<genexpr>) ")
    other = ("Failed to convert args/kwargs to proxy\n  Explanation: Missing `as_proxy()` implementation for some "
             "arg/kwarg.\n\n  Developer debug context: call_function args: UserDefinedObjectVariable(Foo) ")
    assert (a("GB0055", gen), a("GB0055", other)) == ("GM407", None)


def test_break_sites_name_a_shared_id_only_for_its_cause():
    site = Path("/sp")
    rec = lambda line, gb, reason: {"gb": gb, "summary": reason.splitlines()[0], "reason": reason,  # noqa: E731
                                    "user_stack": [{"file": "/sp/pkg/a.py", "line": line, "source": ""}]}
    log = lambda line, gb, detail=None: {"file": "/sp/pkg/a.py", "line": line, "gb": gb,  # noqa: E731
                                         "reason": "Encountered graph break when attempting to trace CALL",
                                         **({"detail": detail} if detail is not None else {})}
    res = {"break_reasons": [rec(10, "GB0059", PRINT), rec(20, "GB0059", MATMUL),
                             # the backend's reason of an unresumable break: no id, no text of the cause
                             {"gb": None, "summary": "step_unsupported", "reason": "step_unsupported",
                              "user_stack": [{"file": "/sp/pkg/a.py", "line": 30, "source": ""}]}],
           "explain": {"break_reasons": [rec(40, "GB0007", GETFRAME)]},
           "graph_break_log": [log(30, "GB0059", MATMUL), log(50, "GB0007", WARN), log(60, "GB0007"),
                               log(40, "GB0007", GETFRAME)]}
    sites = {s["line"]: s for s in _bench().break_sites(res, ("pkg",), site)}
    assert {ln: s["named"] for ln, s in sites.items()} == {10: True, 20: False, 30: False, 40: False,
                                                           50: True, 60: True}
    assert sites[10]["codes_named"] == ["GM101"] and sites[50]["codes_named"] == ["GM103"]
    assert "matmul" in sites[20]["cause"] and "matmul" in sites[30]["cause"]
    assert "sys._getframe" in sites[40]["cause"]
    assert sites[60]["codes_named"] == ["GM103"]  # no text kept: by the id



DEEPCOPY = ("Attempted to copy.deepcopy a tensor\n  Explanation: Dynamo does not support copy.deepcopy() on "
            "tensors.\n\n  Developer debug context: copy.deepcopy(TensorVariable())")


def test_a_logged_break_inside_the_standard_library_is_the_package_call_site():
    """higher (realcode round 30): `self.param_groups = _copy.deepcopy(other.param_groups)`
    breaks inside copy.py (GB4198), and only the graph_breaks log names it: its site is copy.py,
    its stack (the child's `log_breaks`) runs through higher/optim.py:101. The break is the
    package's at that call, where GraphMend's GM403 is: it was scored as a false alarm. A logged
    break whose stack has no package frame stays outside."""
    copy_py = "/usr/lib/python3.11/copy.py"
    log = {"file": copy_py, "line": 153, "gb": "GB4198", "reason": "Encountered graph break", "detail": DEEPCOPY}
    stack = [{"file": "/sp/user.py", "line": 3}, {"file": "/sp/pkg/optim.py", "line": 101},
             {"file": copy_py, "line": 146}, {"file": copy_py, "line": 153}]
    res = {"break_reasons": [], "explain": {"break_reasons": []}, "graph_break_log": [log],
           "log_breaks": [{"site": {"file": copy_py, "line": 153}, "gb": "GB4198", "detail": DEEPCOPY,
                           "summary": "Encountered graph break", "user_stack": stack}]}
    bench = _bench()
    sites = bench.break_sites(res, ("pkg",), Path("/sp"))
    assert [(s["file"], s["line"], s["codes_named"]) for s in sites] == [("pkg/optim.py", 101, ["GM403"])]
    finding = {"file": "pkg/optim.py", "line": 101, "end_line": 101, "code": "GM403", "fixable": False,
               "message": "copy.deepcopy() cannot be traced"}
    r = bench.evaluate({**res, "ok": True, "coverage": {"/sp/pkg/optim.py": [101]}}, None, [finding],
                       ("pkg",), Path("/sp"))
    assert (r["found"], r["confirmed"], r["false_alarms"]) == (1, 1, [])
    res["log_breaks"][0]["user_stack"] = stack[:1] + stack[2:]  # no frame of the package
    assert [s["file"] for s in bench.break_sites(res, ("pkg",), Path("/sp"))] == []


def test_a_logged_break_inside_another_package_stays_outside():
    """torchmin (realcode rounds 13 and 31) calls torch/optim/lbfgs.py's `_strong_wolfe`, whose
    data-dependent branches break inside torch: only the graph_breaks log names it, its stack
    runs through torchmin/line_search.py:183. Not a break GraphMend reports at the call (nor can
    mend in torch): listed apart, never a miss."""
    lbfgs = "/usr/lib/python3.11/site-packages/torch/optim/lbfgs.py"
    jump = "Data-dependent branching\n  Explanation: Detected data-dependent branching"
    res = {"break_reasons": [], "explain": {"break_reasons": []},
           "graph_break_log": [{"file": lbfgs, "line": 47, "gb": "GB0170", "reason": "Graph break", "detail": jump}],
           "log_breaks": [{"site": {"file": lbfgs, "line": 47}, "gb": "GB0170", "detail": jump, "summary": "Graph break",
                           "user_stack": [{"file": "/sp/pkg/line_search.py", "line": 183},
                                          {"file": lbfgs, "line": 47}]}]}
    r = _bench().evaluate({**res, "ok": True}, None, [], ("pkg",), Path("/sp"))
    assert (r["named_sites"], r["misses"]) == (0, [])


def test_a_break_in_the_entrys_own_callback_stays_outside():
    """torch-ac (realcode round 36): `ParallelEnv.step` calls `self.envs[0].step(actions[0])`,
    the entry's own environment (in the corpus module), whose `int(action)` breaks (GB0033). The
    break's innermost frame is the entry's code: not a break of the package's call line, which
    GraphMend (checking the package) cannot see into. A break whose innermost frame is the
    package's stays the package's."""
    bench = _bench()
    corpus_file = bench.corpus.__file__
    text = "Data dependent operator\n  Explanation: Operator `aten._local_scalar_dense.default`"
    stack = [{"file": "/sp/pkg/utils/penv.py", "line": 49, "source": "obs = self.envs[0].step(actions[0])"},
             {"file": corpus_file, "line": 8846, "source": "self.pos += 1.0 if int(action) == 1 else -0.5"}]
    res = {"break_reasons": [{"gb": "GB0033", "reason": text, "summary": "Data dependent operator",
                              "user_stack": stack}], "explain": {"break_reasons": []}}
    assert [s["file"] for s in bench.break_sites(res, ("pkg",), Path("/sp"))] == ["<outside pkg>"]
    res["break_reasons"][0]["user_stack"] = stack[:1]
    assert [(s["file"], s["line"]) for s in bench.break_sites(res, ("pkg",), Path("/sp"))] == [("pkg/utils/penv.py", 49)]


SRC = '''def f(x):
    x = x + 1
    try:
        y = x @ x
    finally:
        pass
    if x.sum() > 0:
        x = x * 2
    return x


def g(x):
    if x.any():
        return x
    return -x


def h(x):
    if not is_compiling():
        if x.all():
            x = x + 1
    if x.max() > 1:
        return x
    return x
'''


def _orig(site: Path, traced: bool = True) -> dict:
    m = f"{site}/pkg/m.py"
    res = {"ok": True, "breaks": 1,
           "break_reasons": [{"gb": "GB0170", "summary": "Data-dependent branching", "reason": "generic_jump",
                              "user_stack": [{"file": m, "line": 22, "source": ""}]}],
           "explain": {"break_reasons": []}, "graph_break_log": [],
           # f broke at line 4 inside a try block: Dynamo compiled up to it and ran the rest eagerly
           "log_breaks": [{"site": {"file": m, "line": 4}, "gb": "GB0059", "skipped": False,
                           "summary": "Encountered graph break that we cannot resume from. Compiling up to the "
                                      "previous resumable state, then skipping the rest of the function.",
                           # a frame above it on the stack (h's line 19 as a stand-in for a
                           # caller) resumes after the call: its rest is not cut
                           "user_stack": [{"file": "/elsewhere/run.py", "line": 3}, {"file": m, "line": 19},
                                          {"file": m, "line": 4}]}],
           "coverage": {m: [1, 2, 3, 4, 6, 7, 8, 9, 12, 13, 14, 18, 19, 20, 21, 22, 23]}}
    if traced:  # g never traced (called only from eager code); h traced, but not the eager-only branch
        res["traced_lines"] = {m: [1, 2, 3, 4, 18, 19, 22, 23]}
    return res


def _f(line: int, code: str = "GM201") -> dict:
    return {"file": "pkg/m.py", "line": line, "end_line": line, "code": code, "fixable": False, "message": code}


FINDINGS = [_f(7), _f(13), _f(20), _f(22), _f(2, "GM401")]


def test_a_finding_in_a_frame_dynamo_never_traced_is_not_scored(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(SRC)
    bench = _bench()
    r = bench.evaluate(_orig(tmp_path), None, FINDINGS, ("pkg",), tmp_path)
    why = {f["line"]: f["why"] for f in r["not_traced"]}
    assert set(why) == {7, 13}
    assert "g() never traced" in why[13] and "from line 4" in why[7]
    # h was traced: its eager-only branch (line 20) is a false alarm, line 22 broke; f's line 2
    # (before the unresumable break, traced, no break there) is a false alarm too
    assert sorted(f["line"] for f in r["false_alarms"]) == [2, 20]
    assert (r["findings_executed"], r["confirmed"]) == (3, 1)
    row = {"name": "toy", "dist": "pkg==1", "original": _orig(tmp_path), "mended": None, **r}
    data = {"rows": [row], "totals": bench.totals([row])}
    assert data["totals"]["not_traced"] == 2
    md = bench.markdown(data)
    assert "| not traced |" in md.splitlines()[0]
    assert "- pkg/m.py:13 GM201 (g() never traced) (toy)" in md


def test_without_traced_lines_every_executed_line_counts(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(SRC)
    r = _bench().evaluate(_orig(tmp_path, traced=False), None, FINDINGS, ("pkg",), tmp_path)
    assert r["not_traced"] == []
    assert sorted(f["line"] for f in r["false_alarms"]) == [2, 7, 13, 20]
    assert (r["findings_executed"], r["confirmed"]) == (5, 1)


SRC_STORE = '''\
def f(out, x, i, norm):
    for s in (1, 2):
        out[:, i[0]:i[1]] = norm(
            x[:, i[0]:i[1]]
        )
    return out
'''


def test_a_store_after_an_unresumable_break_in_its_value_is_not_scored(tmp_path):
    """e2cnn's InnerBatchNorm: `output[:, i[0]:i[1], :, :] = batchnorm(` then, a line below,
    `input.tensor[:, i[0]:i[1], :, :]`: the value is evaluated first and breaks (in a loop: Dynamo
    skips the rest), so the store's own finding on the line above never runs under Dynamo. A
    finding in the value on the target's line (`norm(`) is scored as before."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(SRC_STORE)
    m = f"{tmp_path}/pkg/m.py"
    orig = {"ok": True, "breaks": 1,
            "break_reasons": [{"gb": "GB0124", "summary": "Data dependent operator", "reason": "item",
                               "user_stack": [{"file": m, "line": 4, "source": ""}]}],
            "explain": {"break_reasons": []}, "graph_break_log": [],
            "log_breaks": [{"site": {"file": m, "line": 4}, "gb": "GB0124", "skipped": True,
                            "summary": "Skipping the function and falling back to eager.",
                            "user_stack": [{"file": m, "line": 4}]}],
            "coverage": {m: [1, 2, 3, 4, 6]}, "traced_lines": {m: [1, 2, 3, 4]}}
    store = {**_f(3, "GM401"), "col": 8}  # `out[:, i[0]:i[1]]`
    value = {**_f(3, "GM401"), "col": 28}  # in `norm(`: evaluated before the break
    no_col = _f(3, "GM401")  # a finding without a column: not judged
    read = {**_f(4, "GM401"), "col": 12}  # the read that broke
    r = _bench().evaluate(orig, None, [store, value, no_col, read], ("pkg",), tmp_path)
    assert [(f["line"], f["col"]) for f in r["not_traced"]] == [(3, 8)]
    assert "in the value this line's assignment stores" in r["not_traced"][0]["why"]
    assert [(f["line"], f.get("col")) for f in r["false_alarms"]] == [(3, 28), (3, None)]
    assert r["confirmed"] == 1


SRC_GENERATOR = '''\
def perms(n):
    for _ in range(n):
        yield list(range(n))


def attribute(x, n):
    total = 0
    for p in perms(n):
        total = total + x[p].sum()
    if total.item() > 0:
        return total
    return -total
'''


def test_a_frame_skipped_for_a_break_in_a_generator_it_inlines_is_not_scored(tmp_path):
    """captum's ShapleyValueSampling (realcode round 23): `for p in self.permutation_generator(...)`
    in `attribute`, and a break inside the generator Dynamo inlines. Dynamo fails to handle it
    gracefully and skips the frame it was compiling, `attribute`: its `.item()` further down runs
    eagerly, no break can show there. The skip record's stack names attribute's loop line; a
    break that Dynamo resumes after ("cannot resume" only in the innermost frame) cuts nothing
    above it (test_a_finding_in_a_frame_dynamo_never_traced_is_not_scored)."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(SRC_GENERATOR)
    m = f"{tmp_path}/pkg/m.py"
    orig = {"ok": True, "breaks": 1,
            "break_reasons": [{"gb": "GB0033", "summary": "Data dependent operator", "reason": "item",
                               "user_stack": [{"file": m, "line": 3, "source": ""}]}],
            "explain": {"break_reasons": []}, "graph_break_log": [],
            "log_breaks": [{"site": {"file": m, "line": 3}, "gb": "GB0033", "skipped": True,
                            "summary": "Failed to handle graph break gracefully. Skipping the function and "
                                       "falling back to eager.",
                            "user_stack": [{"file": "/elsewhere/run.py", "line": 3}, {"file": m, "line": 8},
                                           {"file": m, "line": 3}]}],
            "coverage": {m: [1, 2, 3, 6, 7, 8, 9, 10, 11]}, "traced_lines": {m: [1, 2, 3, 6, 7, 8]}}
    item = {**_f(10, "GM401"), "col": 7}
    r = _bench().evaluate(orig, None, [item], ("pkg",), tmp_path)
    assert [f["line"] for f in r["not_traced"]] == [10]
    assert "attribute() ran eagerly from line 8 on" in r["not_traced"][0]["why"]
    assert r["false_alarms"] == []


def test_a_package_with_a_torch_folder_keeps_its_name_in_short_paths():
    """Coverage, traced lines and message sites are keyed by short paths; torchstain's
    `torchstain/torch/normalizers/macenko.py` was cut at its own `torch/` folder, so no finding in
    it counted as executed (realcode round 32). Installed files are relative to site-packages;
    mended copies in a temp dir still to the transformers / torch root."""
    child = load_path(ROOT / "benchmarks" / "_model_child.py", "graphmend_bench_model_child_paths", reuse=True)
    sp = "/v/lib/python3.11/site-packages/"
    assert child._short_path(sp + "torchstain/torch/normalizers/macenko.py") == "torchstain/torch/normalizers/macenko.py"
    assert child._short_path(sp + "torch/optim/lbfgs.py") == "torch/optim/lbfgs.py"
    assert child._short_path(sp + "transformers/models/t5/modeling_t5.py") == "transformers/models/t5/modeling_t5.py"
    assert child._short_path("/tmp/mend-x/transformers/models/t5/modeling_t5.py") == \
        "transformers/models/t5/modeling_t5.py"


SRC_REST = '''\
def zero_all(primal, dual):
    primal.zero_grad()
    n = 1
    dual.zero_grad()
    return n


def step(x, primal, dual):
    primal.zero_grad()
    x = x * 2
    dual.zero_grad()
    return x
'''


def test_a_finding_after_a_break_whose_frame_dynamo_traced_no_further_is_not_scored(tmp_path):
    """cooper's `CooperOptimizer.zero_grad`: two optimizers' `zero_grad()` in turn, in a frame that
    holds no tensor; Dynamo breaks at the first and traces nothing of the frame after it (measured),
    so the second never runs under Dynamo: not traced, not a false alarm. In `step`, which holds a
    tensor, Dynamo traces on after the first break, and an unbroken second would still count."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(SRC_REST)
    m = f"{tmp_path}/pkg/m.py"
    orig = {"ok": True, "breaks": 2,
            "break_reasons": [{"gb": "GB0008", "summary": "skipped", "reason": "zero_grad",
                               "user_stack": [{"file": m, "line": ln, "source": ""}]} for ln in (2, 9)],
            "explain": {"break_reasons": []}, "graph_break_log": [], "log_breaks": [],
            "coverage": {m: [1, 2, 3, 4, 5, 8, 9, 10, 11, 12]}, "traced_lines": {m: [1, 2, 8, 9, 10, 11, 12]}}
    r = _bench().evaluate(orig, None, [_f(2, "GM403"), _f(4, "GM403"), _f(9, "GM403"), _f(11, "GM403")],
                          ("pkg",), tmp_path)
    assert [(f["line"], f["why"]) for f in r["not_traced"]] == [
        (4, "zero_all() ran eagerly after its break at line 2 (Dynamo traced none of it after)")]
    assert [f["line"] for f in r["false_alarms"]] == [11]
    assert (r["findings_executed"], r["confirmed"]) == (3, 2)


SRC_FIT = '''\
def fit(log, unit, n):
    log.info(
        f"Started fit with {n} "
        f"steps"
    )
    unit.train()
    log.info("Finished fit")
'''


def _one_break(tmp_path, src: str, line: int, gb: str, source: str = "", **extra) -> tuple[str, dict]:
    """`pkg/m.py` holding `src`, and a child result with one break there (at `line`, of `gb`), every
    line of it covered; `extra` adds to the result (`traced_lines`)."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(src)
    m = f"{tmp_path}/pkg/m.py"
    orig = {"ok": True, "breaks": 1,
            "break_reasons": [{"gb": gb, "summary": gb, "reason": gb,
                               "user_stack": [{"file": m, "line": line, "source": source}]}],
            "explain": {"break_reasons": []}, "graph_break_log": [], "log_breaks": [],
            "coverage": {m: list(range(1, src.count("\n") + 1))}, **extra}
    return m, orig


def test_a_finding_after_a_break_whose_statement_runs_on_below_its_line_is_not_scored(tmp_path):
    """torchtnt's `fit` (realcode round 34): Dynamo breaks at the first `logger.info(` and has
    traced the f-string arguments on the lines below it before the call broke; nothing of the
    frame after that statement. The second `logger.info` never ran under Dynamo: not traced, not
    a false alarm. A traced line past the statement still makes it count."""
    m, orig = _one_break(tmp_path, SRC_FIT, 2, "GB0291")

    def run(traced):
        return _bench().evaluate({**orig, "traced_lines": {m: traced}}, None, [_f(2, "GM102"), _f(7, "GM102")],
                                 ("pkg",), tmp_path)

    r = run([1, 2, 3, 4])
    assert [(f["line"], f["why"]) for f in r["not_traced"]] == [
        (7, "fit() ran eagerly after its break at line 2 (Dynamo traced none of it after)")]
    assert r["false_alarms"] == [] and (r["findings_executed"], r["confirmed"]) == (1, 1)
    r = run([1, 2, 3, 4, 6])
    assert r["not_traced"] == [] and [f["line"] for f in r["false_alarms"]] == [7]


SRC_CHAIN = '''\
def summarize(t, summary):
    offset = (
        t.tensor(summary[:-1])
        .sum()
        .item()
    )
    return offset
'''


def test_a_break_logged_at_a_closing_bracket_is_the_line_above(tmp_path):
    """sbi's `offset = (torch.tensor(...)\n.sum()\n.item()\n)` (realcode round 35): Dynamo logs
    the `.item()` break at the `)` line; the finding spans the chain (lines 3-5). One site, found
    and confirmed, not a miss and a false alarm."""
    _, orig = _one_break(tmp_path, SRC_CHAIN, 6, "GB0124", source=")")
    r = _bench().evaluate(orig, None, [{**_f(3, "GM401"), "end_line": 5}], ("pkg",), tmp_path)
    assert (r["named_sites"], r["found"], r["misses"], r["false_alarms"]) == (1, 1, [], [])
    assert (r["findings_executed"], r["confirmed"]) == (1, 1)


def test_a_mended_statement_whose_own_untraceable_call_breaks_is_not_still_breaking():
    """deepctr-torch (realcode round 33): `print("Train on {0} samples".format(\\n
    len(train_tensor_data)))` is deferred (GM101, fixable), and its argument's `len()` of a
    TensorDataset breaks on its own (GM403, reported, not fixable). The mended run's break on that
    argument's line is the GM403's, not the mend's; a break on the print's first line, which no
    unfixed finding covers, is still the mend's."""
    m = "/sp/pkg/m.py"
    printed = {"file": "pkg/m.py", "line": 5, "end_line": 6, "code": "GM101", "fixable": True, "message": "print()"}
    length = {"file": "pkg/m.py", "line": 6, "end_line": 6, "code": "GM403", "fixable": False, "message": "len()"}

    def run(*lines):
        return {"ok": True, "break_reasons": [{"gb": "GB0008", "summary": "skipped", "reason": "len",
                                               "user_stack": [{"file": m, "line": ln, "source": ""}]} for ln in lines],
                "explain": {"break_reasons": []}, "graph_break_log": [], "log_breaks": [], "coverage": {m: [5, 6]}}
    bench = _bench()
    r = bench.evaluate(run(5, 6), run(6), [printed, length], ("pkg",), Path("/sp"))
    assert r["still_breaking"] == []
    r = bench.evaluate(run(5, 6), run(5, 6), [printed, length], ("pkg",), Path("/sp"))
    assert [(f["line"], f["code"]) for f in r["still_breaking"]] == [(5, "GM101")]
    length["code"] = "GM401"  # a read the deferral takes over: a break there is the mend's
    r = bench.evaluate(run(5, 6), run(6), [printed, length], ("pkg",), Path("/sp"))
    assert [(f["line"], f["code"]) for f in r["still_breaking"]] == [(5, "GM101")]


SRC_CALLBACK = '''\
def on_epoch_start(trainer):
    trainer.print("starting")
    time.sleep(0.01)
'''


def _logged_below(tmp_path, other: str, line: int, gb: str, detail: str) -> tuple[str, dict]:
    """pkg/m.py (SRC_CALLBACK) and a child result whose only break is logged at `other`:`line`
    (another package's file), its stack through pkg/m.py line 2."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(SRC_CALLBACK)
    m, at = f"{tmp_path}/pkg/m.py", f"{tmp_path}/{other}"
    return m, {"ok": True, "break_reasons": [], "explain": {"break_reasons": []},
               "graph_break_log": [{"file": at, "line": line, "gb": gb, "reason": "Graph break", "detail": detail}],
               "log_breaks": [{"site": {"file": at, "line": line}, "gb": gb, "detail": detail,
                               "user_stack": [{"file": m, "line": 2}, {"file": at, "line": line}]}],
               "coverage": {m: [1, 2, 3]}}


def test_a_finding_after_a_call_whose_break_is_logged_in_another_package_is_not_scored(tmp_path):
    """pytorch-accelerated (realcode round 33): a callback's `trainer.print(...)` breaks inside
    accelerate's state.py (its `print`); only the graph_breaks log names it, its stack runs through
    the callback's line 2. The frame holds no tensor and Dynamo ran the `time.sleep` after it
    eagerly: not traced, not a false alarm. Without that stack the sleep is a false alarm."""
    m, orig = _logged_below(tmp_path, "acc/state.py", 719, "GB0059", "Failed to trace builtin operator `print`")
    orig["traced_lines"] = {m: [1, 2]}
    bench = _bench()
    r = bench.evaluate(orig, None, [_f(3, "GM403")], ("pkg",), tmp_path)
    assert [(f["line"], f["why"]) for f in r["not_traced"]] == [
        (3, "on_epoch_start() ran eagerly after its break at line 2 (Dynamo traced none of it after)")]
    assert r["false_alarms"] == [] and r["misses"] == []
    orig["log_breaks"][0]["user_stack"] = orig["log_breaks"][0]["user_stack"][1:]
    r = bench.evaluate(orig, None, [_f(3, "GM403")], ("pkg",), tmp_path)
    assert [f["line"] for f in r["false_alarms"]] == [3]


def test_a_reported_call_under_which_dynamo_broke_in_another_package_is_confirmed(tmp_path):
    """torchkeras (realcode round 33): `self.optimizer.zero_grad()` on accelerate's optimizer
    wrapper breaks inside accelerate/optimizer.py (GB0008, `Optimizer.zero_grad`), a frame below
    the line GraphMend reports (GM403): confirmed, not a false alarm. A GM401 on a line above such
    a break is not: its own read did not break."""
    _, orig = _logged_below(tmp_path, "acc/optimizer.py", 118, "GB0008",
                            "Attempted to inline function marked as skipped: `Optimizer.zero_grad`")
    r = _bench().evaluate(orig, None, [_f(2, "GM403"), _f(2, "GM401")], ("pkg",), tmp_path)
    assert (r["confirmed"], [(f["line"], f["code"]) for f in r["false_alarms"]]) == (1, [(2, "GM401")])


SRC_WARN = '''\
class Rprop(Base):
    def __init__(self, *args):
        super().__init__(*args)
        warnings.warn("gradient correctness issues")
'''


def test_a_warning_after_a_break_in_its_frame_is_apart(tmp_path):
    """higher (realcode round 30): `warnings.warn` after `super().__init__()`, which broke in the
    base class (its stack runs through line 3). GM103 breaks only when its frame is inlined; after a
    break in its function the rest ran as a frame of its own, where Dynamo keeps the warning: the
    condition was not met, not a false alarm. With no break before it in its function it is one."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(SRC_WARN)
    m = f"{tmp_path}/pkg/m.py"
    orig = {"ok": True, "break_reasons": [{"gb": "GB4198", "summary": "deepcopy", "reason": "deepcopy",
                                           "user_stack": [{"file": m, "line": 3, "source": ""},
                                                          {"file": f"{tmp_path}/pkg/base.py", "line": 9,
                                                           "source": ""}]}],
            "explain": {"break_reasons": []}, "graph_break_log": [], "log_breaks": [], "coverage": {m: [1, 2, 3, 4]}}
    (tmp_path / "pkg" / "base.py").write_text("\n" * 20)
    bench = _bench()
    r = bench.evaluate(orig, None, [_f(4, "GM103")], ("pkg",), tmp_path)
    assert ([f["line"] for f in r["conditional_not_met"]], r["false_alarms"]) == ([4], [])
    orig["break_reasons"] = []
    r = bench.evaluate(orig, None, [_f(4, "GM103")], ("pkg",), tmp_path)
    assert [f["line"] for f in r["false_alarms"]] == [4]
