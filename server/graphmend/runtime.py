"""GraphMend's runtime: what mended code calls so that torch.compile keeps its effects in one graph.

Mended code reaches this module in one of three ways (the ``runtime`` setting):
``vendor`` (a copy, ``_graphmend_runtime.py``, in the project), ``import`` (this module), or
``inline`` (its source in the file, for a single script or notebook). It imports only the
standard library and torch, so mended code needs nothing else installed. Each mended file
imports it once, as ``graphmend``::

    from . import _graphmend_runtime as graphmend          # vendor, inside a package
    import _graphmend_runtime as graphmend                 # vendor, a file in no package
    from graphmend import runtime as graphmend             # import

Calls the rewriter emits
========================
::

    print(a, b, sep=s)                      -> graphmend.print(a, b, sep=s)
    logger.warning(msg, *args)              -> graphmend.log(logger, "warning", msg, *args)
    logging.warning(msg, *args)             -> graphmend.log(logging, "warning", msg, *args)  (the root logger)
    warnings.warn(msg, Category)            -> graphmend.warn(msg, Category)
    if C: raise E(msg)                      -> graphmend.raise_if(C, E, msg)
    if not C: raise E(msg) / assert C, msg  -> graphmend.raise_unless(C, E, msg)
    if C: print(...) / log / warn           -> graphmend.print_if(C, ...) / log_if / warn_if
    torch.backends.cuda.sdp_kernel(...)     -> graphmend.sdp_kernel(...)   (torch.nn.attention.sdpa_kernel)

Arguments are passed unchanged, except the parts whose text exists only when the graph runs:

    f"loss={loss:.3f} n={n}"   -> graphmend.format("loss={:.3f} n={}", loss, n)   (str.format)
    "x=%s" % (t,)              -> graphmend.percent("x=%s", (t,))
    t.item(), float(t), int(t), bool(t), t.tolist()
                               -> graphmend.item(t), graphmend.to_float(t), graphmend.to_int(t),
                                  graphmend.to_bool(t), graphmend.tolist(t)

In eager mode each of these returns exactly what the original expression gives; under compile
it returns a marker that the effect resolves at run time, on the tensor as it was at the call.

Semantics
=========
Outside compilation (``torch.compiler.is_compiling()`` false) each helper runs the original
statement: same output, same log records (``stacklevel`` is raised by one for the standard
``Logger`` / ``LoggerAdapter`` methods so that funcName/lineno name the user's line), same
warnings (``stacklevel + 1``), same exception. A non-tensor condition in ``raise_if`` /
``print_if`` ... is a plain ``if``, compiled or not.

While Dynamo traces, a helper records the call as ``graphmend::emit_v<VERSION>``, an op of a
``torch.library.Library`` registered as an ORDERED effectful op, so Dynamo, AOTAutograd and
Inductor keep it in one graph, at any inlining depth, in program order. Every call also names one
module-level tensor as written (``_ORDER``, empty, never really written): Inductor on torch 2.13
drops the ordering edge between two effectful ops (pytorch/pytorch#188301; two failing checks
raised the second's exception), but it keeps two writes of one buffer in order. Its implementation
does the real print / log record / warning / raise at run time with the tensors' values at the
call point (each tensor is copied when the op runs, so a later in-place update, or a buffer
Inductor reuses, cannot change a record a handler formats later). Log records and warnings
carry the user's file, line and function (from Dynamo's trace stack at trace time, honouring
``stacklevel`` within the compiled region); log level checks happen at run time.

Values the op carries: tensors, str, int, float, bool, None, torch.dtype, torch.device,
torch.Size, and tuples, lists and dicts (str/int/float/bool/None keys) of these, nested, plus
the markers above. Anything else falls back to running the original statement under compile
(so the graph break returns and behaviour stays correct), as do: ``print(file=...)`` other than
``None``/``sys.stdout``/``sys.stderr``; a logger that is not a ``logging.Logger`` known to
``logging.getLogger`` (e.g. a LoggerAdapter); logger keyword arguments other than
``stacklevel``; ``logger.exception``; ``warnings.warn`` with a Warning instance or
``source=``/other keywords; an exception or warning class that ``module:qualname`` does not lead
back to (e.g. defined inside a function).

Known differences under compile: tensor text lacks ``grad_fn=...`` / ``requires_grad=True`` and
``Parameter containing:`` (the op sees plain tensors); a list or tuple passed to a message
becomes a new one of the same type (its identity is not kept); a ``stacklevel`` reaching
outside the compiled region names the outermost compiled frame; ``logger.warn`` does not emit
its own DeprecationWarning; with AOTAutograd backends (aot_eager, inductor) in-place updates of
graph INPUTS are applied at the end of the graph, so those made before a guard that raises are
lost (eager keeps them; the eager backend too); with inductor, work after a failing guard that
does not depend on it may already have run; Dynamo traces the whole mended function before any
of it runs, so code after a check or message that cannot be traced for the inputs (a shape
mismatch the guard would have reported first) fails to compile, with Dynamo's error, before the
check raises or the message is emitted. In the fallback path under compile (graph breaks),
record and warning locations may name a Dynamo resume function or this module.

Torch versions: the graph-break-free path needs ``torch.library.Library`` fragments with
``torch.library.register_fake`` (torch >= 2.4), ``torch._higher_order_ops.effects._register_effectful_op``
(private), ``torch.compiler.is_compiling`` and Dynamo honouring the ``_dynamo_marked_constant``
attribute that ``torch.compiler.assume_constant_result`` sets (set directly so that importing
this module does not import ``torch._dynamo``); ``torch._guards.TracingContext.extract_stack``
(private) is optional and only gives the user's location to records and warnings. Tested only
on torch 2.13.0 (CPU; backends eager, aot_eager, inductor), so treat 2.4-2.12 as unverified. If a
required piece is missing the module still imports and every helper runs the original statement.
"""

import builtins as _builtins
import logging as _logging
import sys as _sys
import warnings as _warnings
from typing import NamedTuple as _NamedTuple

import torch as _torch

VERSION = 7  # bump on ANY change of this file: a vendored copy of the same version and another text reads as edited

__all__ = ["print", "print_if", "log", "log_if", "warn", "warn_if", "raise_if", "raise_unless",
           "format", "percent", "item", "to_float", "to_int", "to_bool", "tolist", "sdp_kernel"]

_compiler = getattr(_torch, "compiler", None)
_LEVELS = {"debug": 10, "info": 20, "warning": 30, "warn": 30, "error": 40, "critical": 50, "fatal": 50}
_STACKLEVEL = {*_LEVELS, "exception", "log"}  # Logger methods taking stacklevel=
_warn_registries = {}
_NO_COND = object()


class _Later(_NamedTuple):
    """Under compile: a value computed when the effect runs. `how` is "format" (template,
    values), "percent" (template, values) or a scalar conversion ("item", "float", "int", "bool",
    "tolist"; value = the tensor)."""
    how: str
    template: str
    value: object


def _const(fn):
    """torch.compiler.assume_constant_result(fn), without importing torch._dynamo now:
    Dynamo calls `fn` at trace time and uses its result as a constant."""
    fn._dynamo_marked_constant = True
    return fn


# --------------------------------------------------------------------------- deferred values


def format(template, *values):  # noqa: A001 - read as graphmend.format
    """`template.format(*values)`; under compile, formatted when the effect runs."""
    if _compiling():
        return _Later("format", template, values)
    return template.format(*values)


def percent(template, values):
    """`template % values`; under compile, formatted when the effect runs."""
    if _compiling():
        return _Later("percent", template, values)
    return template % values


def item(t):
    """`t.item()`; under compile, read when the effect runs."""
    return _Later("item", "", t) if _compiling() and isinstance(t, _torch.Tensor) else t.item()


def to_float(t):
    """`float(t)`; under compile, read when the effect runs."""
    return _Later("float", "", t) if _compiling() and isinstance(t, _torch.Tensor) else float(t)


def to_int(t):
    """`int(t)`; under compile, read when the effect runs."""
    return _Later("int", "", t) if _compiling() and isinstance(t, _torch.Tensor) else int(t)


def to_bool(t):
    """`bool(t)`; under compile, read when the effect runs."""
    return _Later("bool", "", t) if _compiling() and isinstance(t, _torch.Tensor) else bool(t)


def tolist(t):
    """`t.tolist()`; under compile, read when the effect runs."""
    return _Later("tolist", "", t) if _compiling() and isinstance(t, _torch.Tensor) else t.tolist()


_CONVERT = {"item": lambda t: t.item(), "float": float, "int": int, "bool": bool,
            "tolist": lambda t: t.tolist()}


def _resolve(a):
    """The value a marker stands for, computed now (the fallback path; under compile this is
    where the graph break comes back)."""
    if type(a) is _Later:
        if a.how == "format":
            return a.template.format(*[_resolve(v) for v in a.value])
        if a.how == "percent":
            return a.template % _resolve(a.value)
        return _CONVERT[a.how](a.value)
    if type(a) is tuple:
        return tuple(_resolve(v) for v in a)
    return a


def _resolve_all(args):
    return [_resolve(a) for a in args]


# --------------------------------------------------------------------------- the op


def _class_for(key):
    """The object named by "module:qualname"."""
    mod, _, qualname = key.partition(":")
    obj = _sys.modules[mod]
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _decode(items, pos, tensors):
    """Run time: (the value the op items from `pos` stand for, the next position); see _encode."""
    item = items[pos]
    kind, rest = item[0], item[1:]
    pos += 1
    if kind == "s":
        return rest, pos
    if kind == "n":
        return None, pos
    if kind == "d":
        return getattr(_torch, rest), pos
    if kind == "D":
        return _torch.device(rest), pos
    if kind in "TLM":
        out = []
        for _ in range(int(rest) * (2 if kind == "M" else 1)):
            v, pos = _decode(items, pos, tensors)
            out.append(v)
        if kind == "M":
            return dict(zip(out[::2], out[1::2])), pos
        return (tuple(out) if kind == "T" else out), pos
    if kind == "F" or kind == "P":
        values, pos = _decode(items, pos, tensors)
        return (rest.format(*values) if kind == "F" else rest % values), pos
    if kind == "X":
        t, pos = _decode(items, pos, tensors)
        return _CONVERT[rest](t), pos
    t = tensors[int(rest)]
    if kind == "z":
        return _torch.Size(t.tolist()), pos
    if kind in "ifb":
        return {"i": int, "f": float, "b": bool}[kind](t), pos
    return t.clone(), pos  # the value at the call, whatever happens to the buffer later


def _emit_impl(action, meta, items, nargs, tensors, order):
    """Run time: perform the recorded print / log / warn / raise ("?action": only if the
    first item, the condition of a mended `if <tensor>:`, holds)."""
    objs, pos = [], 0
    for _ in range(nargs):
        v, pos = _decode(items, pos, tensors)
        objs.append(v)
    if action.startswith("?"):
        action, when, objs = action[1:], objs[0], objs[1:]
        if not when:
            return
    args = objs
    if action == "print":
        stream, flush, sep, end = meta
        _builtins.print(*args, sep=_decode([sep], 0, ())[0], end=_decode([end], 0, ())[0],
                        file=getattr(_sys, stream), flush=flush == "1")
    elif action == "log":
        name, method, filename, lineno, func, _, module = meta
        if module == "1" and len(_logging.root.handlers) == 0:
            _logging.basicConfig()  # as the module-level `logging.warning(...)` does
        logger = _logging.getLogger(name)
        level = args[0] if method == "log" else _LEVELS.get(method)
        cls, base = type(logger), _logging.Logger
        names = (method, "_log", "findCaller")
        overridden = any(getattr(cls, n) is not getattr(base, n) for n in names)
        if not filename or type(level) is not int or overridden:
            getattr(logger, method)(*args)
        elif logger.isEnabledFor(level):  # as Logger._log does, at the user's line
            msg, *rest = args[1:] if method == "log" else args
            logger.handle(logger.makeRecord(name, level, filename, int(lineno), msg, tuple(rest), None, func))
    elif action == "warn":
        key, filename, lineno, func, modname = meta
        (message,) = args
        if not filename:
            _warnings.warn(message, _class_for(key))
            return
        module = _sys.modules.get(modname)  # as warnings.warn does, at the user's line
        g = vars(module) if module is not None else None
        registry = (g.setdefault("__warningregistry__", {}) if g is not None
                    else _warn_registries.setdefault(filename, {}))
        _warnings.warn_explicit(message, _class_for(key), filename, int(lineno), modname or None, registry, g)
    elif action == "raise":
        key, negate = meta
        cond, *rest = args
        if bool(cond) != (negate == "1"):
            raise _class_for(key)(*rest)


_LIBRARIES = []


def _register():
    """The ordered effectful op graphmend::emit_v<VERSION>, registered once per process (another
    copy of this module of the same version reuses it); None where this torch lacks what it needs."""
    try:
        from torch._higher_order_ops.effects import _EffectType, _register_effectful_op
        _compiler.is_compiling  # needed too
        name = f"emit_v{VERSION}"
        if not hasattr(_torch.ops.graphmend, name):
            # A plain library op (not torch.library.custom_op, whose wrapper costs 15-90 us a
            # call against about 7 us): the op returns nothing, so autograd has nothing to do.
            # nondeterministic_seeded: fake-tensor / make_fx constant propagation must never
            # run the op while tracing when all its tensors are constants (print(3.5), x.shape)
            lib = _torch.library.Library("graphmend", "FRAGMENT")
            # `order` is declared written so that Inductor keeps the calls in program order
            lib.define(f"{name}(str action, str[] meta, str[] items, int nargs, Tensor[] tensors, Tensor(a!) order)"
                       " -> ()",
                       tags=(_torch.Tag.nondeterministic_seeded,))
            lib.impl(name, _emit_impl, "CompositeExplicitAutograd")
            _torch.library.register_fake(f"graphmend::{name}", lambda *args: None, lib=lib)
            _LIBRARIES.append(lib)  # the registration lasts as long as the Library object
        overload = getattr(_torch.ops.graphmend, name).default
        _register_effectful_op(overload, _EffectType.ORDERED)
        return overload
    except Exception:
        return None


_op = _register()
# What every call "writes" (see `_register`); never really read or written. It also gives the op a
# device when a message holds no tensor: torch 2.13 CPU inductor fuses the kernels on both sides of
# an ordered effectful op without tensor arguments and frees a buffer before the fused kernel reads
# it (UnboundLocalError: bufN, tests/test_known_issues.py).
_ORDER = _torch.empty(0, device="cpu") if _op is not None else None


def _compiling():
    return _op is not None and _compiler.is_compiling()


@_const
def _logger_name(key):
    """Trace time: the name for which logging.getLogger gives the logger with id `key`, or ""."""
    for logger in (_logging.root, *list(_logging.Logger.manager.loggerDict.values())):
        if id(logger) == key and isinstance(logger, _logging.Logger):
            return logger.name if _logging.getLogger(logger.name) is logger else ""
    return ""


@_const
def _class_key(cls):
    """Trace time: "module:qualname" of `cls` if that name leads back to it, else ""."""
    key = f"{getattr(cls, '__module__', '')}:{getattr(cls, '__qualname__', '')}"
    try:
        return key if _class_for(key) is cls else ""
    except Exception:
        return ""


@_const
def _where(stacklevel):
    """Trace time: [file, line, function, module] of the user's frame `stacklevel`
    levels up from the helper call (within the compiled region)."""
    try:
        frames = [f for f in _torch._guards.TracingContext.extract_stack() if f.filename != _HERE]
        frame = frames[max(len(frames) - max(int(stacklevel), 1), 0)]
        modname = next((name for name, m in list(_sys.modules.items())
                        if getattr(m, "__file__", None) == frame.filename), "")
        return [frame.filename, str(frame.lineno), frame.name, modname]
    except Exception:  # a private API; without it the effect names this module's line
        return ["", "0", "", ""]


_HERE = _where.__code__.co_filename  # frames of this module (a vendored copy, or inline) are skipped


def _encode(a, tensors, items):
    """Trace time: append `a` to `items` as op items (tensors, and numbers, which may be symbolic,
    go to `tensors`); False if `a` cannot be passed. Containers are a count item followed by
    their elements (dicts: key, value, ...)."""
    T = _torch
    if type(a) is str:
        items.append("s" + a)
        return True
    if a is None:
        items.append("n")
        return True
    if isinstance(a, T.dtype):
        items.append("d" + str(a)[len("torch."):])
        return True
    if isinstance(a, T.device):
        items.append("D" + str(a))
        return True
    if type(a) is _Later:
        if a.how in ("format", "percent"):
            if type(a.template) is not str:
                return False
            items.append(("F" if a.how == "format" else "P") + a.template)
        else:
            items.append("X" + a.how)
        return _encode(a.value, tensors, items)
    if type(a) is tuple or type(a) is list:
        items.append(("T" if type(a) is tuple else "L") + str(len(a)))
        for v in a:
            if not _encode(v, tensors, items):
                return False
        return True
    if type(a) is dict:
        items.append("M" + str(len(a)))
        for k, v in a.items():
            if not (k is None or type(k) in (str, int, float, bool)):
                return False
            if not (_encode(k, tensors, items) and _encode(v, tensors, items)):
                return False
        return True
    if isinstance(a, T.Tensor):
        kind = "t"
    elif type(a) is bool:
        kind, a = "b", T.full((), a, dtype=T.bool)
    elif type(a) is int and -2**63 <= a < 2**63:
        kind, a = "i", T.full((), a, dtype=T.int64)
    elif type(a) is float:
        kind, a = "f", T.full((), a, dtype=T.float64)
    elif type(a) is T.Size:
        kind, a = "z", T.tensor(list(a), dtype=T.int64)
    else:
        return False
    tensors.append(a)
    items.append(kind + str(len(tensors) - 1))
    return True


def _emit(action, meta, args, when=_NO_COND):
    """Trace time: record the op call; False (nothing recorded) if an argument can't be passed.
    `when`: a tensor condition gating the effect at run time."""
    tensors, items = [], []
    if when is not _NO_COND:
        action, args = "?" + action, (when, *args)
    for a in args:
        if not _encode(a, tensors, items):
            return False
    _op(action, meta, items, len(args), tensors, _ORDER)
    return True


def _deferred(when):
    """Under compile, a tensor condition is left to the op (checked at run time)."""
    return _compiling() and isinstance(when, _torch.Tensor)


# --------------------------------------------------------------------------- effects


def print(*args, sep=" ", end="\n", file=None, flush=False):  # noqa: A001 - read as graphmend.print
    """`print(*args, sep=, end=, file=, flush=)`, kept in the graph under torch.compile."""
    _print(_NO_COND, args, sep, end, file, flush)


def print_if(cond, *args, sep=" ", end="\n", file=None, flush=False):
    """`if cond: print(*args, ...)`, kept in the graph under torch.compile."""
    if _deferred(cond) or cond:
        _print(cond, args, sep, end, file, flush)


def _print(cond, args, sep, end, file, flush):
    if _compiling() and type(flush) is bool:
        stream = ("stdout" if file is None or file is _sys.stdout
                  else "stderr" if file is _sys.stderr else "")
        texts = []
        for s in (sep, end):
            if s is None or type(s) is str:
                _encode(s, None, texts)
        if stream and len(texts) == 2 and _emit("print", [stream, "1" if flush else "0", *texts], args,
                                                cond if _deferred(cond) else _NO_COND):
            return
    if cond is not _NO_COND and not cond:  # not deferred: Dynamo branches here (a break)
        return
    _builtins.print(*_resolve_all(args), sep=sep, end=end, file=file, flush=flush)


def log(logger, method, *args, **kw):
    """`logger.<method>(*args, **kw)`, kept in the graph under torch.compile."""
    return _log(_NO_COND, logger, method, args, kw)


def log_if(cond, logger, method, *args, **kw):
    """`if cond: logger.<method>(*args, **kw)`, kept in the graph under torch.compile."""
    if _deferred(cond) or cond:
        _log(cond, logger, method, args, kw)


def _log(cond, logger, method, args, kw):
    # `logging.warning(...)`: the module's functions log to the root logger (after
    # `basicConfig()` when it has no handler)
    module = logger is _logging and (method in _LEVELS or method == "log")
    if (_compiling() and (module or isinstance(logger, _logging.Logger)) and method != "exception"
            and all(k == "stacklevel" for k in kw)):
        name = _logger_name(id(_logging.root if module else logger))
        meta = [name, method, *_where(kw.get("stacklevel", 1)), "1" if module else "0"]
        if name and _emit("log", meta, args, cond if _deferred(cond) else _NO_COND):
            return None
    if cond is not _NO_COND and not cond:
        return None
    if method in _STACKLEVEL and (module or isinstance(logger, (_logging.Logger, _logging.LoggerAdapter))):
        kw["stacklevel"] = kw.get("stacklevel", 1) + 2  # skip this module's two frames
    return getattr(logger, method)(*_resolve_all(args), **kw)


def warn(message, category=None, stacklevel=1, source=None, **kw):
    """`warnings.warn(...)`, kept in the graph under torch.compile."""
    _warn(_NO_COND, message, category, stacklevel, source, kw)


def warn_if(cond, message, category=None, stacklevel=1, source=None, **kw):
    """`if cond: warnings.warn(...)`, kept in the graph under torch.compile."""
    if _deferred(cond) or cond:
        _warn(cond, message, category, stacklevel, source, kw)


def _warn(cond, message, category, stacklevel, source, kw):
    if (_compiling() and (type(message) is str or type(message) is _Later) and source is None and not kw
            and (category is None or isinstance(category, type))):
        key = "builtins:UserWarning" if category is None else _class_key(category)
        if key and _emit("warn", [key, *_where(stacklevel)], (message,),
                         cond if _deferred(cond) else _NO_COND):
            return
    if cond is not _NO_COND and not cond:
        return
    _warnings.warn(_resolve(message), category, stacklevel + 2, source, **kw)  # +2: this module's frames


def raise_if(cond, exc_type, *args):
    """`if cond: raise exc_type(*args)`, checked in the graph under torch.compile when cond is a tensor."""
    _raise(cond, False, exc_type, args)


def raise_unless(cond, exc_type, *args):
    """`if not cond: raise exc_type(*args)` (and `assert cond, msg`), checked in the graph under
    torch.compile when cond is a tensor."""
    _raise(cond, True, exc_type, args)


def _raise(cond, negate, exc_type, args):
    if _compiling() and isinstance(cond, _torch.Tensor) and isinstance(exc_type, type):
        key = _class_key(exc_type)
        if key and _emit("raise", [key, "1" if negate else "0"], (cond, *args)):
            return
    if (not cond) if negate else cond:
        raise exc_type(*_resolve_all(args))


def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """``torch.backends.cuda.sdp_kernel`` without its deprecation: the context manager torch's own
    implementation of it enters, ``torch.nn.attention.sdpa_kernel`` of the backends the flags
    enable (same parameters, order and defaults), which Dynamo traces; sdp_kernel's generator
    wrapper it cannot."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backends = []
    if enable_flash:
        backends.append(SDPBackend.FLASH_ATTENTION)
    if enable_mem_efficient:
        backends.append(SDPBackend.EFFICIENT_ATTENTION)
    if enable_math:
        backends.append(SDPBackend.MATH)
    if enable_cudnn:
        backends.append(SDPBackend.CUDNN_ATTENTION)
    return sdpa_kernel(backends)


def _run_eagerly_as_frames_of_their_own():
    """Eager code that calls a helper while torch.compile is active (a caller Dynamo skipped, or
    ran eagerly after a break it could not resume from) made Dynamo compile the helper as a frame
    of its own: one more graph, and a trace with no user frame in it, so a warning or log record
    named this module's line (realcode round 10, POT's sinkhorn_knopp). Each helper's code is
    marked so that, as a frame of its own, it and what it calls run eagerly, as the original
    statement would; inlined into a frame Dynamo traces it is traced as before. A private API of
    torch's C extension (no import of torch._dynamo); without it nothing is marked."""
    try:
        from torch._C._dynamo.eval_frame import _FrameAction, _FrameExecStrategy, set_code_exec_strategy
        skip = _FrameExecStrategy(_FrameAction.SKIP, _FrameAction.SKIP)
        for name in __all__:
            set_code_exec_strategy(globals()[name].__code__, skip)
    except Exception:
        pass


_run_eagerly_as_frames_of_their_own()
