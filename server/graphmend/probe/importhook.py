"""Mend the modules under a scope as they are imported: no file is written next to the code.

    graphmend run [--scope PKG,...] [--unsafe-fixes] [--no-cache] [--cache-dir D]
                  [--report FILE.json] [--quiet] -- COMMAND ...

or, from code, before the modules are imported::

    from graphmend.probe import importhook
    finder = importhook.install(["transformers"], unsafe=True)
    ...
    importhook.uninstall(finder)

How it works
============
`install` puts a `MendingFinder` first on `sys.meta_path`. For a module under the scope it asks
the finders after it for the spec (the normal resolution, `sys.path` respected) and, when the
module is a plain `.py` file loaded by `SourceFileLoader`, swaps in a `MendingLoader` whose
`get_code` mends the text with `graphmend.rewrite.fix_source` before compiling it. Everything else
(modules outside the scope, `torch`, `graphmend`, the standard library, extension modules,
namespace packages, custom loaders) is left to the normal machinery, untouched.

* Bytecode: a module that needs mending is always compiled from its source (a valid unmended
  `.pyc` in `__pycache__` is never served instead), and the loader never writes bytecode
  (`set_data` is a no-op), so nothing is written next to the user's code. A module with nothing
  to mend loads as usual (an up-to-date `.pyc` may be read, none is written).
* Line numbers: the mended text is compiled with the ORIGINAL file name and its AST positions
  mapped back to the original lines (a line diff of original vs mended): tracebacks, `inspect`,
  `linecache`, Dynamo's frames, graph-break reasons and the log records of deferred messages
  all name the user's real file and line. Lines a mend rewrote map to the original statement's
  lines (columns then span the whole line). Mended modules import the installed runtime
  (`from graphmend import runtime as graphmend`, runtime mode "import": no copy is written);
  the one import line the mend adds maps to the line before it.
* Cross-file scope: a function is mended when any compiled entry reaches it (`analysis.reach`),
  joined over every in-scope module summarised so far in this process. The closure is kept
  incrementally (work items for modules not loaded yet wait until they are). Import order
  matters: a module is often executed before the module whose `forward` reaches it
  (transformers' `modeling_rope_utils` is imported by `configuration_phi3`, before
  `modeling_phi3`). When a newly summarised module makes functions of an already-loaded module
  reachable, that module is mended again with the new context and the changed functions are
  patched in place (`function.__code__` replaced, on module-level functions and class methods,
  through staticmethod / classmethod / property / `functools.wraps` wrappers, before the new
  module's body runs, so decorators it applies see the mended code); `graphmend` (the runtime)
  is bound in the module's namespace when it was not there. A module still executing is patched again when
  its body ends. What cannot be patched this way is listed in the record (`late_missed`):
  closures already created from the old code, functions whose closure layout changed.
* Cache: in `cache_dir` (default `$GRAPHMEND_CACHE_DIR/importhook` or
  `~/.cache/graphmend/importhook`), per module: its summary (scope and findings; keyed by the
  source's sha256, graphmend's version and a content hash of its mending code, the settings that
  matter and the module name; valid while the module files the analysis read to resolve names
  keep their size, mtime and inode), the mend result (the mended text, or "unchanged"; keyed by the
  same plus the unsafe flag, the functions reached from other modules and those dependencies),
  and the compiled code of the mended text (marshalled; keyed by the bytecode magic number, the
  path and both texts). Writes are atomic; an unwritable cache only costs time.
* Failure: a module whose mending fails (an exception, a result that does not parse or
  compile) loads unchanged and its record says why; the import itself never fails because of
  the hook.

GraphMend's engine is pure stdlib (ast): nothing here imports torch (the runtime a mended
module imports does, as the module itself does).
"""

from __future__ import annotations

import ast
import atexit
import dataclasses
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import marshal
import os
import sys
import threading
import time
import types
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # .../graphmend

ENV_SCOPE = "GRAPHMEND_RUN_SCOPE"
ENV_UNSAFE = "GRAPHMEND_RUN_UNSAFE"
ENV_CACHE_DIR = "GRAPHMEND_RUN_CACHE_DIR"
ENV_NO_CACHE = "GRAPHMEND_RUN_NO_CACHE"
ENV_SETTINGS = "GRAPHMEND_RUN_SETTINGS"
ENV_REPORT_DIR = "GRAPHMEND_RUN_REPORT_DIR"
ENV_SITE_DIR = "GRAPHMEND_RUN_SITE_DIR"
ENV_CACHE_DEFAULT = "GRAPHMEND_CACHE_DIR"

CACHE_FORMAT = 1
NEVER = ("torch", "graphmend")  # never in scope, whatever is asked


# --------------------------------------------------------------------------- records


@dataclass
class MendRecord:
    """One module the hook considered."""

    module: str
    path: str
    applied: int = 0  # fixes applied (at load, plus any applied by late patches)
    cached: bool = False  # the analysis (summary, and the mend when one was needed) came from the cache
    error: Optional[str] = None  # why the module loaded unchanged (None: no problem)
    seconds: float = 0.0  # time spent by the hook on this module (not the module's own execution)
    codes: list[str] = field(default_factory=list)  # the codes of the applied fixes
    late: list[str] = field(default_factory=list)  # functions patched after load (cross-file scope)
    late_missed: list[str] = field(default_factory=list)  # late mends that could not be patched in
    text_sha256: Optional[str] = None  # sha256 of the mended text (UTF-8) its code comes from
    pid: int = field(default_factory=os.getpid)

    @property
    def changed(self) -> bool:
        return self.applied > 0

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["changed"] = self.changed
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "MendRecord":
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


# --------------------------------------------------------------------------- scope


def check_scope(scope: Sequence[str] | str) -> list[str]:
    """Normalise scope entries ("a,b" or a list); ValueError with a clear message for entries
    that may not be mended (torch, graphmend, the standard library) or are not module names."""
    items = scope.split(",") if isinstance(scope, str) else list(scope)
    out: list[str] = []
    for raw in items:
        s = str(raw).strip()
        if not s:
            continue
        if not all(p.isidentifier() for p in s.split(".")):
            raise ValueError(f"scope entry {s!r} is not a module name (use dotted names: pkg or pkg.sub)")
        top = s.split(".", 1)[0]
        if top == "torch":
            raise ValueError(f"refusing to mend {s!r}: torch itself is never mended "
                             "(mend the code that calls it: --scope yourpkg, transformers, ...)")
        if top == "graphmend":
            raise ValueError(f"refusing to mend {s!r}: graphmend never mends itself")
        if top in getattr(sys, "stdlib_module_names", ()) or top == "__main__":
            raise ValueError(f"refusing to mend {s!r}: the standard library is never mended")
        if s not in out:
            out.append(s)
    if not out:
        raise ValueError("the scope is empty: name the packages to mend (e.g. --scope transformers)")
    return out


def in_scope(name: str, scope: Sequence[str]) -> bool:
    top = name.split(".", 1)[0]
    if top in NEVER:
        return False
    return any(name == e or name.startswith(e + ".") for e in scope)


# --------------------------------------------------------------------------- fingerprints


def engine_fingerprint() -> str:
    """graphmend.fingerprint's, with this hook's own source and cache format."""
    from graphmend.fingerprint import engine_fingerprint as fingerprint
    return fingerprint(f"cache {CACHE_FORMAT}", (__file__,))


def settings_fingerprint(settings) -> str:
    return json.dumps({"scope": settings.scope, "select": list(settings.select),
                       "ignore": list(settings.ignore)}, sort_keys=True)


def _sha(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


def _text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _stat_sig(path: Optional[str]):
    if not path:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def default_cache_dir() -> str:
    env = os.environ.get(ENV_CACHE_DEFAULT)
    if env:  # shared with `graphmend check`'s cache: keep to a subdirectory
        return os.path.join(env, "importhook")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "graphmend", "importhook")


class _Cache:
    """JSON files under cache_dir/v{CACHE_FORMAT}/{kind}/{key[:2]}/{key}.json, written atomically."""

    def __init__(self, root: Optional[str]):
        self.root = Path(root) / f"v{CACHE_FORMAT}" if root else None
        self.errors = 0

    def _path(self, kind: str, key: str) -> Optional[Path]:
        return self.root / kind / key[:2] / f"{key}.json" if self.root is not None else None

    def get(self, kind: str, key: str) -> Optional[dict]:
        p = self._path(kind, key)
        if p is None:
            return None
        try:
            return json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def get_bytes(self, kind: str, key: str) -> Optional[bytes]:
        p = self._path(kind, key)
        if p is None:
            return None
        try:
            return p.with_suffix(".bin").read_bytes()
        except OSError:
            return None

    def put(self, kind: str, key: str, value) -> None:
        """`value`: a JSON-able dict, or bytes (stored as key.bin)."""
        p = self._path(kind, key)
        if p is None:
            return
        raw = isinstance(value, bytes)
        if raw:
            p = p.with_suffix(".bin")
        import tempfile
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=str(p.parent))
            try:
                with os.fdopen(fd, "wb" if raw else "w", **({} if raw else {"encoding": "utf-8"})) as f:
                    if raw:
                        f.write(value)
                    else:
                        json.dump(value, f)
                os.replace(tmp, p)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except OSError:
            self.errors += 1  # a cache that cannot be written only costs time


# --------------------------------------------------------------------------- line mapping


def _helper_range(lines: list[str]) -> Optional[tuple[int, int]]:
    """0-based [start, end] of an inline runtime block in `lines` (begin marker .. end marker)."""
    from graphmend.rewrite import runtime
    return runtime.inline_range(lines)


def line_map(original: str, mended: str) -> tuple[list[int], list[bool], int]:
    """For each line of `mended` (index 1..n; index 0 unused): the original line it comes from
    and whether it is an unchanged copy of that line. Lines of an inline runtime block that the
    mend added are numbered after the original's last line. Returns (map, exact, original line count)."""
    import difflib

    from graphmend.textlines import split_lines
    a = split_lines(original)
    b = split_lines(mended)
    n = len(a)
    lmap = [1] * (len(b) + 1)
    exact = [False] * (len(b) + 1)
    keep = list(range(len(b)))  # indices of b aligned against a
    hr = None if _helper_range(a) is not None else _helper_range(b)
    if hr is not None:
        s, e = hr
        if s > 0 and not b[s - 1].strip():
            s -= 1  # the blank line the insertion adds before the block
        for k, i in enumerate(range(s, e + 1)):
            lmap[i + 1] = n + 1 + k
            exact[i + 1] = True  # numbered on its own; its columns are its own
        keep = [i for i in keep if not s <= i <= e]
    bk = [b[i] for i in keep]
    sm = difflib.SequenceMatcher(None, a, bk, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        for j in range(j1, j2):
            if tag == "equal":
                orig, ok = i1 + (j - j1) + 1, True
            elif i2 > i1:  # replaced: spread over the original statement's lines
                orig, ok = i1 + min(j - j1, i2 - i1 - 1) + 1, False
            else:  # inserted: the line before (or the first line)
                orig, ok = max(i1, 1), False
            lmap[keep[j] + 1] = orig
            exact[keep[j] + 1] = ok
    return lmap, exact, n


def compile_mapped(original: str, mended: str, path: str) -> types.CodeType:
    """Compile `mended` under the original `path` with its positions mapped to `original`'s lines."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # escape-sequence warnings: the normal import shows none from a .pyc
        tree = ast.parse(mended, filename=path)
    lmap, exact, n = line_map(original, mended)
    from graphmend.textlines import split_lines
    orig_lines = split_lines(original)
    widths = [0] + [len(s.encode("utf-8", "surrogatepass")) for s in orig_lines]
    top = len(lmap) - 1
    for node in ast.walk(tree):
        ln = getattr(node, "lineno", None)
        if ln is None:
            continue
        end = getattr(node, "end_lineno", None) or ln
        ln, end = min(max(ln, 1), top), min(max(end, 1), top)
        a, b = lmap[ln], lmap[end]
        if b < a:
            b = a
        node.lineno, node.end_lineno = a, b
        if not (exact[ln] and exact[end]):
            node.col_offset = 0
            node.end_col_offset = widths[b] if b <= n else 0
        elif a == b and (node.end_col_offset or 0) < (node.col_offset or 0):
            node.end_col_offset = node.col_offset
    with warnings.catch_warnings():
        # the compiler's own warnings (`"is" with a literal`, higher's `len(v) is 1`): the normal
        # import shows none from a .pyc either
        warnings.simplefilter("ignore")
        return compile(tree, path, "exec", dont_inherit=True)


# --------------------------------------------------------------------------- summaries


@dataclass
class _Summary:
    """What the hook keeps of one module's analysis (JSON-able, cached)."""

    scope: object  # analysis.scope.FileScope, or None (does not parse)
    findings: dict  # qualname -> [[code, applicability, line], ...]
    supp: dict  # line -> list of codes, or None (all)
    deps: dict  # module -> [path, [size, mtime_ns]] read to resolve names

    def to_json(self) -> dict:
        s = self.scope
        scope = None if s is None else {
            "module": s.module, "entries": s.entries, "defined": sorted(s.defined),
            "disabled": sorted(s.disabled), "edges": {q: sorted(e) for q, e in s.edges.items()},
            "classes": {c: list(b) for c, b in s.classes.items()}}
        return {"scope": scope, "findings": self.findings,
                "supp": {str(k): v for k, v in self.supp.items()}, "deps": self.deps}

    @classmethod
    def from_json(cls, d: dict) -> "_Summary":
        from graphmend.analysis.scope import FileScope
        s = d.get("scope")
        scope = None if s is None else FileScope(
            s["module"], dict(s["entries"]), {q: set(e) for q, e in s["edges"].items()},
            set(s["defined"]), set(s["disabled"]), {c: tuple(b) for c, b in s.get("classes", {}).items()})
        return cls(scope, d["findings"], {int(k): v for k, v in d["supp"].items()}, d["deps"])


def _own_reach(scope) -> set[str]:
    from graphmend.analysis.scope import reach
    return set(reach([scope]).get(scope.module, {})) if scope is not None else set()


def _entry_label(q: str, why: str) -> str:
    # as analysis.scope.reach labels them
    return why[4:] if why.startswith("via ") else (f"{q} ({why})" if why != "nn.Module.forward" else q)


@dataclass
class _Mod:
    """A module the finder loaded (or is loading)."""

    name: str
    path: str
    sha: str
    summary: _Summary
    own: set[str]
    record: MendRecord
    external: frozenset = frozenset()  # the functions reached from elsewhere it was mended with
    text: Optional[str] = None  # the text its code came from, when mended (None: the original)
    live_text: Optional[str] = None  # the text the code of its live functions comes from
    late_fixes: tuple = (0, [])  # (fixes, codes) of `text` when a late mend produced it
    ns: Optional[dict] = None  # its globals, once executed
    executing: bool = False
    pending: bool = False  # a late mend waits for its body to end


# --------------------------------------------------------------------------- the finder


class MendingLoader(importlib.machinery.SourceFileLoader):
    """SourceFileLoader that mends the source before compiling it and never writes bytecode."""

    def __init__(self, fullname: str, path: str, finder: "MendingFinder"):
        super().__init__(fullname, path)
        self._finder = finder

    def get_code(self, fullname):
        try:
            code = self._finder._code_for(self, fullname)
        except Exception as e:  # never break the import
            self._finder._failed(fullname, self.path, f"internal error: {type(e).__name__}: {e}")
            code = None
        if code is None:
            return super().get_code(fullname)  # unchanged (a valid .pyc may be read; none is written)
        return code

    def set_data(self, path, data, *, _mode=0o666):
        return None  # no bytecode next to the user's code

    def exec_module(self, module):
        self._finder._begin_exec(module.__name__)
        try:
            super().exec_module(module)
        finally:
            self._finder._end_exec(module.__name__, module)


class MendingFinder(importlib.abc.MetaPathFinder):
    """Meta path finder that hands the modules under `scope` to a MendingLoader."""

    def __init__(self, scope: Sequence[str], *, unsafe: bool = False, cache_dir: Optional[str] = None,
                 settings=None, report: Optional[Callable[[MendRecord], None]] = None,
                 use_cache: bool = True):
        self.scope = check_scope(scope)
        self.unsafe = bool(unsafe)
        self._settings = settings
        self.report = report
        self.cache_dir = (cache_dir or default_cache_dir()) if use_cache else None
        self._cache = _Cache(self.cache_dir)
        self.records: list[MendRecord] = []
        self.already_imported: list[str] = []
        self._mods: dict[str, _Mod] = {}
        self._lock = threading.RLock()
        self._busy = threading.local()
        self._ws = None
        self._ws_path: tuple = ()
        # the incremental reach: module -> {qualname: entry label}; work waiting for a module
        self._scopes: dict[str, object] = {}
        self._reached: dict[str, dict[str, str]] = {}
        self._waiting: dict[str, dict[str, str]] = {}

    # ------------------------------------------------------------------ importlib protocol

    def find_spec(self, fullname, path=None, target=None):
        if not in_scope(fullname, self.scope) or getattr(self._busy, "on", False):
            return None
        self._busy.on = True
        try:
            spec = None
            for finder in list(sys.meta_path):
                if finder is self or isinstance(finder, MendingFinder):
                    continue
                fs = getattr(finder, "find_spec", None)
                if fs is None:
                    continue
                spec = fs(fullname, path, target)
                if spec is not None:
                    break
        finally:
            self._busy.on = False
        if spec is None:
            return None
        loader = spec.loader
        if (type(loader) is importlib.machinery.SourceFileLoader and spec.origin
                and str(spec.origin).endswith(".py")):
            spec.loader = MendingLoader(loader.name, loader.path, self)
        return spec

    def invalidate_caches(self):
        pass

    # ------------------------------------------------------------------ settings, workspace

    @property
    def settings(self):
        if self._settings is None:
            from graphmend.config import Settings
            self._settings = Settings()
        return self._settings

    @property
    def effective_unsafe(self) -> bool:
        return self.unsafe or bool(self.settings.unsafe_fixes)

    def _workspace(self):
        path = tuple(sys.path)
        if self._ws is None or path != self._ws_path:
            self._ws = _make_tracking_workspace()
            self._ws_path = path
        return self._ws

    # ------------------------------------------------------------------ records

    def _emit(self, rec: MendRecord) -> None:
        if self.report is not None:
            try:
                self.report(rec)
            except Exception:
                pass

    def _failed(self, fullname: str, path: str, why: str) -> None:
        with self._lock:
            m = self._mods.get(fullname)
            rec = m.record if m is not None else None
            if rec is None:
                rec = MendRecord(fullname, path)
                self.records.append(rec)
            rec.error = why
            rec.applied, rec.codes = 0, []
        self._emit(rec)

    # ------------------------------------------------------------------ the work

    def _code_for(self, loader: MendingLoader, fullname: str) -> Optional[types.CodeType]:
        """The mended code of a module, or None to load it unchanged."""
        t0 = time.perf_counter()
        path = loader.path
        data = loader.get_data(path)
        with self._lock:
            rec = MendRecord(fullname, path)
            self.records.append(rec)
            touched: set[str] = set()
            try:
                code, touched = self._mend_module(fullname, path, data, rec)
            except Exception as e:  # a bug here must not break the import: load it unchanged
                rec.error = f"internal error: {type(e).__name__}: {e}"
                rec.applied, rec.codes, rec.text_sha256 = 0, [], None
                code = None
            finally:
                rec.seconds = round(rec.seconds + time.perf_counter() - t0, 4)
            # functions of modules loaded earlier that this module's entries reach: mend them
            # now, before this module's body runs (its decorators see the mended code)
            for other in sorted(touched - {fullname}):
                try:
                    self._late_mend(other)
                except Exception as e:
                    om = self._mods.get(other)
                    if om is not None:
                        om.record.late_missed.append(f"internal error: {type(e).__name__}: {e}")
        self._emit(rec)
        return code

    def _mend_module(self, fullname: str, path: str, data: bytes, rec: MendRecord):
        try:
            text = importlib.util.decode_source(data)
        except Exception as e:
            rec.error = f"cannot decode the source: {e}"
            return None, set()
        sha = hashlib.sha256(data).hexdigest()
        summary, s_cached = self._summary(fullname, path, text, sha)
        own = _own_reach(summary.scope)
        mod = _Mod(fullname, path, sha, summary, own, rec)
        self._mods[fullname] = mod
        touched = self._add_scope(fullname, summary.scope) if summary.scope is not None else set()
        rec.cached = s_cached
        code = None
        reached = self._reached.get(fullname, {})
        external = {q: l for q, l in reached.items() if q not in own}
        mod.external = frozenset(external)
        if summary.scope is not None and self._has_candidates(summary, reached):
            try:
                new, applied, codes, m_cached = self._mend_text(mod, text, external)
            except Exception as e:
                rec.error = f"mending failed: {type(e).__name__}: {e}"
                new = None
            else:
                rec.cached = rec.cached and m_cached
            if new is not None and new != text:
                try:
                    code = self._compile(text, new, path)
                except (SyntaxError, ValueError) as e:
                    rec.error = f"the mended code does not compile ({e}); loaded unchanged"
                    code = None
                else:
                    mod.text = mod.live_text = new
                    rec.applied, rec.codes = applied, codes
                    rec.text_sha256 = _text_sha(new)
        return code, touched

    def _summary(self, fullname: str, path: str, text: str, sha: str) -> tuple[_Summary, bool]:
        settings = self.settings
        key = _sha("summary", engine_fingerprint(), settings_fingerprint(settings), fullname,
                   path.endswith("__init__.py"), sha)
        hit = self._cache.get("summary", key)
        if hit is not None:
            try:
                s = _Summary.from_json(hit)
                if all(_stat_sig(p) == sig for p, sig in s.deps.values()):
                    return s, True
            except Exception:
                pass
        from graphmend.analysis.engine import summarize
        ws = self._workspace()
        ws.track = set()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fsum = summarize(text, path, settings, ws, module=fullname)
            deps = {}
            for m in sorted(ws.track - {fullname}):
                f = ws.module_file(m)
                if f:
                    deps[m] = [f, _stat_sig(f)]
        finally:
            ws.track = None
        findings = {q: [[f.code, getattr(f.applicability, "value", str(f.applicability)), f.span.start.line]
                        for f in fs] for q, fs in fsum.by_function.items()}
        supp = {k: (None if v is None else sorted(v)) for k, v in fsum.suppressions.items()}
        s = _Summary(fsum.scope if fsum.syntax_error is None else None, findings, supp, deps)
        self._cache.put("summary", key, s.to_json())
        return s, False

    def _compile(self, original: str, text: Optional[str], path: str) -> types.CodeType:
        """The code of `text` (None: `original`) compiled as `path` with lines mapped to
        `original`; marshalled in the cache (keyed by the bytecode magic, path and both texts)."""
        key = _sha("code", engine_fingerprint(), importlib.util.MAGIC_NUMBER, sys.flags.optimize, path,
                   hashlib.sha256(original.encode("utf-8", "surrogatepass")).hexdigest(),
                   "-" if text is None else hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest())
        raw = self._cache.get_bytes("code", key)
        if raw is not None:
            try:
                code = marshal.loads(raw)
                if isinstance(code, types.CodeType) and code.co_filename == path:
                    return code
            except (ValueError, EOFError, TypeError):
                pass
        code = _compile_plain(original, path) if text is None else compile_mapped(original, text, path)
        try:
            self._cache.put("code", key, marshal.dumps(code))
        except ValueError:
            pass
        return code

    def _has_candidates(self, summary: _Summary, reached) -> bool:
        settings, unsafe = self.settings, self.effective_unsafe
        for q in reached:
            for code, app, line in summary.findings.get(q, ()):
                if not settings.enabled(code):
                    continue
                sup = summary.supp.get(line, False)
                if sup is None or (sup and code in sup):
                    continue
                if app == "safe" or (app == "unsafe" and unsafe):
                    return True
        return False

    def _mend_text(self, mod: _Mod, text: str, external: dict) -> tuple[Optional[str], int, list, bool]:
        """(mended text or None when unchanged, fixes applied, their codes, from the cache)."""
        settings = self.settings
        deps = _sha(json.dumps(mod.summary.deps, sort_keys=True))
        key = _sha("mend", engine_fingerprint(), settings_fingerprint(settings), settings.line_length,
                   self.effective_unsafe,
                   mod.name, mod.path.endswith("__init__.py"), mod.sha, "\n".join(sorted(external)), deps)
        hit = self._cache.get("mend", key)
        if hit is not None and ("text" in hit or hit.get("unchanged")):
            if hit.get("unchanged"):
                return None, 0, [], True
            return hit["text"], int(hit.get("applied", 0)), list(hit.get("codes", [])), True
        from graphmend.rewrite import apply
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = apply.fix_source(text, mod.path, settings, unsafe=self.effective_unsafe,
                                   workspace=self._workspace(), external=external, runtime="import")
        if res.text == text or not res.applied:
            self._cache.put("mend", key, {"unchanged": True})
            return None, 0, [], False
        from graphmend.analysis import astwalk
        try:
            astwalk.parse(res.text)  # the read code's compile-time warnings are not the user's
        except SyntaxError as e:
            raise ValueError(f"the mended text does not parse: {e.msg} (line {e.lineno})") from None
        codes = [f.code for f in res.applied]
        self._cache.put("mend", key, {"text": res.text, "applied": len(res.applied), "codes": codes})
        return res.text, len(res.applied), codes, False

    # ------------------------------------------------------------------ cross-file scope

    def _add_scope(self, name: str, scope) -> set[str]:
        """Add a module's scope to the closure; returns the modules with newly reached functions."""
        self._scopes[name] = scope
        self._reached.setdefault(name, {})
        work = [(name, q, _entry_label(q, why)) for q, why in scope.entries.items()]
        work += [(name, q, l) for q, l in self._waiting.pop(name, {}).items()]
        touched: set[str] = set()
        while work:
            mod, q, label = work.pop()
            fs = self._scopes.get(mod)
            if fs is None:
                if in_scope(mod, self.scope):
                    self._waiting.setdefault(mod, {}).setdefault(q, label)
                continue
            r = self._reached[mod]
            if q not in fs.defined or q in fs.disabled or q in r:
                continue
            r[q] = label
            touched.add(mod)
            for t in fs.edges.get(q, ()):
                m, _, tq = t.partition(":")
                work.append((m or mod, tq, label))
        return touched

    def _late_mend(self, name: str) -> None:
        """Mend an already-loaded module again with what now reaches it, and patch its functions."""
        m = self._mods.get(name)
        if m is None or m.summary.scope is None or m.record.error:
            return
        reached = self._reached.get(name, {})
        external = {q: l for q, l in reached.items() if q not in m.own}
        fresh = [q for q in external if q not in m.external]
        if not fresh:
            return
        if not self._has_candidates(m.summary, fresh):
            m.external = frozenset(external)  # nothing to mend in what now reaches it
            return
        t0 = time.perf_counter()
        try:
            data = Path(m.path).read_bytes()
            if hashlib.sha256(data).hexdigest() != m.sha:
                m.record.late_missed.append("the file changed since it was imported")
                return
            text = importlib.util.decode_source(data)
            new, applied, codes, cached = self._mend_text(m, text, external)
            m.external = frozenset(external)
            if new is None or new == (m.text or text):
                return
            m.record.cached = m.record.cached and cached
            m.text = new
            m.late_fixes = (applied, codes)
            if m.executing or m.ns is None:
                m.pending = True  # patched when its body ends
                return
            self._patch(m, text)
        except Exception as e:
            m.record.late_missed.append(f"late mend failed: {type(e).__name__}: {e}")
        finally:
            m.record.seconds = round(m.record.seconds + time.perf_counter() - t0, 4)

    def _patch(self, m: _Mod, original: str) -> None:
        """Give the live functions of `m` the code of `m.text` (they run `m.live_text`'s)."""
        ns = m.ns
        prev_code = self._compile(original, m.live_text, m.path)
        new_code = self._compile(original, m.text, m.path)
        old = _function_codes(prev_code)
        new = _function_codes(new_code)
        targets = [q for q, c in new.items() if "<locals>" not in q and q in old and old[q] != c]
        added = [q for q in new if q not in old and "<locals>" not in q
                 and not q.startswith(("_graphmend_", "_gm_"))]
        m.record.late_missed += [f"{q} (new function)" for q in added if q not in m.record.late_missed]
        if targets and "graphmend" not in ns:
            _bind_runtime(m.text, m.path, ns)
        for q in targets:
            why = _patch_function(ns, q, new[q], m.path)
            if why is None:
                if q not in m.record.late:
                    m.record.late.append(q)
            else:
                m.record.late_missed.append(f"{q}: {why}")
        m.live_text = m.text
        applied, codes = m.late_fixes
        m.record.applied, m.record.codes = applied, codes
        m.record.text_sha256 = _text_sha(m.text)

    def _begin_exec(self, name: str) -> None:
        with self._lock:
            m = self._mods.get(name)
            if m is not None:
                m.executing = True

    def _end_exec(self, name: str, module) -> None:
        with self._lock:
            m = self._mods.get(name)
            if m is None:
                return
            m.executing = False
            m.ns = module.__dict__
            if m.pending:
                m.pending = False
                t0 = time.perf_counter()
                try:
                    text = importlib.util.decode_source(Path(m.path).read_bytes())
                    self._patch(m, text)
                except Exception as e:
                    m.record.late_missed.append(f"patch failed: {type(e).__name__}: {e}")
                finally:
                    m.record.seconds = round(m.record.seconds + time.perf_counter() - t0, 4)


def _compile_plain(text: str, path: str) -> types.CodeType:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile(text, path, "exec", dont_inherit=True)


def _function_codes(code: types.CodeType) -> dict[str, types.CodeType]:
    """qualname -> code object of every function in a module's code."""
    out: dict[str, types.CodeType] = {}
    stack = [code]
    while stack:
        c = stack.pop()
        for k in c.co_consts:
            if isinstance(k, types.CodeType):
                q = getattr(k, "co_qualname", k.co_name)
                if k.co_flags & 0x2:  # CO_NEWLOCALS: a function (class bodies are walked through)
                    out.setdefault(q, k)
                stack.append(k)
    return out


def _bind_runtime(text: str, path: str, ns: dict) -> None:
    """Bind `graphmend` (the runtime) in a module's namespace: the installed module, or a mended
    text's inline block (numbered past the file's end)."""
    from graphmend.rewrite import runtime
    from graphmend.textlines import split_lines
    if runtime.IMPORT_LINE in text:
        import graphmend.runtime as rt
        ns["graphmend"] = rt
        return
    lines = split_lines(text, keepends=True)
    hr = _helper_range([s.rstrip("\r\n") for s in lines])
    if hr is None:
        return
    block = "".join(lines[hr[0]:hr[1] + 1])
    tree = ast.parse(block, filename=path)
    try:
        n = len(split_lines(Path(path).read_text(encoding="utf-8", errors="replace")))
    except OSError:
        n = 0
    ast.increment_lineno(tree, n + 1)  # as compile_mapped numbers it (after a blank line)
    exec(compile(tree, path, "exec", dont_inherit=True), ns)


def _candidates(obj):
    """Functions an attribute value may hold (through the usual wrappers)."""
    seen = set()
    todo = [obj]
    while todo:
        o = todo.pop()
        if o is None or id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, types.FunctionType):
            yield o
        if isinstance(o, (staticmethod, classmethod)):
            todo.append(o.__func__)
        elif isinstance(o, property):
            todo += [o.fget, o.fset, o.fdel]
        elif isinstance(o, types.MethodType):
            todo.append(o.__func__)
        w = getattr(o, "__wrapped__", None) if not isinstance(o, type) else None
        if w is not None:
            todo.append(w)
        if isinstance(o, types.FunctionType) and o.__closure__:
            for cell in o.__closure__:  # decorators without functools.wraps keep it in a cell
                try:
                    v = cell.cell_contents
                except ValueError:
                    continue
                if isinstance(v, types.FunctionType):
                    todo.append(v)


def _patch_function(ns: dict, qualname: str, new: types.CodeType, path: str) -> Optional[str]:
    """Replace the code of the live function `qualname` of a module; None, or why not."""
    parts = qualname.split(".")
    owner = ns
    for p in parts[:-1]:
        nxt = owner.get(p) if isinstance(owner, dict) else vars(owner).get(p)
        if not isinstance(nxt, type):
            return "its class is not reachable from the module's namespace"
        owner = nxt
    val = owner.get(parts[-1]) if isinstance(owner, dict) else vars(owner).get(parts[-1])
    if val is None:
        return "not found in the module's namespace"
    done = False
    for f in _candidates(val):
        c = f.__code__
        if getattr(c, "co_qualname", c.co_name) != qualname or c.co_filename != path:
            continue
        if c is new:
            done = True
            continue
        if c.co_freevars != new.co_freevars:
            return "its closure variables changed"
        f.__code__ = new
        done = True
    return None if done else "no live function with this code"


# --------------------------------------------------------------------------- workspace


def _make_tracking_workspace():
    """A Workspace that records the modules it reads while one module is summarised."""
    from graphmend.analysis.workspace import Workspace

    class TrackingWorkspace(Workspace):
        def __init__(self):
            super().__init__()
            self.track: Optional[set] = None
            self._memo: dict[str, frozenset] = {}

        def symbols(self, modname):
            if self.track is not None:
                self.track.add(modname)
            return super().symbols(modname)

        def is_module_class(self, dotted, depth=0):
            if self.track is None:
                return super().is_module_class(dotted, depth)
            memo = self._memo.get(dotted)
            if memo is not None:
                self.track |= memo
            outer, self.track = self.track, set()
            try:
                return super().is_module_class(dotted, depth)
            finally:
                inner, self.track = self.track, outer
                outer |= inner
                if memo is None:
                    self._memo[dotted] = frozenset(inner)

    return TrackingWorkspace()


# --------------------------------------------------------------------------- install


def install(scope: Sequence[str], *, unsafe: bool = False, cache_dir: Optional[str] = None,
            settings=None, report: Optional[Callable[[MendRecord], None]] = None,
            use_cache: bool = True) -> MendingFinder:
    """Mend the modules under `scope` as they are imported from now on (first on sys.meta_path).
    Raises ValueError for a scope naming torch, graphmend or the standard library."""
    finder = MendingFinder(scope, unsafe=unsafe, cache_dir=cache_dir, settings=settings,
                           report=report, use_cache=use_cache)
    finder.already_imported = sorted(n for n in list(sys.modules) if in_scope(n, finder.scope))
    sys.meta_path.insert(0, finder)
    return finder


def uninstall(finder: Optional[MendingFinder] = None) -> None:
    """Remove `finder` (or every MendingFinder) from sys.meta_path. Modules already mended stay so."""
    for f in list(sys.meta_path):
        if (finder is None and isinstance(f, MendingFinder)) or f is finder:
            sys.meta_path.remove(f)


# --------------------------------------------------------------------------- the child side


def _bootstrap() -> Optional[MendingFinder]:
    """Run by the sitecustomize of `graphmend run`: install the hook from the environment."""
    scope = os.environ.get(ENV_SCOPE, "")
    if not scope:
        return None
    settings = None
    raw = os.environ.get(ENV_SETTINGS)
    if raw:
        from graphmend.config import settings_from_dict
        settings, _ = settings_from_dict(json.loads(raw))
    finder = install(scope.split(","), unsafe=os.environ.get(ENV_UNSAFE) == "1",
                     cache_dir=os.environ.get(ENV_CACHE_DIR) or None, settings=settings,
                     use_cache=os.environ.get(ENV_NO_CACHE) != "1")
    out_dir = os.environ.get(ENV_REPORT_DIR)
    if out_dir:
        pid = os.getpid()

        def write():
            if os.getpid() != pid:
                return
            try:
                p = Path(out_dir) / f"records-{pid}.json"
                tmp = p.with_suffix(".tmp")
                tmp.write_text(json.dumps({"pid": pid, "argv": list(sys.argv),
                                           "already_imported": finder.already_imported,
                                           "records": [r.to_dict() for r in finder.records]}))
                os.replace(tmp, p)
            except Exception:
                pass

        atexit.register(write)
    return finder


SITECUSTOMIZE = '''\
# Written by `graphmend run`: install GraphMend's import hook, then chain to any other sitecustomize.
def _graphmend_run_hook():
    import os, sys
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        from graphmend.probe.importhook import _bootstrap
        _bootstrap()
    except Exception as e:
        sys.stderr.write(f"graphmend run: the import hook could not be installed: {type(e).__name__}: {e}\\n")
    import importlib.machinery, importlib.util
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is not None and spec.loader is not None:
        mod = importlib.util.module_from_spec(spec)
        sys.modules["sitecustomize"] = mod
        spec.loader.exec_module(mod)


_graphmend_run_hook()
del _graphmend_run_hook
'''


# --------------------------------------------------------------------------- graphmend run


def _parser():
    import argparse
    p = argparse.ArgumentParser(
        prog="graphmend run",
        description="Run COMMAND with the modules under --scope mended as they are imported "
                    "(nothing is written next to the code; mended code is cached).")
    p.add_argument("--scope", action="append", default=[],
                   help="packages or dotted module prefixes to mend, comma separated (repeatable); "
                        "e.g. transformers,mypkg.models")
    p.add_argument("--unsafe-fixes", action="store_true", help="apply unsafe fixes too")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    p.add_argument("--cache-dir", help=f"cache directory (default ${ENV_CACHE_DEFAULT}/importhook or "
                                       "~/.cache/graphmend/importhook)")
    p.add_argument("--report", help="write the records of every mended module to this JSON file")
    p.add_argument("--quiet", "-q", action="store_true", help="no summary line on stderr")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ARGS...")
    return p


def _child_env(args, scope: list[str], site_dir: str, lib_dir: str, report_dir: str, settings) -> dict:
    env = dict(os.environ)
    parts = [site_dir, lib_dir] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    env["PYTHONPATH"] = os.pathsep.join(parts)
    env[ENV_SCOPE] = ",".join(scope)
    env[ENV_UNSAFE] = "1" if args.unsafe_fixes else "0"
    env[ENV_REPORT_DIR] = report_dir
    env[ENV_SITE_DIR] = site_dir
    if args.no_cache:
        env[ENV_NO_CACHE] = "1"
    else:
        env.pop(ENV_NO_CACHE, None)
    if args.cache_dir:
        env[ENV_CACHE_DIR] = os.path.abspath(args.cache_dir)
    else:
        env.pop(ENV_CACHE_DIR, None)
    env[ENV_SETTINGS] = json.dumps({"scope": settings.scope, "select": settings.select,
                                    "ignore": settings.ignore, "unsafe-fixes": settings.unsafe_fixes})
    return env


def _link_package(lib_dir: str) -> None:
    import shutil
    dest = os.path.join(lib_dir, "graphmend")
    try:
        os.symlink(str(PACKAGE_DIR), dest, target_is_directory=True)
    except (OSError, NotImplementedError):
        shutil.copytree(str(PACKAGE_DIR), dest, ignore=shutil.ignore_patterns("__pycache__"))


def summary_line(records: list[MendRecord]) -> str:
    """"graphmend run: mended 12 modules (34 fixes), 3 from cache, 0 failed" (a module seen by
    several Python processes counts once: the record with the most fixes)."""
    by_mod: dict[str, MendRecord] = {}
    for r in records:
        cur = by_mod.get(r.module)
        if cur is None or (r.applied, bool(r.error)) > (cur.applied, bool(cur.error)):
            by_mod[r.module] = r
    recs = list(by_mod.values())
    mended = [r for r in recs if r.applied > 0]
    fixes = sum(r.applied for r in mended)
    cached = sum(1 for r in mended if r.cached)
    failed = sum(1 for r in recs if r.error)
    s = (f"graphmend run: mended {len(mended)} module{'s' if len(mended) != 1 else ''} "
         f"({fixes} fix{'es' if fixes != 1 else ''}), {cached} from cache, {failed} failed")
    late = sum(len(r.late) for r in recs)
    if late:
        s += f"; {late} function{'s' if late != 1 else ''} mended after import (cross-file scope)"
    missed = sum(len(r.late_missed) for r in recs)
    if missed:
        s += f"; {missed} late mend{'s' if missed != 1 else ''} not applied"
    pids = {r.pid for r in records}
    if len(pids) > 1:
        s += f" (in {len(pids)} Python processes)"
    return s


def main(argv: list[str]) -> int:
    import shlex
    import shutil
    import subprocess
    import tempfile

    args = _parser().parse_args(list(argv))
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        sys.stderr.write("graphmend run: no command given (graphmend run --scope PKG -- python script.py)\n")
        return 2
    if not args.scope:
        sys.stderr.write("graphmend run: --scope is required (the packages to mend, e.g. --scope transformers)\n")
        return 2
    try:
        scope = check_scope(",".join(args.scope))
    except ValueError as e:
        sys.stderr.write(f"graphmend run: {e}\n")
        return 2
    from graphmend.config import load_settings
    settings, errors = load_settings(".")
    for e in errors:
        sys.stderr.write(f"graphmend run: {e} (using the default)\n")
    tmp = tempfile.mkdtemp(prefix="graphmend-run-")
    try:
        site_dir = os.path.join(tmp, "site")
        lib_dir = os.path.join(tmp, "lib")
        report_dir = os.path.join(tmp, "records")
        for d in (site_dir, lib_dir, report_dir):
            os.mkdir(d)
        Path(site_dir, "sitecustomize.py").write_text(SITECUSTOMIZE)
        _link_package(lib_dir)
        env = _child_env(args, scope, site_dir, lib_dir, report_dir, settings)
        try:
            proc = subprocess.Popen(command, env=env)
        except OSError as e:
            sys.stderr.write(f"graphmend run: cannot run {shlex.join(command)}: {e.strerror or e}\n")
            return 127
        while True:
            try:
                rc = proc.wait()
                break
            except KeyboardInterrupt:  # the child got the signal too: wait for it to finish
                continue
        records: list[MendRecord] = []
        files = sorted(Path(report_dir).glob("records-*.json"))
        for p in files:
            try:
                d = json.loads(p.read_text())
            except (OSError, ValueError):
                continue
            records += [MendRecord.from_dict(r) for r in d.get("records", [])]
        if args.report:
            payload = {"scope": scope, "command": command, "returncode": rc,
                       "processes": len(files), "records": [r.to_dict() for r in records]}
            try:
                Path(args.report).write_text(json.dumps(payload, indent=1))
            except OSError as e:
                sys.stderr.write(f"graphmend run: cannot write {args.report}: {e.strerror or e}\n")
        if not args.quiet:
            if not files:
                sys.stderr.write("graphmend run: the hook did not run in the command (not a Python "
                                 "process, or python -S/-I, which ignore sitecustomize/PYTHONPATH)\n")
            else:
                sys.stderr.write(summary_line(records) + "\n")
        return rc if rc >= 0 else 128 - rc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


__all__ = ["install", "uninstall", "MendingFinder", "MendingLoader", "MendRecord", "main",
           "check_scope", "in_scope", "compile_mapped", "line_map", "summary_line"]
