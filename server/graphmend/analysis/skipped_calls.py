"""Calls Dynamo does not trace (it skips their functions, or cannot trace what they do): GM403's
knowledge, measured on torch 2.13. `UNTRACEABLE` maps a qualified name to the finding's detail;
torch.utils.data, which Dynamo skips whole, is a predicate; a tqdm bar held in an attribute is
recognised by the attribute's stores."""

from __future__ import annotations

import ast

from graphmend.analysis.symbols import ClassInfo, Symbols, self_attr_stores

# torch.utils.data's modules: `torch.utils.data.<these>.<name>` is a function or class of theirs
# (`default_collate_fn_map.update(...)` or a pattern's `search` are not)
_DATA_MODULES = frozenset({"dataloader", "dataset", "sampler", "distributed", "_utils", "collate", "worker",
                           "fetch", "pin_memory", "signal_handling", "graph", "graph_settings",
                           "backward_compatibility"})


def torch_utils_data(q: str) -> bool:
    """`q` names a function or class of torch.utils.data (all of which Dynamo skips)."""
    if not q.startswith("torch.utils.data."):
        return False
    *mods, name = q[len("torch.utils.data."):].split(".")
    return bool(name) and all(m in _DATA_MODULES for m in mods)


DATA_NOTE = ("Dynamo skips torch.utils.data (its datasets, samplers and loaders run eagerly); build and "
              "measure them outside the compiled function")
TQDM = "a tqdm progress bar"
UNTRACEABLE = {
    "time.time": "time.time()", "time.perf_counter": "time.perf_counter()",
    "time.monotonic": "time.monotonic()", "time.sleep": "time.sleep()",
    # measured on torch 2.13: skipped functions, as time.perf_counter (poutyne's
    # `timeit.default_timer()`, realcode round 32)
    **{q: q + "()" for q in ("timeit.default_timer", "time.perf_counter_ns", "time.time_ns", "time.monotonic_ns",
                             "time.process_time")},
    "pdb.set_trace": "pdb.set_trace()", "breakpoint": "breakpoint()", "input": "input()",
    "open": "open()", "copy.deepcopy": "copy.deepcopy()",
    "pickle.dumps": "pickle.dumps()", "pickle.loads": "pickle.loads()", "os.system": "os.system()",
    "subprocess.run": "subprocess.run()", "sys.stdout.write": "sys.stdout.write()",
    "sys.stderr.write": "sys.stderr.write()", "torch.save": "torch.save()",
    "torch.load": "torch.load()", "numpy.random.rand": "numpy.random", "random.random": "random.random()",
    # measured on torch 2.13 (`y * h`, fullgraph=True; realcode round 10, auraloss): numpy's draw
    # a traced 0-dim array read as a Python number; `random`'s are skipped functions. Not
    # `numpy.random.seed`/`shuffle`, `random.randint`/`uniform`/`randrange`: Dynamo traces those
    **{f"numpy.random.{f}": "numpy.random" for f in ("randn", "randint", "choice", "uniform", "normal",
                                                     "permutation", "random", "random_sample", "standard_normal")},
    **{f"random.{f}": f"random.{f}()" for f in ("choice", "seed", "gauss", "shuffle", "sample", "betavariate",
                                                "normalvariate", "getrandbits")},
    # measured on torch 2.13 (realcode rounds 9 and 14: linformer's reversible layers record the
    # RNG state, native-sparse-attention samples in a tqdm loop, deepxde's losses take gradients)
    **{q: f"{q}()" for q in ("torch.get_rng_state", "torch.set_rng_state", "torch.manual_seed",
                             "torch.random.get_rng_state", "torch.random.set_rng_state", "torch.random.manual_seed",
                             "torch.autograd.grad", "torch.autograd.backward")},
    **{q: TQDM for q in ("tqdm.tqdm", "tqdm.trange", "tqdm.std.tqdm", "tqdm.auto.tqdm", "tqdm.auto.trange",
                          "tqdm.notebook.tqdm", "tqdm.notebook.trange")},
}


def progress_bar_attr(sym: Symbols, ci: ClassInfo, attr: str) -> bool:
    """Every store of `self.<attr>` in the methods of `ci` is a tqdm bar or None, at least one a
    bar: pytorch-accelerated's progress callback makes `self.pbar = tqdm(...)` in one hook and
    calls `self.pbar.update(1)` in another (GB0008, `tqdm.update` is skipped, realcode round 33)."""
    values = self_attr_stores(sym, ci, attr)
    bars = [v for v in values if isinstance(v, ast.Call) and UNTRACEABLE.get(sym.qualify(v.func) or "") == TQDM]
    return bool(bars) and all(v in bars or (isinstance(v, ast.Constant) and v.value is None) for v in values)
