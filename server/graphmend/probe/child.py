"""The probe's child process, run with the USER's interpreter (the one that has torch):

    python -m graphmend.probe.child ARGS.json            run one probe, write the result JSON
    python -m graphmend.probe.child --compare A.pt B.pt OUT.json   compare two saved outputs

`runner.py` starts it in a new session (process group) with a private directory on PYTHONPATH
that holds only a `graphmend` symlink, and reads the result from the JSON file named in ARGS
(never from stdout, which belongs to the user's code).

What one probe does, in a fresh process:

1. (verify's mended side) install the mending import hook for `mend_scope`;
2. import the entry's module (project root first on sys.path) and torch, call the entry: it returns
   the callable or `nn.Module` to compile and its example inputs (see `normalize_entry_value`);
3. `torch.compile(fn, backend=<counting backend wrapping eager|aot_eager|inductor|...>)`, first
   call timed (cold start), with Dynamo's `graph_breaks` and `recompiles` log records collected,
   and the messages the program emits (prints, log records, warnings) recorded in order;
4. `runs` more calls: steady-state median (CUDA synchronised on a GPU), second call's messages;
5. `torch._dynamo.explain` after `torch._dynamo.reset()` (its graph and break counts, reasons);
6. the outputs of the first compiled call saved with `torch.save` (for verify's comparison).

Everything runs under `torch.no_grad()` (an entry may return {"grad": True} to keep autograd).
"""

from __future__ import annotations

import inspect
import json
import logging
import os
import statistics
import sys
import time
import traceback
import warnings

from graphmend.probe import logs as _logs


# --------------------------------------------------------------------------- small helpers


class ProbeError(Exception):
    """A failure reported as `error` in the result: kind, message, location."""

    def __init__(self, kind, message, file=None, line=None, tb=None):
        super().__init__(message)
        self.kind, self.message, self.file, self.line, self.tb = kind, message, file, line, tb


class _Stages:
    def __init__(self, path):
        self.path = path

    def __call__(self, text):
        if not self.path:
            return
        try:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(text.replace("\n", " ") + "\n")
        except OSError:
            pass


def _user_location(exc, workspace, fallback=(None, None)):
    """Innermost frame of the exception's traceback in the user's workspace code."""
    if isinstance(exc, SyntaxError) and exc.filename and _logs.in_workspace(exc.filename, workspace):
        return os.path.abspath(exc.filename), exc.lineno
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ else []
    for fs in reversed(frames):
        if _logs.in_workspace(fs.filename, workspace) and not _logs.is_internal_file(fs.filename):
            return os.path.abspath(fs.filename), fs.lineno
    return fallback


def _format_exc(exc):
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def _is_oom(exc):
    if isinstance(exc, MemoryError):
        return True
    name = type(exc).__name__
    return name in ("OutOfMemoryError",) or "CUDA out of memory" in str(exc)[:200]


# --------------------------------------------------------------------------- messages


class MessageCapture:
    """Records what the program says, in order: `print` output (per line), logging records (any
    logger but torch's), `warnings.warn` (category and message). Active only inside `phase()`."""

    def __init__(self, real_stdout):
        self.real = real_stdout
        self.events = None
        self._line = ""
        self.encoding = getattr(real_stdout, "encoding", "utf-8")

    # stdout tee
    def write(self, s):
        try:
            self.real.write(s)
        except Exception:
            pass
        if self.events is not None and s:
            self._line += s
            while "\n" in self._line:
                line, self._line = self._line.split("\n", 1)
                self.events.append("print: " + line)
        return len(s)

    def flush(self):
        try:
            self.real.flush()
        except Exception:
            pass

    def isatty(self):
        return False

    def fileno(self):
        return self.real.fileno()

    def __getattr__(self, name):
        return getattr(self.real, name)

    def log_record(self, record):
        if self.events is None:
            return
        name = record.name or ""
        if name == "torch" or name.startswith("torch."):
            return
        try:
            msg = record.getMessage()
        except Exception as e:  # a broken record is still a record
            msg = f"<getMessage failed: {e!r}>"
        self.events.append(f"log: {record.levelname} {name}: {msg}")

    def warning(self, message, category, filename, lineno, file=None, line=None):
        if self.events is None:
            return
        if _logs.is_internal_file(filename or ""):
            return
        self.events.append(f"warning: {getattr(category, '__name__', category)}: {message}")

    class _Phase:
        def __init__(self, cap, events):
            self.cap, self.events = cap, events

        def __enter__(self):
            self.cap.events = self.events
            self._cw = warnings.catch_warnings()
            self._cw.__enter__()
            warnings.simplefilter("always")
            warnings.showwarning = self.cap.warning
            return self.events

        def __exit__(self, *exc):
            if self.cap._line:
                self.cap.events.append("print: " + self.cap._line)
                self.cap._line = ""
            self.cap.events = None
            self._cw.__exit__(*exc)
            return False

    def phase(self, events):
        return MessageCapture._Phase(self, events)


def _install_logging_capture(cap):
    orig = logging.Logger.callHandlers

    def callHandlers(self, record):  # noqa: N802 - logging's name
        cap.log_record(record)
        return orig(self, record)

    logging.Logger.callHandlers = callHandlers


class _DynamoLogs(logging.Handler):
    """Collects Dynamo's `graph_breaks` and `recompiles` artifact records (not shown on stderr)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.breaks = []
        self.recompiles = []
        self.active = False
        self._seen = set()

    def emit(self, record):
        if not self.active or id(record) in self._seen:
            return
        self._seen.add(id(record))
        try:
            msg = record.getMessage()
        except Exception:
            return
        if record.name.endswith("__graph_breaks"):
            self.breaks.append(msg)
        elif record.name.endswith("__recompiles"):
            self.recompiles.append(msg)


def _ours(record):
    return not (record.name.endswith("__graph_breaks") or record.name.endswith("__recompiles"))


def _setup_dynamo_logs(torch):
    h = _DynamoLogs()
    try:
        torch._logging.set_logs(graph_breaks=True, recompiles=True)
    except Exception:
        pass
    for name in ("torch._dynamo", "torch"):
        lg = logging.getLogger(name)
        for other in lg.handlers:
            other.addFilter(_ours)  # ours alone: keep them off stderr
        lg.addHandler(h)
    return h


# --------------------------------------------------------------------------- entry


def resolve_entry(entry, cwd):
    """"pkg.mod:func" (or "path/to/mod.py:func") -> (module name, attribute path)."""
    if ":" not in entry:
        raise ProbeError("bad-entry", f"entry `{entry}` must be `module:function` "
                                      "(for example `examples.tiny_model:probe`)")
    mod, _, attr = entry.rpartition(":")
    if mod.endswith(".py") or "/" in mod or os.sep in mod:
        path = os.path.abspath(os.path.join(cwd, mod))
        rel = os.path.relpath(path, cwd)
        if rel.startswith(".."):
            raise ProbeError("bad-entry", f"entry file `{mod}` is outside the project {cwd}")
        mod = rel[:-3] if rel.endswith(".py") else rel
        mod = mod.replace(os.sep, ".").replace("/", ".")
        if mod.endswith(".__init__"):
            mod = mod[: -len(".__init__")]
    if not mod or not attr:
        raise ProbeError("bad-entry", f"entry `{entry}` must be `module:function`")
    return mod, attr


def import_entry(modname, attr, workspace):
    import importlib
    try:
        module = importlib.import_module(modname)
    except ModuleNotFoundError as e:
        if e.name == "torch":
            raise ProbeError("no-torch", f"{sys.executable} cannot import torch "
                                         f"(set `python` in [tool.graphmend.probe]): {e}",
                             tb=_format_exc(e))
        if e.name and (modname == e.name or modname.startswith(e.name + ".")):
            raise ProbeError("bad-entry", f"cannot find the entry module `{modname}` "
                                          f"(from {os.getcwd()}): {e}", tb=_format_exc(e))
        f, ln = _user_location(e, workspace)
        raise ProbeError("import", f"importing `{modname}` failed: {type(e).__name__}: {e}",
                         f, ln, _format_exc(e))
    except BaseException as e:  # noqa: BLE001 - user code (SystemExit included)
        if isinstance(e, KeyboardInterrupt):
            raise
        f, ln = _user_location(e, workspace)
        kind = "memory" if _is_oom(e) else "import"
        raise ProbeError(kind, f"importing `{modname}` failed: {type(e).__name__}: {e}",
                         f, ln, _format_exc(e))
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ProbeError("bad-entry", f"`{modname}` has no `{attr}`",
                             getattr(module, "__file__", None), 1)
        obj = getattr(obj, part)
    return module, obj


def entry_location(fn, module):
    try:
        target = inspect.unwrap(fn)
        code = getattr(target, "__code__", None)
        if code is not None:
            return os.path.abspath(code.co_filename), code.co_firstlineno
    except Exception:
        pass
    f = getattr(module, "__file__", None)
    return (os.path.abspath(f) if f else None), (1 if f else None)


def normalize_entry_value(value):
    """What an entry may return -> (fn, args tuple, kwargs dict, grad: bool).

    - `(fn, inputs)`: inputs a tuple/list (positional), a dict (keyword) or one value;
    - `(fn, args, kwargs)`;
    - `{"model"|"fn": fn, "inputs"|"args": ..., "kwargs": {...}, "grad": bool}`;
    - `fn` alone (called with no arguments)."""
    grad = False
    if isinstance(value, dict):
        fn = value.get("model", value.get("fn"))
        inputs = value.get("inputs", value.get("args", ()))
        kwargs = dict(value.get("kwargs") or {})
        grad = bool(value.get("grad", False))
    elif isinstance(value, (tuple, list)) and len(value) == 3 and isinstance(value[2], dict):
        fn, inputs, kwargs = value[0], value[1], dict(value[2])
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        fn, inputs = value
        kwargs = {}
    elif callable(value):
        fn, inputs, kwargs = value, (), {}
    else:
        raise ValueError("the entry must return (model_or_fn, inputs), (fn, args, kwargs) or "
                         f"a dict with `model` and `inputs`, not {type(value).__name__}")
    if not callable(fn):
        raise ValueError(f"the entry returned {type(fn).__name__} to compile, which is not callable")
    if isinstance(inputs, dict):
        args, kwargs = (), {**inputs, **kwargs}
    elif isinstance(inputs, (tuple, list)):
        args = tuple(inputs)
    else:
        args = (inputs,)
    return fn, args, kwargs, grad


def _to_device(obj, device, torch):
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, tuple):
        return tuple(_to_device(x, device, torch) for x in obj)
    if isinstance(obj, list):
        return [_to_device(x, device, torch) for x in obj]
    if isinstance(obj, dict):
        return {k: _to_device(v, device, torch) for k, v in obj.items()}
    return obj


def flatten_outputs(obj, torch, prefix="out"):
    flat = {}

    def walk(value, name, depth=0):
        if depth > 20:
            return
        if isinstance(value, torch.Tensor):
            flat[name] = value.detach().cpu().clone()
        elif hasattr(value, "to_legacy_cache"):
            try:
                walk(value.to_legacy_cache(), name, depth + 1)
            except Exception:
                pass
        elif hasattr(value, "items") and callable(value.items):
            for key, sub in value.items():
                walk(sub, f"{name}.{key}", depth + 1)
        elif isinstance(value, (list, tuple)):
            for i, sub in enumerate(value):
                walk(sub, f"{name}[{i}]", depth + 1)
        elif isinstance(value, (int, float, bool, str)) or value is None:
            flat[name] = value

    walk(obj, prefix)
    return flat


def _inner_backend(name, torch):
    if name == "eager":
        return lambda gm, example_inputs: gm.forward
    if name == "aot_eager":
        from torch._dynamo.backends.debugging import aot_eager
        return aot_eager
    if name == "inductor":
        from torch._inductor.compile_fx import compile_fx
        return compile_fx
    return torch._dynamo.lookup_backend(name)


def _frame_dicts(stack):
    out = []
    for fs in stack or []:
        out.append({"file": getattr(fs, "filename", None), "line": getattr(fs, "lineno", None),
                    "function": getattr(fs, "name", None)})
    return out


def _jsonable(obj, depth=0):
    if depth > 6:
        return str(obj)
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, dict):
        return {str(k): _jsonable(v, depth + 1) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [_jsonable(v, depth + 1) for v in obj]
    try:
        import dataclasses
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            return _jsonable(dataclasses.asdict(obj), depth + 1)
    except Exception:
        pass
    if hasattr(obj, "__dict__"):
        return {k: _jsonable(v, depth + 1) for k, v in vars(obj).items() if not k.startswith("_")}
    return str(obj)


# --------------------------------------------------------------------------- the probe


def probe(args, result, stage, cap):
    cwd = os.path.abspath(args.get("cwd") or os.getcwd())
    workspace = args.get("workspace") or cwd
    if cwd in sys.path:
        sys.path.remove(cwd)
    sys.path.insert(0, cwd)
    entry = args["entry"]
    modname, attr = resolve_entry(entry, cwd)

    finder = None
    scope = args.get("mend_scope")
    if scope is not None:
        stage("installing the mending import hook")
        try:
            from graphmend.probe import importhook
        except Exception as e:
            raise ProbeError("exception", f"the mending import hook is unavailable: "
                                          f"{type(e).__name__}: {e}", tb=_format_exc(e))
        try:
            finder = importhook.install(list(scope), unsafe=bool(args.get("unsafe")),
                                        cache_dir=args.get("mend_cache_dir"))
        except ValueError as e:
            raise ProbeError("bad-entry", f"mend scope {list(scope)}: {e}")
        _FINDER.append(finder)
        result["mend"] = {"scope": list(scope), "unsafe": bool(args.get("unsafe")), "records": []}

    stage(f"importing {modname}")
    t0 = time.perf_counter()
    module, fn_entry = import_entry(modname, attr, workspace)
    result["entry_file"], result["entry_line"] = entry_location(fn_entry, module)
    where = (result["entry_file"], result["entry_line"])
    try:
        import torch
    except ModuleNotFoundError as e:
        raise ProbeError("no-torch", f"{sys.executable} cannot import torch "
                                     f"(set `python` in [tool.graphmend.probe]): {e}",
                         *where, _format_exc(e))
    result["torch"] = torch.__version__
    result["timings"]["import_s"] = round(time.perf_counter() - t0, 4)

    device = args.get("device") or "auto"
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ProbeError("exception", "device `cuda` was asked for but torch.cuda.is_available() "
                                      f"is False (torch {torch.__version__})", *where)
    result["device"] = device
    cuda = device == "cuda"

    stage(f"calling {entry}")
    kwargs_entry = {}
    try:
        sig = inspect.signature(fn_entry)
        if "device" in sig.parameters:
            kwargs_entry["device"] = device
    except (TypeError, ValueError):
        pass
    if not callable(fn_entry):
        raise ProbeError("bad-entry", f"`{entry}` is not callable", *where)
    t0 = time.perf_counter()
    try:
        value = fn_entry(**kwargs_entry)
    except BaseException as e:  # noqa: BLE001 - user code
        if isinstance(e, KeyboardInterrupt):
            raise
        raise ProbeError("memory" if _is_oom(e) else "exception",
                         f"{entry}() raised {type(e).__name__}: {e}",
                         *_user_location(e, workspace, where), _format_exc(e))
    try:
        fn, call_args, call_kwargs, grad = normalize_entry_value(value)
    except ValueError as e:
        raise ProbeError("bad-entry", f"{entry}(): {e}", *where)
    if isinstance(fn, torch.nn.Module) and "device" not in kwargs_entry:
        fn = fn.to(device)
    if "device" not in kwargs_entry:
        call_args = _to_device(call_args, device, torch)
        call_kwargs = _to_device(call_kwargs, device, torch)
    result["timings"]["build_s"] = round(time.perf_counter() - t0, 4)

    backend_name = args.get("backend") or "eager"
    inner = _inner_backend(backend_name, torch)
    graphs = []

    def counting_backend(gm, example_inputs):
        reason = getattr(gm, "compile_subgraph_reason", None)
        frames = _logs.collapse_stack(_frame_dicts(getattr(reason, "user_stack", None)))
        graphs.append({
            "ops": sum(1 for n in gm.graph.nodes
                       if n.op in ("call_function", "call_method", "call_module")),
            "frame": frames[0] if frames else None,
            "graph_break": bool(getattr(reason, "graph_break", False)),
        })
        return inner(gm, example_inputs)

    from torch._dynamo import utils as dutils
    dlogs = _setup_dynamo_logs(torch)
    try:
        dutils.clear_compilation_metrics()
    except Exception:
        pass

    def sync():
        if cuda:
            torch.cuda.synchronize()

    def compile_seconds():
        try:
            ms = dutils.get_compilation_metrics()
        except Exception:
            return None
        tot = 0.0
        for m in ms:
            v = getattr(m, "entire_frame_compile_time_s", None)
            if v is None and getattr(m, "dynamo_cumulative_compile_time_us", None) is not None:
                v = m.dynamo_cumulative_compile_time_us / 1e6
            tot += v or 0.0
        return tot

    grad_ctx = torch.enable_grad if grad else torch.no_grad
    compiled = torch.compile(fn, backend=counting_backend)
    messages, second = [], []
    outputs = None
    stage(f"compiling with {backend_name} (first call)")
    with grad_ctx():
        dlogs.active = True
        sync()
        t0 = time.perf_counter()
        try:
            with cap.phase(messages):
                out = compiled(*call_args, **call_kwargs)
            sync()
        except BaseException as e:  # noqa: BLE001 - user code (or Dynamo on it)
            if isinstance(e, KeyboardInterrupt):
                raise
            result["messages"] = messages
            raise ProbeError("memory" if _is_oom(e) else "exception",
                             f"the compiled call raised {type(e).__name__}: {str(e)[:2000]}",
                             *_user_location(e, workspace, where), _format_exc(e))
        first = time.perf_counter() - t0
        comp = compile_seconds()
        n_first = len(graphs)
        recompiles_first = len(dlogs.recompiles)
        outputs = out
        result["messages"] = messages
        result["graphs"] = n_first
        result["breaks"] = max(n_first - 1, 0)
        result["timings"]["first_call_s"] = round(first, 6)
        result["timings"]["compile_s"] = round(comp, 6) if comp is not None else None
        result["timings"]["cold_start_s"] = round(first - comp, 6) if comp is not None else None

        runs = int(args.get("runs") or 0)
        times = []
        if runs > 0:
            stage(f"steady state ({runs} calls)")
            try:
                for i in range(runs):
                    sync()
                    t0 = time.perf_counter()
                    if i == 0:
                        with cap.phase(second):
                            compiled(*call_args, **call_kwargs)
                    else:
                        compiled(*call_args, **call_kwargs)
                    sync()
                    times.append(time.perf_counter() - t0)
            except BaseException as e:  # noqa: BLE001 - user code
                if isinstance(e, KeyboardInterrupt):
                    raise
                raise ProbeError("memory" if _is_oom(e) else "exception",
                                 f"call {len(times) + 2} of the compiled model raised "
                                 f"{type(e).__name__}: {str(e)[:2000]}",
                                 *_user_location(e, workspace, where), _format_exc(e))
            result["messages_second"] = second
        dlogs.active = False
        result["timings"]["steady_runs"] = len(times)
        result["timings"]["steady_median_ms"] = (round(statistics.median(times) * 1e3, 6)
                                                 if times else None)
        result["timings"]["steady_ms"] = [round(t * 1e3, 6) for t in times]
        comp_all = compile_seconds()
        if comp is not None and comp_all is not None:
            result["timings"]["compile_after_first_s"] = round(comp_all - comp, 6)

    result["graphs_total"] = len(graphs)
    result["graph_list"] = graphs
    result["recompiles"] = len(dlogs.recompiles)
    result["recompiles_first_call"] = recompiles_first
    result["recompile_reasons"] = [_logs.unresume_text(m[:2000]) for m in dlogs.recompiles[:50]]
    records = []
    for msg in dlogs.breaks:
        rec = _logs.parse_break_text(msg, workspace)
        if rec is not None:
            records.append(rec)
    result["break_events"] = len(records)

    # torch._dynamo.explain on a fresh Dynamo: its counts and reasons (the fallback for sites).
    stage("torch._dynamo.explain")
    explain_info = None
    try:
        torch._dynamo.reset()
        throwaway = []
        with grad_ctx(), cap.phase(throwaway):
            ex = torch._dynamo.explain(fn)(*call_args, **call_kwargs)
        reasons = []
        for r in ex.break_reasons:
            info = _logs.summarize_reason(str(getattr(r, "reason", r)))
            stack = _logs.collapse_stack(_frame_dicts(getattr(r, "user_stack", None)))
            site = stack[-1] if stack else {}
            reasons.append(_logs.make_record(info, site.get("file"), site.get("line"),
                                             site.get("function"), stack, workspace))
        explain_info = {"graph_count": ex.graph_count, "graph_break_count": ex.graph_break_count,
                        "op_count": ex.op_count, "break_reasons": reasons}
    except BaseException as e:  # noqa: BLE001 - explain is extra information
        if isinstance(e, KeyboardInterrupt):
            raise
        explain_info = {"error": f"{type(e).__name__}: {e}"}
    result["explain"] = explain_info
    if not records and explain_info and explain_info.get("break_reasons"):
        records = list(explain_info["break_reasons"])
    result["break_list"] = _logs.dedupe(records)

    if args.get("outputs_path") and outputs is not None:
        stage("saving outputs")
        try:
            torch.save(flatten_outputs(outputs, torch), args["outputs_path"])
            result["outputs_path"] = args["outputs_path"]
        except Exception as e:
            result["outputs_error"] = f"{type(e).__name__}: {e}"

    result["ok"] = True


_FINDER = []  # the mending finder of this process, if any (its records go into the result)


def _mend_records():
    out = []
    for finder in _FINDER:
        for r in list(getattr(finder, "records", []) or []):
            out.append(_jsonable(r.to_dict() if hasattr(r, "to_dict") else r))
    return out


def _new_result(args):
    return {
        "ok": False, "error": None, "entry": args.get("entry"), "python": sys.executable,
        "torch": None, "device": args.get("device"), "backend": args.get("backend") or "eager",
        "graphs": 0, "breaks": 0, "recompiles": 0, "break_list": [], "entry_file": None,
        "entry_line": None,
        "timings": {"compile_s": None, "first_call_s": None, "cold_start_s": None,
                    "steady_median_ms": None, "steady_runs": 0},
        "outputs_path": None, "messages": [], "stdout_tail": "", "stderr_tail": "",
        "duration_s": None,
    }


def _write_json(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, default=str)
    os.replace(tmp, path)


def run(args_path):
    with open(args_path, encoding="utf-8") as f:
        args = json.load(f)
    stage = _Stages(args.get("stage_path"))
    result = _new_result(args)
    t0 = time.perf_counter()
    cap = MessageCapture(sys.stdout)
    sys.stdout = cap
    _install_logging_capture(cap)
    try:
        probe(args, result, stage, cap)
    except ProbeError as e:
        result["ok"] = False
        result["error"] = {"kind": e.kind, "message": e.message, "traceback": e.tb,
                           "file": e.file or result.get("entry_file"),
                           "line": e.line if e.file else result.get("entry_line")}
    except BaseException as e:  # noqa: BLE001 - never die without a result
        result["ok"] = False
        result["error"] = {"kind": "memory" if _is_oom(e) else "exception",
                           "message": f"{type(e).__name__}: {e}", "traceback": _format_exc(e),
                           "file": result.get("entry_file"), "line": result.get("entry_line")}
    if "mend" in result:
        try:
            result["mend"]["records"] = _mend_records()
        except Exception as e:  # noqa: BLE001
            result["mend"]["records_error"] = f"{type(e).__name__}: {e}"
    result["duration_s"] = round(time.perf_counter() - t0, 4)
    stage("done")
    sys.stdout = cap.real
    _write_json(args["result_path"], result)
    return 0


# --------------------------------------------------------------------------- compare


# rtol = atol per floating dtype for "outputs_close" (benchmarks/models.py uses the same): a
# backend that fuses kernels (inductor) may round a graph split elsewhere differently
CLOSE = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-5, "float64": 1e-10}


def compare(a_path, b_path):
    """Bitwise equality ("outputs_equal"; NaNs equal), the largest difference, and whether every
    tensor that differs is within CLOSE of its dtype ("outputs_close"; integers, bools and other
    values must be equal)."""
    import torch
    a = torch.load(a_path, weights_only=False)
    b = torch.load(b_path, weights_only=False)
    res = {"ok": True, "outputs_equal": True, "outputs_close": True, "max_abs_diff": 0.0, "mismatches": []}
    keys = list(a) + [k for k in b if k not in a]
    for k in keys:
        if k not in a or k not in b:
            res["outputs_equal"] = res["outputs_close"] = False
            res["mismatches"].append({"name": k, "why": "missing on one side"})
            continue
        x, y = a[k], b[k]
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            if x.dtype != y.dtype or x.shape != y.shape:
                res["outputs_equal"] = res["outputs_close"] = False
                res["max_abs_diff"] = None
                res["mismatches"].append({"name": k, "why": f"{x.dtype}{list(x.shape)} vs "
                                                            f"{y.dtype}{list(y.shape)}"})
                continue
            xb, yb = x.contiguous().reshape(-1), y.contiguous().reshape(-1)
            if x.dtype == torch.bool:
                xb, yb = xb.to(torch.uint8), yb.to(torch.uint8)
            same = torch.equal(xb.view(torch.uint8), yb.view(torch.uint8)) if xb.numel() else True
            if not same and x.is_floating_point():
                # NaNs with different payloads are still the same value
                same = bool(torch.equal(torch.isnan(x), torch.isnan(y)) and
                            torch.equal(x.nan_to_num(0.0), y.nan_to_num(0.0)))
            if not same:
                res["outputs_equal"] = False
                res["mismatches"].append({"name": k, "why": "values differ"})
                tol = CLOSE.get(str(x.dtype).replace("torch.", "")) if x.is_floating_point() else None
                if tol is None or not torch.allclose(x, y, rtol=tol, atol=tol, equal_nan=True):
                    res["outputs_close"] = False
            if x.numel() and x.dtype != torch.bool:
                if x.is_complex():
                    d = (x.to(torch.complex128) - y.to(torch.complex128)).abs()
                else:
                    d = (x.double() - y.double()).abs()
                d = d[~torch.isnan(d)]
                if d.numel() and res["max_abs_diff"] is not None:
                    res["max_abs_diff"] = max(res["max_abs_diff"], float(d.max()))
        elif x != y:
            res["outputs_equal"] = res["outputs_close"] = False
            res["mismatches"].append({"name": k, "why": f"{x!r} != {y!r}"})
    return res


def compare_main(argv):
    a, b, out = argv[0], argv[1], argv[2]
    try:
        res = compare(a, b)
    except BaseException as e:  # noqa: BLE001
        res = {"ok": False, "outputs_equal": None, "outputs_close": None, "max_abs_diff": None,
               "error": f"{type(e).__name__}: {e}", "traceback": _format_exc(e)}
    _write_json(out, res)
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--compare":
        rc = compare_main(argv[1:])
    else:
        rc = run(argv[0])
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        # Leave at once: the user's threads, atexit hooks and compile workers must not keep the
        # result waiting (the runner ends what is left of the process group).
        os._exit(rc)


if __name__ == "__main__":
    main()
