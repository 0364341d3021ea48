"""The runtime helper block that every mended file carries.

GraphMend's rewrites replace statements that break a ``torch.compile`` graph
(``print``, logger calls, ``warnings.warn``, ``if <tensor cond>: raise E(msg)``)
by calls to small helper functions.  The helpers are inserted into the mended
file itself, once, as :data:`HELPER_SOURCE`, so a mended file needs only
``torch`` at run time, never graphmend.

Call forms the rewriter emits (exactly these)
===========================================

``print``::

    print(a, b, sep=s, end=e, file=f, flush=fl)
    -> _graphmend_print(a, b, sep=s, end=e, file=f, flush=fl)        # same arguments

Logger methods (``logger`` is any expression; the method name is a str literal)::

    logger.warning(msg, *args, **kw)  -> _graphmend_log(logger, "warning", msg, *args, **kw)
    logger.log(level, msg, *args)     -> _graphmend_log(logger, "log", level, msg, *args)
    logger.warning_once(msg)          -> _graphmend_log(logger, "warning_once", msg)

    Any method name works (debug, info, warning, warn, error, exception,
    critical, fatal, log, warning_once, info_once, ...).

``warnings.warn``::

    warnings.warn(msg, Category, stacklevel=n) -> _graphmend_warn(msg, Category, stacklevel=n)
    (same arguments, positional or keyword: message, category=None,
    stacklevel=1, source=None; ``skip_file_prefixes=`` is passed through.)

Validation guards (``C`` a tensor condition)::

    if C: raise E(a, b)        -> _graphmend_raise_if(C, E, a, b)
    if C: raise E()  /  raise E -> _graphmend_raise_if(C, E)          # NOT (C, E, None)
    if not C: raise E(msg)     -> _graphmend_raise_if(C, E, msg, negate=True)

    ``E`` must be the exception CLASS (not an instance, no keyword arguments).
    The guard statement must be exactly ``if C: raise ...`` with no ``else``.

Deferred f-string fields (tensor values inside f-strings)
--------------------------------------------------------
Every helper takes the keyword ``_gm_values=(v0, v1, ...)`` (omit it when empty).  Replace the
k-th tensor-valued replacement field of an f-string by the ESCAPED literal
placeholder ``{{_gmK}}`` keeping its conversion and format spec, and pass the
field expressions, in order, as ``_gm_values``::

    logger.info(f"n={n} loss={loss:.3f}")
    -> _graphmend_log(logger, "info", f"n={n} loss={{_gm0:.3f}}", _gm_values=(loss,))
    print(f"{x!r} {y:>{w}}")   -> _graphmend_print(f"{{_gm0!r}} {{_gm1:>{w}}}", _gm_values=(x, y))
    f"{t=}"                    -> f"t={{_gm0!r}}"        (f"{t=:.2f}" -> f"t={{_gm0:.2f}}")

The evaluated template then holds fields ``{_gmK}``, ``{_gmK!r|!s|!a}``,
``{_gmK:spec}``; the helper substitutes ``format(conv(v), spec)`` for them
(exactly what the f-string would have produced) in EVERY ``str`` positional
argument of the call (message, print arguments, exception arguments).  Nothing
else in the strings is touched, so other braces need no escaping.  Numbering is
per call, across all its f-strings.  Non-tensor values are allowed too.

Gated effects (a mended ``if C: <print/log/warn>``, C a tensor condition)
-----------------------------------------------------------------------
Every print/log/warn helper takes ``_gm_when=C``: in eager mode it is ``if C:``;
under compile the condition travels to the op and gates the effect at run time::

    if x.abs().max() > 1e4: warnings.warn("large", RuntimeWarning)
    -> _graphmend_warn("large", RuntimeWarning, _gm_when=x.abs().max() > 1e4)

Semantics
=========
Outside compilation (``torch.compiler.is_compiling()`` false) each helper runs
the original statement: same output, same log records (``stacklevel`` is raised
by one for the standard ``Logger`` / ``LoggerAdapter`` methods so that
funcName/lineno name the user's line), same warnings (``stacklevel + 1``),
same exception.  A non-tensor condition in ``_graphmend_raise_if`` is a plain
``if``, compiled or not.

While Dynamo traces, a helper records the call as ``graphmend::emit_v1``, a
``torch.library.custom_op`` registered as an ORDERED effectful op, so
Dynamo/AOTAutograd/Inductor keep it, in program order, in one graph, at any
inlining depth.  Its implementation does the real print / log record /
warning / raise at run time with the tensors' values at the call point.  Log
records and warnings carry the user's file, line and function (taken from
Dynamo's trace stack at trace time, honouring ``stacklevel`` within the
compiled region); log level checks happen at run time.

Cases that fall back to running the original statement under compile (so the
graph break returns, behaviour stays correct): a positional argument or value
that is not a Tensor / str / int / float / bool / None / torch.Size /
torch.dtype / torch.device (e.g. a list, dict or user object, whose ``str``
Dynamo would freeze at trace time); ``print(file=...)`` other than
``None``/``sys.stdout``/``sys.stderr``; a logger that is not a
``logging.Logger`` known to ``logging.getLogger`` (e.g. a LoggerAdapter);
logger keyword arguments other than ``stacklevel``; ``logger.exception``;
``warnings.warn`` with a Warning instance or ``source=``/other keywords; an
exception or warning class that ``module:qualname`` does not lead back to
(e.g. defined inside a function).

Known differences under compile: tensor text lacks ``grad_fn=...`` /
``requires_grad=True`` and ``Parameter containing:`` (the op sees plain
tensors); a ``stacklevel`` reaching outside the compiled region names the
outermost compiled frame; ``logger.warn`` does not emit its own
DeprecationWarning; with AOTAutograd backends (aot_eager, inductor) in-place
updates of graph INPUTS are applied at the end of the graph, so those made
before a guard that raises are lost (eager keeps them; the eager backend too);
with inductor, work after a failing guard that does not depend on it may
already have run; Dynamo traces the whole mended function before any of it
runs, so code after a check or message that cannot be traced for the inputs
(a shape mismatch the guard would have reported first) fails to compile, with
Dynamo's error, before the check raises or the message is emitted.  In the fallback path under compile (graph breaks), record
and warning locations may name a Dynamo resume function or this block.

Insertion: the block must run before any helper is called: put it after the
module docstring, the ``from __future__`` imports and (preferably) the file's
own imports, at module level.  It needs no annotations, so
``from __future__ import annotations`` files are fine.

Torch versions: the graph-break-free path needs ``torch.library.custom_op``
with ``schema=`` and ``register_fake`` (torch >= 2.4),
``torch._higher_order_ops.effects._register_effectful_op`` (private),
``torch.compiler.is_compiling`` and Dynamo honouring the
``_dynamo_marked_constant`` attribute that ``torch.compiler.assume_constant_result``
sets (set directly so that importing a mended file does not import
``torch._dynamo``); ``torch._guards.TracingContext.extract_stack`` (private) is
optional and only gives the user's location to records and warnings.  It is
tested only on torch 2.13.0 (CPU; backends eager, aot_eager, inductor), so
treat 2.4-2.12 as unverified.  If a required piece is missing the block still
imports and every helper simply runs the original statement.
"""

from __future__ import annotations

import re

HELPER_VERSION: int = 1
BEGIN_MARKER: str = (
    f"# --- graphmend runtime helpers v{HELPER_VERSION} "
    "(added by graphmend; do not edit) ---"
)
END_MARKER: str = "# --- end graphmend runtime helpers ---"

HELPER_NAMES = {
    "print": "_graphmend_print",
    "log": "_graphmend_log",
    "warn": "_graphmend_warn",
    "raise_if": "_graphmend_raise_if",
}

_BODY = r'''
# Lets torch.compile keep print / logging / warnings / validation raises in one
# graph: while compiling, each helper records an ordered custom op that performs
# the original effect at run time; otherwise it runs the original statement.
import logging as _gm_logging
import re as _gm_re
import sys as _gm_sys
import warnings as _gm_warnings

import torch as _gm_torch

_gm_compiler = getattr(_gm_torch, "compiler", None)
_gm_FIELD = _gm_re.compile(r"\{_gm(\d+)(![rsa])?(?::([^{}]*))?\}")
_gm_LEVELS = {"debug": 10, "info": 20, "warning": 30, "warn": 30, "error": 40,
              "critical": 50, "fatal": 50}
_gm_STACKLEVEL = {*_gm_LEVELS, "exception", "log"}  # Logger methods taking stacklevel=
_gm_warn_registries = {}


def _gm_const(fn):
    """torch.compiler.assume_constant_result(fn), without importing torch._dynamo now:
    Dynamo calls `fn` at trace time and uses its result as a constant."""
    fn._dynamo_marked_constant = True
    return fn


def _gm_fill(args, values):
    """Substitute the deferred f-string fields {_gmK[!c][:spec]} in the str arguments.
    (No re.sub callback and no format(): Dynamo mis-traces both; this only breaks.)"""
    if not values:
        return tuple(args)
    out = []
    for a in args:
        if type(a) is str:
            parts = _gm_FIELD.split(a)  # text, (index, conversion, spec, text)*
            a = parts[0]
            for i in range(1, len(parts), 4):
                v, conv, spec = values[int(parts[i])], parts[i + 1], parts[i + 2]
                if conv:
                    v = {"!r": repr, "!s": str, "!a": ascii}[conv](v)
                a += type(v).__format__(v, spec or "") + parts[i + 3]
        out.append(a)
    return tuple(out)


def _gm_resolve(key):
    """The object named by "module:qualname"."""
    mod, _, qualname = key.partition(":")
    obj = _gm_sys.modules[mod]
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _gm_decode(item, tensors):
    """Run time: the value an op item stands for (see _gm_encode)."""
    kind, rest = item[0], item[1:]
    if kind == "s":
        return rest
    if kind == "n":
        return None
    if kind == "d":
        return getattr(_gm_torch, rest)
    if kind == "D":
        return _gm_torch.device(rest)
    t = tensors[int(rest)]
    if kind == "z":
        return _gm_torch.Size(t.tolist())
    return {"i": int, "f": float, "b": bool}[kind](t) if kind in "ifb" else t


def _gm_emit_impl(action, meta, items, nvals, tensors):
    """Run time: perform the recorded print / log / warn / raise ("?action": only if the
    first item, the condition of a mended `if <tensor>:`, holds)."""
    objs = [_gm_decode(item, tensors) for item in items]
    if action.startswith("?"):
        action, when, objs = action[1:], objs[0], objs[1:]
        if not when:
            return
    args, values = objs[:len(objs) - nvals], objs[len(objs) - nvals:]
    if action == "print":
        stream, flush, sep, end = meta
        print(*_gm_fill(args, values), sep=_gm_decode(sep, ()), end=_gm_decode(end, ()),
              file=getattr(_gm_sys, stream), flush=flush == "1")
    elif action == "log":
        name, method, filename, lineno, func, _ = meta
        logger = _gm_logging.getLogger(name)
        level = args[0] if method == "log" else _gm_LEVELS.get(method)
        cls, base = type(logger), _gm_logging.Logger
        names = (method, "_log", "findCaller")
        overridden = any(getattr(cls, n) is not getattr(base, n) for n in names)
        if not filename or type(level) is not int or overridden:
            getattr(logger, method)(*_gm_fill(args, values))
        elif logger.isEnabledFor(level):  # as Logger._log does, at the user's line
            msg, *rest = _gm_fill(args[1:] if method == "log" else args, values)
            logger.handle(logger.makeRecord(
                name, level, filename, int(lineno), msg, tuple(rest), None, func))
    elif action == "warn":
        key, filename, lineno, func, modname = meta
        (message,) = _gm_fill(args, values)
        if not filename:
            _gm_warnings.warn(message, _gm_resolve(key))
            return
        module = _gm_sys.modules.get(modname)  # as warnings.warn does, at the user's line
        g = vars(module) if module is not None else None
        registry = (g.setdefault("__warningregistry__", {}) if g is not None
                    else _gm_warn_registries.setdefault(filename, {}))
        _gm_warnings.warn_explicit(message, _gm_resolve(key), filename, int(lineno),
                                   modname or None, registry, g)
    elif action == "raise":
        key, negate = meta
        cond, *rest = args
        if bool(cond) != (negate == "1"):
            raise _gm_resolve(key)(*_gm_fill(rest, values))


def _gm_register():
    """The ordered effectful op graphmend::emit_v1, registered once per process
    (later files reuse it); None where this torch lacks what it needs."""
    try:
        from torch._higher_order_ops.effects import _EffectType, _register_effectful_op
        _gm_compiler.is_compiling  # needed too
        if not hasattr(_gm_torch.ops.graphmend, "emit_v1"):
            # nondeterministic_seeded: fake-tensor / make_fx constant propagation must never
            # run the op while tracing when all its tensors are constants (print(3.5), x.shape)
            op = _gm_torch.library.custom_op(
                "graphmend::emit_v1", _gm_emit_impl, mutates_args=(),
                schema="(str action, str[] meta, str[] items, int nvals, Tensor[] tensors) -> ()",
                tags=(_gm_torch.Tag.nondeterministic_seeded,))
            op.register_fake(lambda *args: None)
        _register_effectful_op(_gm_torch.ops.graphmend.emit_v1.default, _EffectType.ORDERED)
        return _gm_torch.ops.graphmend.emit_v1.default
    except Exception:
        return None


_gm_op = _gm_register()


def _gm_compiling():
    return _gm_op is not None and _gm_compiler.is_compiling()


@_gm_const
def _gm_logger_name(key):
    """Trace time: the name for which logging.getLogger gives the logger with id `key`, or ""."""
    for logger in (_gm_logging.root, *list(_gm_logging.Logger.manager.loggerDict.values())):
        if id(logger) == key and isinstance(logger, _gm_logging.Logger):
            return logger.name if _gm_logging.getLogger(logger.name) is logger else ""
    return ""


@_gm_const
def _gm_class_key(cls):
    """Trace time: "module:qualname" of `cls` if that name leads back to it, else ""."""
    key = f"{getattr(cls, '__module__', '')}:{getattr(cls, '__qualname__', '')}"
    try:
        return key if _gm_resolve(key) is cls else ""
    except Exception:
        return ""


@_gm_const
def _gm_where(stacklevel):
    """Trace time: [file, line, function, module] of the user's frame `stacklevel`
    levels up from the helper call (within the compiled region)."""
    try:
        frames = [f for f in _gm_torch._guards.TracingContext.extract_stack()
                  if not f.name.startswith(("_graphmend_", "_gm_"))]
        frame = frames[max(len(frames) - max(int(stacklevel), 1), 0)]
        modname = next((name for name, m in list(_gm_sys.modules.items())
                        if getattr(m, "__file__", None) == frame.filename), "")
        return [frame.filename, str(frame.lineno), frame.name, modname]
    except Exception:  # a private API; without it the effect names this block's line
        return ["", "0", "", ""]


def _gm_encode(a, tensors):
    """Trace time: `a` as an op item, with tensors (and numbers, which may be
    symbolic) appended to `tensors`; None if `a` cannot be passed."""
    T = _gm_torch
    if type(a) is str:
        return "s" + a
    if a is None:
        return "n"
    if isinstance(a, T.dtype):
        return "d" + str(a)[len("torch."):]
    if isinstance(a, T.device):
        return "D" + str(a)
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
        return None
    tensors.append(a)
    return kind + str(len(tensors) - 1)


def _gm_emit(action, meta, args, values, when=None):
    """Trace time: record the op call; False (nothing recorded) if an argument can't be passed.
    `when`: a tensor condition gating the effect at run time."""
    tensors, items = [], []
    if when is not None:
        action, args = "?" + action, (when, *args)
    for a in (*args, *values):
        item = _gm_encode(a, tensors)
        if item is None:
            return False
        items.append(item)
    _gm_op(action, meta, items, len(values), tensors)
    return True


def _gm_skip(when):
    """`_gm_when=c` (a mended `if c: <effect>`): True when the effect must not happen. In eager
    mode that is `if c:`; under compile a tensor condition is left to the op, at run time."""
    if when is None or (_gm_compiling() and isinstance(when, _gm_torch.Tensor)):
        return False
    return not when


def _gm_gate(when):
    return when if isinstance(when, _gm_torch.Tensor) else None


def _graphmend_print(*args, sep=" ", end="\n", file=None, flush=False, _gm_values=(), _gm_when=None):
    """print(*args, sep=, end=, file=, flush=) that torch.compile keeps in the graph."""
    if _gm_skip(_gm_when):
        return None
    if _gm_compiling() and type(flush) is bool:
        stream = ("stdout" if file is None or file is _gm_sys.stdout
                  else "stderr" if file is _gm_sys.stderr else "")
        texts = [_gm_encode(s, None) if s is None or type(s) is str else None for s in (sep, end)]
        meta = [stream, "1" if flush else "0", *texts]
        if stream and None not in texts and _gm_emit("print", meta, args, _gm_values, _gm_gate(_gm_when)):
            return None
    if _gm_when is not None and not _gm_when:  # not deferred: Dynamo branches here (a break)
        return None
    print(*_gm_fill(args, _gm_values), sep=sep, end=end, file=file, flush=flush)


def _graphmend_log(logger, method, *args, _gm_values=(), _gm_when=None, **kw):
    """logger.<method>(*args, **kw) that torch.compile keeps in the graph."""
    if _gm_skip(_gm_when):
        return None
    if (_gm_compiling() and isinstance(logger, _gm_logging.Logger) and method != "exception"
            and all(k == "stacklevel" for k in kw)):
        name = _gm_logger_name(id(logger))
        meta = [name, method, *_gm_where(kw.get("stacklevel", 1))]
        if name and _gm_emit("log", meta, args, _gm_values, _gm_gate(_gm_when)):
            return None
    if _gm_when is not None and not _gm_when:
        return None
    if method in _gm_STACKLEVEL and isinstance(logger, (_gm_logging.Logger,
                                                        _gm_logging.LoggerAdapter)):
        kw["stacklevel"] = kw.get("stacklevel", 1) + 1  # skip this helper's frame
    return getattr(logger, method)(*_gm_fill(args, _gm_values), **kw)


def _graphmend_warn(message, category=None, stacklevel=1, source=None, *, _gm_values=(),
                    _gm_when=None, **kw):
    """warnings.warn(...) that torch.compile keeps in the graph."""
    if _gm_skip(_gm_when):
        return None
    if (_gm_compiling() and type(message) is str and source is None and not kw
            and (category is None or isinstance(category, type))):
        key = "builtins:UserWarning" if category is None else _gm_class_key(category)
        if key and _gm_emit("warn", [key, *_gm_where(stacklevel)], (message,), _gm_values,
                            _gm_gate(_gm_when)):
            return None
    if _gm_when is not None and not _gm_when:
        return None
    (message,) = _gm_fill((message,), _gm_values)
    _gm_warnings.warn(message, category, stacklevel + 1, source, **kw)  # +1: this helper


def _graphmend_raise_if(cond, exc_type, *args, negate=False, _gm_values=()):
    """`if cond: raise exc_type(*args)` (`if not cond:` when negate=True) that
    torch.compile keeps in the graph when cond is a tensor."""
    if _gm_compiling() and isinstance(cond, _gm_torch.Tensor) and isinstance(exc_type, type):
        key = _gm_class_key(exc_type)
        if key and _gm_emit("raise", [key, "1" if negate else "0"], (cond, *args), _gm_values):
            return None
    if (not cond) if negate else cond:
        raise exc_type(*_gm_fill(args, _gm_values))
'''

HELPER_SOURCE: str = BEGIN_MARKER + "\n" + _BODY.strip("\n") + "\n" + END_MARKER + "\n"

_MARKER_RE = re.compile(
    r"^[ \t]*# --- graphmend runtime helpers v\d+ \(added by graphmend; do not edit\) ---[ \t]*$",
    re.MULTILINE,
)


def has_helpers(source_text: str) -> bool:
    """True if `source_text` already carries a graphmend runtime helper block (any version)."""
    return _MARKER_RE.search(source_text) is not None
