"""Files in, findings out: discovery, reading, parallel analysis and fixing.

This is the layer between the command line (``graphmend.cli``) and the engine
(``graphmend.analysis`` / ``graphmend.rewrite``):

* ``discover`` turns PATH arguments into the list of Python files to check,
  honouring ``Settings.exclude`` / ``extend_exclude`` and skipping hidden
  directories; explicitly named files are always checked.
* ``read_source`` reads one file as UTF-8 (a BOM is accepted and remembered,
  line endings are normalised to ``\\n`` and the original style remembered so
  that a fixed file is written back the way it came).
* ``check_files`` / ``fix_files`` run the engine over many files, in a process
  pool when there is more than one file and more than one job. Workers are sent
  *paths* (in a few large chunks), read the files themselves and send back
  findings as plain tuples, so the per-file overhead stays small.

The engine functions are looked up at call time (``analysis.analyze_source``,
``rewrite.fix_source``) so tests can replace them; ``graphmend.rewrite``
is imported only when fixing.

Nothing here raises on a bad file: an unreadable, non-UTF-8 or otherwise broken
file becomes a result with ``error`` set, and the rest are still checked.
"""

from __future__ import annotations

import codecs
import concurrent.futures as cf
import contextlib
import dataclasses
import fnmatch
import gc
import hashlib
import multiprocessing
import os
import stat
import tempfile
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Sequence

from graphmend import analysis
from graphmend.analysis.astwalk import parse
from graphmend.analysis.callers import Seeded
from graphmend.config import Settings
from graphmend.findings import Applicability, Finding, Pos, Span, carry_over

PY_SUFFIXES = (".py", ".ipynb")  # notebooks: their code cells as one module (graphmend.notebook)

# A factory for the cross-file workspace handed to the engine (e.g.
# ``graphmend.analysis.workspace.Workspace``). It must be picklable (a class or a
# module-level function): in the parallel path it is called once in each worker
# process. It is given the root directories (see `roots_of`).
WorkspaceFactory = Callable[[Sequence[str]], Any]


# --------------------------------------------------------------------------- results


@dataclass
class FileResult:
    """One checked file: its findings, or why it could not be checked."""

    path: str  # as displayed (the argument joined with the discovered part)
    findings: list[Finding] = field(default_factory=list)
    suppressed: int = 0
    error: Optional[str] = None  # set when the file was not checked


@dataclass
class FileFix:
    """One file after `fix`: what was applied, what is left, and the new text."""

    path: str
    applied: list[Finding] = field(default_factory=list)
    skipped: list[tuple[Finding, str]] = field(default_factory=list)
    remaining: list[Finding] = field(default_factory=list)  # positions in the fixed text
    error: Optional[str] = None
    # Set only when the text changed and the new text parses:
    original: Optional[str] = None  # normalised ("\n") text as read
    fixed: Optional[str] = None  # normalised ("\n") text after fixing
    newline: str = "\n"
    bom: bool = False
    digest: Optional[str] = None  # sha1 of the bytes read, to detect a concurrent edit
    notebook: bool = False  # original/fixed are .ipynb JSON (the mended code cells in it)

    @property
    def changed(self) -> bool:
        return self.fixed is not None


class SourceError(Exception):
    """A file could not be read as Python source; the message says why."""


@dataclass
class Source:
    text: str  # BOM removed, line endings normalised to "\n"
    newline: str = "\n"  # the file's line ending ("\n", "\r\n" or "\r")
    bom: bool = False
    digest: str = ""
    # A .ipynb: `text` is its code cells as one module (graphmend.notebook.Notebook)
    notebook: Optional[Any] = None


# --------------------------------------------------------------------------- discovery


class Excluder:
    """Decides whether a discovered file or directory is excluded.

    A pattern without ``/`` is matched (glob, case-sensitive) against each path
    part below the PATH argument; a pattern with ``/`` is matched against the
    path relative to the project root (the directory of the pyproject.toml the
    settings came from, else the current directory).
    """

    _GLOB = set("*?[")

    def __init__(self, patterns: Iterable[str], root: Optional[str] = None):
        self.names: set[str] = set()
        self.name_globs: list[str] = []
        self.path_globs: list[str] = []
        for p in patterns:
            p = p.strip().replace("\\", "/")
            if p.startswith("./"):
                p = p[2:]
            p = p.rstrip("/")
            if not p:
                continue
            if "/" in p:
                self.path_globs.append(p)
                if p.startswith("**/"):
                    self.path_globs.append(p[3:])
            elif self._GLOB & set(p):
                self.name_globs.append(p)
            else:
                self.names.add(p)
        self.root = os.path.abspath(root or os.getcwd())

    def excluded(self, name: str, path: str) -> bool:
        if name in self.names:
            return True
        for g in self.name_globs:
            if fnmatch.fnmatchcase(name, g):
                return True
        if self.path_globs:
            rel = os.path.relpath(os.path.abspath(path), self.root).replace(os.sep, "/")
            for g in self.path_globs:
                if fnmatch.fnmatchcase(rel, g):
                    return True
        return False


def _excluder_for(settings: Settings) -> Excluder:
    root = os.path.dirname(settings.source) if settings.source else None
    return Excluder([*settings.exclude, *settings.extend_exclude], root)


VENDORED_RUNTIME = "_graphmend_runtime.py"  # graphmend's own copy (rewrite/runtime.py): not user code


def discover(paths: Sequence[str], settings: Settings,
             vendored: Optional[list] = None) -> tuple[list[str], list[FileResult]]:
    """The Python files under `paths`, in a stable order, and the paths that could not be read.

    Directories are walked recursively for ``*.py`` files; hidden directories
    and excluded names are skipped below each argument (an argument itself is
    never excluded, so ``graphmend check .venv/lib/.../transformers`` works).
    A file named explicitly is always checked, whatever its name. Vendored runtime copies
    (`_graphmend_runtime.py`) found in directories are not checked; `vendored` collects them.
    """
    excluder = _excluder_for(settings)
    files: list[str] = []
    errors: list[FileResult] = []
    seen: set[str] = set()

    def add(p: str) -> None:
        p = os.path.normpath(p)
        key = os.path.abspath(p)
        if key not in seen:
            seen.add(key)
            files.append(p)

    for arg in paths:
        arg = os.path.normpath(arg)
        try:
            st = os.stat(arg)
        except OSError as e:
            if os.path.islink(arg):
                errors.append(FileResult(arg, error=f"cannot read: broken symbolic link ({e.strerror})"))
            else:
                errors.append(FileResult(arg, error=f"cannot read: {e.strerror or e}"))
            continue
        if stat.S_ISDIR(st.st_mode):
            def add_walked(p: str) -> None:
                if os.path.basename(p) != VENDORED_RUNTIME:
                    add(p)
                elif vendored is not None:
                    vendored.append(p)
            _walk(arg, excluder, add_walked, errors)
        elif stat.S_ISREG(st.st_mode):
            add(arg)
        else:
            errors.append(FileResult(arg, error="cannot read: not a regular file"))
    return files, errors


def _walk(root: str, excluder: Excluder, add: Callable[[str], None], errors: list[FileResult]) -> None:
    """Depth-first, entries in name order (files and directories interleaved, like `ls -R`
    sorted by path parts)."""
    # The stack holds directories still to list and files found (as ("f", path)), so that a
    # directory's entries come out in name order with its subdirectories expanded in place.
    stack: list[tuple[str, str]] = [("d", root)]
    while stack:
        kind, d = stack.pop()
        if kind == "f":
            add(d)
            continue
        try:
            with os.scandir(d) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as e:
            errors.append(FileResult(os.path.normpath(d),
                                     error=f"cannot list directory: {e.strerror or e}"))
            continue
        found: list[tuple[str, str]] = []
        for e in entries:
            name = e.name
            try:
                is_dir = e.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if name.startswith(".") or excluder.excluded(name, e.path):
                    continue
                if e.is_symlink():
                    continue  # like os.walk: do not follow directory links (no cycles)
                found.append(("d", e.path))
            elif name.endswith(PY_SUFFIXES):
                if excluder.excluded(name, e.path):
                    continue
                try:
                    ok = e.is_file() or e.is_symlink()  # a broken link is reported when read
                except OSError:
                    ok = True
                if ok:
                    found.append(("f", e.path))
        stack.extend(reversed(found))


# --------------------------------------------------------------------------- reading and writing


def decode_source(data: bytes, digest: str = "") -> Source:
    bom = data.startswith(codecs.BOM_UTF8)
    if bom:
        data = data[len(codecs.BOM_UTF8):]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise SourceError(
            f"not valid UTF-8 (byte 0x{data[e.start]:02x} at line {line}, byte {col}); "
            "graphmend reads UTF-8 source only") from None
    text, newline = _normalize_newlines(text)
    return Source(text, newline, bom, digest)


def _normalize_newlines(text: str) -> tuple[str, str]:
    """(text with "\n" line endings, the original line ending: that of the first line)."""
    if "\r" not in text:
        return text, "\n"
    i = text.find("\n")
    j = text.find("\r")
    newline = "\n"
    if i == -1 or j < i:
        newline = "\r\n" if text.startswith("\r\n", j) else "\r"
    return text.replace("\r\n", "\n").replace("\r", "\n"), newline


def normalize_text(text: str, digest: str = "") -> Source:
    """A Source for text already decoded (a BOM character is dropped, line endings normalised)."""
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    text, newline = _normalize_newlines(text)
    return Source(text, newline, bom, digest)


def read_source(path: str, digest: bool = False) -> Source:
    """Read one file as UTF-8 Python source; raises SourceError with a clear message.

    With `digest`, Source.digest is the sha1 of the bytes (to notice a later edit)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except IsADirectoryError:
        raise SourceError("cannot read: is a directory") from None
    except OSError as e:
        if isinstance(e, FileNotFoundError) and os.path.islink(path):
            raise SourceError("cannot read: broken symbolic link") from None
        raise SourceError(f"cannot read: {e.strerror or e}") from None
    src = decode_source(data, hashlib.sha1(data).hexdigest() if digest else "")
    if _is_notebook(path):
        from graphmend.notebook import Notebook, NotebookError
        try:
            nb = Notebook(src.text)
        except NotebookError as e:
            raise SourceError(str(e)) from None
        return Source(nb.text, src.newline, src.bom, src.digest, notebook=nb)
    return src


def _is_notebook(path: str) -> bool:
    return path.lower().endswith(".ipynb")


def notebook_cells(path: str):
    """The cell layout of a notebook file as it is now (graphmend.notebook.Cells), or None."""
    if not _is_notebook(path):
        return None
    try:
        return read_source(path).notebook.cells
    except SourceError:
        return None


def in_cells(findings: list[Finding], cells) -> list[Finding]:
    """A notebook's findings with their cell and cell-local lines (unchanged for a .py file)."""
    if cells is None:
        return findings
    from graphmend.notebook import to_cells
    return to_cells(findings, cells)


def encode_source(text: str, newline: str = "\n", bom: bool = False) -> bytes:
    if newline != "\n":
        text = text.replace("\n", newline)
    data = text.encode("utf-8")
    return codecs.BOM_UTF8 + data if bom else data


def write_atomic(path: str, data: bytes) -> None:
    """Replace the file's contents atomically (temp file + os.replace), keeping its mode.

    A symbolic link is followed: the file it points to is replaced, the link kept.
    """
    target = os.path.realpath(path)
    st = os.stat(target)
    d, base = os.path.split(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".graphmend.tmp", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        if hasattr(os, "chown"):
            try:
                os.chown(tmp, st.st_uid, st.st_gid)
            except OSError:
                pass
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def parse_error(text: str, path: str = "<string>") -> Optional[str]:
    """None when `text` parses as Python, else a one-line description of why not."""
    try:
        parse(text, path)
    except SyntaxError as e:
        return f"{e.msg} (line {e.lineno})"
    except (ValueError, RecursionError, MemoryError) as e:
        return f"{type(e).__name__}: {e}"
    return None


# --------------------------------------------------------------------------- findings as plain data

_FINDING_FIELDS = [f.name for f in dataclasses.fields(Finding)]


def _enc_value(v):
    if isinstance(v, Span):
        return (v.start.line, v.start.col, v.end.line, v.end.col)
    if isinstance(v, Applicability):
        return v.value
    return v


def encode_finding(f: Finding) -> tuple:
    """Plain data, without the analysis' site: a site holds its function's ast and FunctionInfo
    (and through its class, the class' ast), which made the summaries sent back by the workers and
    the cache ~10x larger and slower to load; nothing after a scan builds fixes from them."""
    return tuple(None if n == "site" else _enc_value(getattr(f, n)) for n in _FINDING_FIELDS)


def _span(t) -> Span:
    return Span(Pos(t[0], t[1]), Pos(t[2], t[3]))


def decode_finding(t: tuple) -> Finding:
    kw = dict(zip(_FINDING_FIELDS, t))
    for n in ("span", "entry_span"):
        if isinstance(kw.get(n), tuple):
            kw[n] = _span(kw[n])
    if isinstance(kw.get("applicability"), str):
        kw["applicability"] = Applicability(kw["applicability"])
    return Finding(**kw)


def shown(code: str, settings: Settings) -> bool:
    """Whether a finding with `code` is reported under `settings`.

    A syntax error (GM001) is reported even when not selected (nothing else in
    the file could be checked), unless it is ignored explicitly.
    """
    if code == "GM001":
        return not any(code.startswith(s) for s in settings.ignore)
    return settings.enabled(code)


def _sort_key(f: Finding):
    return (f.span.start.line, f.span.start.col, f.code)


# --------------------------------------------------------------------------- workers

# Per-process state: set by the pool initializer in workers, and around the in-process run.
_STATE: dict = {}


def roots_of(paths: Sequence[str]) -> list[str]:
    """The workspace roots for PATH arguments: directories as given, a file's directory."""
    roots: list[str] = []
    for p in paths:
        d = os.path.abspath(p if os.path.isdir(p) else os.path.dirname(p) or ".")
        if d not in roots:
            roots.append(d)
    return roots


def import_roots(files: Sequence[str]) -> list[str]:
    """Where the checked files import from (`workspace.import_root` of each), searched before the
    interpreter's path, so `graphmend check src/pkg` resolves `from .misc import f` and
    `from pkg.x import C` in the files checked, installed or not."""
    from graphmend.analysis.workspace import import_root
    roots: list[str] = []
    seen: set[str] = set()
    for p in files:
        d = os.path.dirname(os.path.abspath(p))
        if d in seen:
            continue
        seen.add(d)
        root = import_root(p)
        if root not in roots:
            roots.append(root)
    return roots


# The engine allocates many small objects (ASTs, summaries) and frees most of them
# without cycles; fewer gen-0 collections save ~10% of the analysis time.
_GC_THRESHOLD = (50_000, 20, 100)


_IN_POOL = False  # this process is a pool worker (not the caller's process, running one job)


def _init_pool_worker(*args) -> None:
    global _IN_POOL
    _IN_POOL = True
    gc.freeze()  # what the worker inherited is never garbage: keep it out of collections
    gc.set_threshold(*_GC_THRESHOLD)
    _init_worker(*args)


def _init_worker(settings: Settings, unsafe: bool, factory: Optional[WorkspaceFactory],
                 roots: Sequence[str], extra: Optional[dict] = None) -> None:
    _STATE.clear()
    _STATE.update(settings=settings, unsafe=unsafe, workspace=None, **(extra or {}))
    if factory is not None:
        try:
            _STATE["workspace"] = factory(list(roots))
        except Exception as e:  # a broken workspace must not stop the run
            _STATE["workspace_error"] = f"{type(e).__name__}: {e}"


class _Failed:
    """A file whose worker output is missing (the worker died and redoing it raised)."""

    def __init__(self, error: str):
        self.error = error


def _internal_error(what: str, e: BaseException) -> str:
    return f"internal error while {what}: {type(e).__name__}: {e}"


def _check_one(path: str, wanted: Optional[frozenset[str]] = None) -> tuple:
    """-> (summary as plain data, error, (stat, dependencies) for the cache). Scope is decided
    later, across all files: the functions walked are those the file's own entries reach
    (`wanted`: these instead), and `summarize_files` walks the few that only entries in other
    files reach in a second pass. Most functions of a tree are reached from no entry (a model's
    configuration, tokenizer and conversion scripts: 75% of transformers' models/), and their
    walks were most of a check's time."""
    from graphmend.filestat import stat_of
    settings = _STATE["settings"]
    stat = stat_of(path)  # before reading: an edit while reading makes the entry stale, not wrong
    try:
        src = read_source(path, digest=True)
    except SourceError as e:
        return None, str(e), None
    ws = _STATE.get("workspace")
    if ws is None:  # one per worker, so module files read for base classes are parsed once
        from graphmend.analysis.workspace import Workspace
        ws = _STATE["workspace"] = Workspace(extra_paths=_STATE.get("import_roots"))
    ws.consulted = set()
    select = analysis.reached_in_file(dict.fromkeys(wanted or (), ""), {})
    try:
        summary = analysis.summarize(src.text, path, settings, workspace=ws, select=select)
    except RecursionError as e:
        return None, _internal_error("analyzing (the file nests too deeply)", e), None
    except Exception as e:
        return None, _internal_error("analyzing", e), None
    deps = [(d, stat_of(d)) for d in sorted(ws.consulted) if os.path.abspath(d) != os.path.abspath(path)]
    return encode_summary(summary), None, (stat, deps, src.digest)


def encode_summary(s) -> tuple:
    return (s.path, s.scope,
            {q: tuple(encode_finding(f) for f in fs) for q, fs in s.by_function.items()},
            encode_finding(s.syntax_error) if s.syntax_error else None, s.suppressions,
            tuple((x.caller, x.path, encode_finding(x.finding)) for x in s.seeded),
            None if s.walked is None else frozenset(s.walked))


def decode_summary(t: tuple):
    path, scope, by_function, syntax_error, suppressions, seeded, walked = t
    return analysis.FileSummary(
        path, scope, {q: [decode_finding(f) for f in fs] for q, fs in by_function.items()},
        decode_finding(syntax_error) if syntax_error else None, suppressions,
        seeded=[Seeded(caller, p, decode_finding(f)) for caller, p, f in seeded],
        walked=None if walked is None else set(walked))


def _check_chunk(chunk: Sequence[tuple[int, object]]) -> list[tuple]:
    """The files of one worker, with the cyclic GC off but for one young collection after each
    file: its tree and symbols (cyclic, so only the GC frees them) are traversed once, and what
    survives it (the workspace's parsed modules) is frozen out of every later collection. Left to
    the GC's own schedule, the older generations traversed those modules again and again: 4 of the
    6 s the GC took of a 32 s check of transformers' models/ (gc.callbacks, one process)."""
    was = gc.isenabled()
    gc.disable()
    try:
        out = []
        for i, p in chunk:  # a path, or (path, the functions to walk)
            out.append((i, *(_check_one(p) if isinstance(p, str) else _check_one(*p))))
            gc.collect(1)
            gc.freeze()
        return out
    finally:
        if not _IN_POOL:  # the caller's process (one job, the tests, a server): as it was
            gc.unfreeze()
        if was:
            gc.enable()


def _fix_one(path: str, external: Optional[dict] = None) -> dict:
    from graphmend import rewrite  # the rules' fix code is loaded only when fixing

    settings = _STATE["settings"]
    unsafe = _STATE["unsafe"]
    ws = _STATE.get("workspace")
    out: dict = {"applied": (), "skipped": (), "remaining": (), "error": None}
    try:
        src = read_source(path, digest=True)
    except SourceError as e:
        out["error"] = str(e)
        return out
    try:
        # a notebook carries the runtime inline, in its first code cell (a vendored copy beside
        # it would be a file the notebook's user never sees)
        mode = "inline" if src.notebook is not None and settings.runtime == "vendor" else None
        res = rewrite.fix_source(src.text, path, settings, unsafe=unsafe, workspace=ws, external=external,
                                 runtime=mode)
    except Exception as e:
        res = None
        out["error"] = _internal_error("fixing", e)
    new_text = src.text
    fixed_file = res.text if res is not None else None  # what is written: the .ipynb for a notebook
    if res is not None and res.text != src.text and src.notebook is not None:
        from graphmend.notebook import NotebookError
        try:
            fixed_file = src.notebook.fixed(res.text)
        except NotebookError as e:
            out["error"] = f"{e} (file left unchanged)"
            res = None
    if res is not None and res.text != src.text:
        why = parse_error(res.text, path)
        if why is not None:
            out["error"] = f"the fixed text does not parse ({why}); file left unchanged"
        else:
            new_text = res.text
            out.update(applied=tuple(encode_finding(f) for f in res.applied),
                       skipped=tuple((encode_finding(f), r) for f, r in res.skipped),
                       original=src.text, fixed=new_text, newline=src.newline, bom=src.bom,
                       digest=src.digest)
            if src.notebook is not None:
                out.update(original=src.notebook.raw, fixed=fixed_file, notebook=True)
    elif res is not None:
        out["skipped"] = tuple((encode_finding(f), r) for f, r in res.skipped)
    try:
        # fix_source already analysed its final text; analyse again only when that text was refused
        remaining = res.remaining if res is not None and new_text == res.text else \
            analysis.analyze_source(new_text, path, settings, workspace=ws, external=external).findings
        cells = src.notebook.cells if src.notebook is not None else None
        if cells is not None and new_text != src.text:
            # the cells as written (the helper block moved into the first code cell): analysed again
            from graphmend.notebook import Cells
            cells = Cells.build(cells.split(new_text), cells.numbers)
            remaining = analysis.analyze_source(cells.text, path, settings, workspace=ws,
                                                external=external).findings
        found = sorted((f for f in remaining if shown(f.code, settings)), key=_sort_key)
        if cells is not None:
            found = in_cells(found, cells)
            out["applied"] = tuple(encode_finding(f) for f in in_cells(
                [decode_finding(t) for t in out["applied"]], src.notebook.cells))
            out["skipped"] = tuple((encode_finding(f), r) for f, (_, r) in zip(in_cells(
                [decode_finding(t) for t, _ in out["skipped"]], src.notebook.cells), out["skipped"]))
        out["remaining"] = tuple(encode_finding(f) for f in found)
    except Exception as e:
        out["error"] = out["error"] or _internal_error("analyzing", e)
    return out


def _fix_chunk(chunk: Sequence[tuple[int, str]]) -> list[tuple]:
    external = _STATE.get("external") or {}
    return [(i, _fix_one(p, external.get(p))) for i, p in chunk]


# --------------------------------------------------------------------------- running many files


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _chunks(files: Sequence[str], jobs: int) -> list[list[tuple[int, str]]]:
    """Work for the workers, largest files first: the workers take chunks as they finish one, and
    the last chunks, of the smallest files, leave little for one worker to finish alone while the
    others wait (with 8 equal chunks per worker, that wait was up to a chunk's time, about 1.7 s
    of a check of transformers' models/)."""
    def size(p) -> int:
        try:
            return os.stat(p if isinstance(p, str) else p[0]).st_size
        except OSError:
            return 0
    order = sorted(range(len(files)), key=lambda i: -size(files[i]))
    n = max(1, min(len(files), jobs * 16))
    step = -(-len(files) // n)
    return [[(i, files[i]) for i in order[k:k + step]] for k in range(0, len(files), step)]


def _mp_context():
    methods = multiprocessing.get_all_start_methods()
    # fork is the cheapest start; only safe while this process runs a single thread.
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("spawn")


class _Pool:
    """Worker processes kept for the passes of one check (`with _Pool() as pool`, then `_run(...,
    pool=pool)`): the second pass's files go to workers that have already read the modules they
    import. Started by the first `_run` that needs several workers; every `_run` given the same
    pool must pass the same settings, workspace factory, roots and extra."""

    def __init__(self):
        self.executor: Optional[cf.ProcessPoolExecutor] = None
        self.jobs = 0

    def get(self, jobs: int, initargs: tuple) -> cf.ProcessPoolExecutor:
        if self.executor is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # fork-with-threads notice (3.12+)
                self.executor = cf.ProcessPoolExecutor(max_workers=jobs, mp_context=_mp_context(),
                                                       initializer=_init_pool_worker, initargs=initargs)
            self.jobs = jobs
        return self.executor

    def __enter__(self) -> "_Pool":
        return self

    def __exit__(self, *exc) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=True)
            self.executor = None


def _run(files: Sequence[str], worker_chunk, settings: Settings, unsafe: bool, jobs: Optional[int],
         workspace_factory: Optional[WorkspaceFactory], roots: Optional[Sequence[str]],
         extra: Optional[dict] = None, pool: Optional[_Pool] = None) -> list:
    """Run `worker_chunk` over `files`; returns the per-file outputs in file order. `pool`: the
    workers of an earlier pass, kept (see _Pool); none: workers for this run only."""
    if workspace_factory is not None and roots is None:
        roots = roots_of(files)
    roots = list(roots or [])
    if workspace_factory is None and "import_roots" not in (extra or {}):
        extra = {**(extra or {}), "import_roots": import_roots(files)}
    jobs = default_jobs() if not jobs or jobs < 1 else jobs
    if pool is not None and pool.executor is not None:
        jobs = pool.jobs  # its workers are up: a few files still go to them
    jobs = min(jobs, len(files))
    out: list = [None] * len(files)
    if jobs <= 1:
        saved = dict(_STATE)
        threshold = gc.get_threshold()
        try:
            if len(files) > 1:
                gc.set_threshold(*_GC_THRESHOLD)
            _init_worker(settings, unsafe, workspace_factory, roots, extra)
            for i, *rest in worker_chunk(list(enumerate(files))):
                out[i] = rest
        finally:
            gc.set_threshold(*threshold)
            _STATE.clear()
            _STATE.update(saved)
        return out
    chunks = _chunks(files, jobs)
    failed: list[list[tuple[int, str]]] = []
    with contextlib.ExitStack() as stack:
        if pool is None:
            pool = stack.enter_context(_Pool())
        try:
            ex = pool.get(jobs, (settings, unsafe, workspace_factory, roots, extra))
            futures = {ex.submit(worker_chunk, c): c for c in chunks}
        except (cf.BrokenExecutor, RuntimeError):  # a worker of an earlier pass died: redo them here
            futures = {}
            failed.extend(chunks)
        for fut in cf.as_completed(futures):
            try:
                for i, *rest in fut.result():
                    out[i] = rest
            except Exception:  # a worker died (or could not start): redo its files here
                failed.append(futures[fut])
    if failed:
        redo = [p for c in failed for p in c]
        saved = dict(_STATE)
        try:
            _init_worker(settings, unsafe, workspace_factory, roots, extra)
            for i, p in redo:
                try:
                    (_, *rest), = worker_chunk([(i, p)])
                except Exception as e:
                    out[i] = _Failed(_internal_error("checking", e))
                else:
                    out[i] = rest
        finally:
            _STATE.clear()
            _STATE.update(saved)
    return out


def summarize_files(files: Sequence[str], settings: Settings, jobs: Optional[int] = None,
                    workspace_factory: Optional[WorkspaceFactory] = None,
                    roots: Optional[Sequence[str]] = None, cache=None) -> list:
    """Per file: an analysis.FileSummary, or an error string. With a `cache.ScanCache`, files
    unchanged since it recorded them (and the module files they depend on) are not analysed."""
    return _summarize_files(files, settings, jobs, workspace_factory, roots, cache)[0]


def _summarize_files(files: Sequence[str], settings: Settings, jobs: Optional[int],
                     workspace_factory: Optional[WorkspaceFactory], roots: Optional[Sequence[str]],
                     cache) -> tuple[list, dict[str, dict[str, str]]]:
    """`summarize_files`, and `reach` over the summaries' scopes."""
    res: list = [None] * len(files)
    todo: list[int] = []
    for i, p in enumerate(files):
        hit = cache.get(p) if cache is not None else None  # a FileSummary, its findings read lazily
        if hit is not None:
            res[i] = hit
        else:
            todo.append(i)
    # one workspace for both passes: the roots and import roots of all the files
    if workspace_factory is not None and roots is None:
        roots = roots_of(files)
    extra = None if workspace_factory is not None else {"import_roots": import_roots(files)}
    with _Pool() as pool:  # the second pass goes to the same workers
        return _two_passes(res, todo, files, settings, jobs, workspace_factory, roots, extra, cache, pool)


def _two_passes(res: list, todo: list[int], files: Sequence[str], settings: Settings, jobs: Optional[int],
                workspace_factory: Optional[WorkspaceFactory], roots: Optional[Sequence[str]],
                extra: Optional[dict], cache, pool: _Pool) -> tuple[list, dict[str, dict[str, str]]]:
    _summarize_into(res, todo, [files[i] for i in todo], settings, jobs, workspace_factory, roots, extra, cache, pool)
    # what only entries in other files reach (a helper imported by another model's file): the
    # files of these functions are walked again, with them
    reached = analysis.reach([s.scope for s in res if not isinstance(s, str) and s.scope is not None])
    redo: list[int] = []
    wanted: list[tuple[str, frozenset[str]]] = []
    for i, s in enumerate(res):
        if isinstance(s, str) or s.scope is None or s.walked is None:
            continue
        missing = analysis.unwalked(s.scope, s.walked, reached)
        if missing:
            redo.append(i)
            wanted.append((files[i], frozenset(missing | s.walked)))
    if redo:  # the same texts, so the same scopes: `reached` stands
        _summarize_into(res, redo, wanted, settings, jobs, workspace_factory, roots, extra, cache, pool)
    return res, reached


def _summarize_into(res: list, where: list[int], work: list, settings: Settings, jobs: Optional[int],
                    workspace_factory: Optional[WorkspaceFactory], roots: Optional[Sequence[str]],
                    extra: Optional[dict], cache, pool: Optional[_Pool] = None) -> None:
    """Summarize `work` (paths, or (path, functions to walk)) into `res` at the indices `where`."""
    out = _run(work, _check_chunk, settings, False, jobs, workspace_factory, roots, extra, pool) if work else []
    for i, item, r in zip(where, work, out):
        if isinstance(r, _Failed):
            res[i] = r.error
            continue
        enc, error, meta = r
        if enc is None:
            res[i] = error
            continue
        res[i] = decode_summary(enc)
        if cache is not None and meta is not None:
            cache.put(item if isinstance(item, str) else item[0], meta[0], meta[1], enc, meta[2])


def check_files(files: Sequence[str], settings: Settings, jobs: Optional[int] = None,
                workspace_factory: Optional[WorkspaceFactory] = None,
                roots: Optional[Sequence[str]] = None, cache=None) -> list[FileResult]:
    """Analyze `files` (paths); one FileResult per file, in the same order. A function is in
    scope when an entry in any of the files reaches it."""
    summaries, reached = _summarize_files(files, settings, jobs, workspace_factory, roots, cache)
    ok = [s for s in summaries if not isinstance(s, str)]
    analyses = iter(analysis.analyze_many(ok, settings, reached))
    results: list[FileResult] = []
    for p, s in zip(files, summaries):
        if isinstance(s, str):
            results.append(FileResult(p, error=s))
            continue
        fa = next(analyses)
        found = sorted((f for f in fa.findings if shown(f.code, settings)), key=_sort_key)
        if _is_notebook(p):
            found = in_cells(found, notebook_cells(p))
        results.append(FileResult(p, found, fa.suppressed))
    return results


def reached_elsewhere(files: Sequence[str], settings: Settings, jobs: Optional[int] = None,
                      workspace_factory: Optional[WorkspaceFactory] = None,
                      roots: Optional[Sequence[str]] = None) -> tuple[list[dict], dict[str, list]]:
    """Per file: the functions in it that entries in the other files reach (qualname -> entry);
    and per path, what reached callers in the other files show of its functions ((finding, its
    line's suppression), callers.py: no fix, so `fix` reports them as remaining)."""
    summaries, reached = _summarize_files(files, settings, jobs, workspace_factory, roots, None)
    ok = [s for s in summaries if not isinstance(s, str)]
    sups = {os.path.abspath(s.path): s.suppressions for s in ok}
    foreign: dict[str, list] = {}
    for path, label, f in analysis.foreign_seeded(ok, reached):
        f.entry = label
        foreign.setdefault(os.path.abspath(path), []).append((f, sups[os.path.abspath(path)].get(f.span.start.line, False)))
    return [reached.get(s.scope.module, {}) if not isinstance(s, str) and s.scope else {}
            for s in summaries], foreign


def check_paths(paths: Sequence[str], settings: Settings, jobs: Optional[int] = None,
                workspace_factory: Optional[WorkspaceFactory] = None, cache=None) -> list[FileResult]:
    """Discover and analyze; the read errors of discovery come first."""
    files, errors = discover(paths, settings)
    return errors + check_files(files, settings, jobs, workspace_factory, roots_of(paths), cache)


def check_text(text: str, path: str, settings: Settings, workspace=None) -> FileResult:
    """Analyze text that did not come from a file (stdin, an editor buffer)."""
    src = normalize_text(text)
    try:
        fa = analysis.analyze_source(src.text, path, settings, workspace=workspace)
    except Exception as e:
        return FileResult(path, error=_internal_error("analyzing", e))
    found = sorted((f for f in fa.findings if shown(f.code, settings)), key=_sort_key)
    return FileResult(path, found, fa.suppressed)


def fix_files(files: Sequence[str], settings: Settings, unsafe: bool = False, jobs: Optional[int] = None,
              workspace_factory: Optional[WorkspaceFactory] = None,
              roots: Optional[Sequence[str]] = None) -> list[FileFix]:
    """Compute the fixes for `files` (nothing is written; see `write_fix`)."""
    try:  # load the fix code once here, so forked workers inherit it instead of each importing it
        from graphmend import rewrite  # noqa: F401
    except Exception:
        pass  # reported per file by the worker
    fixes: list[FileFix] = []
    # scope across the files: a helper in one file reached from a forward in another is mended
    reached, foreign = reached_elsewhere(files, settings, jobs, workspace_factory, roots) if len(files) > 1 \
        else ([], {})
    external = {p: r for p, r in zip(files, reached) if r}
    out = _run(files, _fix_chunk, settings, unsafe, jobs, workspace_factory, roots, {"external": external})
    for p, r in zip(files, out):
        if isinstance(r, _Failed):
            fixes.append(FileFix(p, error=r.error))
            continue
        d = r[0]
        fixes.append(FileFix(
            p,
            applied=[decode_finding(t) for t in d["applied"]],
            skipped=[(decode_finding(t), why) for t, why in d["skipped"]],
            remaining=[decode_finding(t) for t in d["remaining"]],
            error=d["error"],
            original=d.get("original"), fixed=d.get("fixed"),
            newline=d.get("newline", "\n"), bom=d.get("bom", False), digest=d.get("digest"),
            notebook=d.get("notebook", False)))
        _add_foreign(fixes[-1], foreign.get(os.path.abspath(p), ()), settings)
    return fixes


def _add_foreign(fix: FileFix, found, settings: Settings) -> None:
    """Add to `fix.remaining` what callers in the other files show (no fix: they remain), at
    their lines in the fixed text, unless disabled, suppressed, hidden or already there."""
    if not found or fix.error is not None or fix.notebook:
        return
    kept = [f for f, sup in found if settings.enabled(f.code) and shown(f.code, settings)
            and sup is not None and not (sup and f.code in sup)]
    if fix.changed:  # at their lines in the fixed text (dropped where the fix rewrote them)
        kept = carry_over(kept, fix.original, fix.fixed)
    have = {(f.code, f.span) for f in fix.remaining}
    for f in kept:
        if (f.code, f.span) not in have:
            have.add((f.code, f.span))
            fix.remaining.append(f)
    fix.remaining.sort(key=_sort_key)


def write_fix(fix: FileFix) -> Optional[str]:
    """Write a changed file back (atomically). Returns an error message, or None when written.

    The file is re-read first: if it changed since it was fixed, it is left alone.
    """
    if not fix.changed:
        return None
    why = None if fix.notebook else parse_error(fix.fixed, fix.path)  # a notebook's cells: checked in fix_files
    if why is not None:  # fix_files already checks; never write a file that does not parse
        return f"the fixed text does not parse ({why}); file left unchanged"
    try:
        with open(fix.path, "rb") as f:
            now = f.read()
    except OSError as e:
        return f"cannot read before writing: {e.strerror or e}"
    if fix.digest and hashlib.sha1(now).hexdigest() != fix.digest:
        return "the file changed while it was being fixed; left unchanged"
    try:
        write_atomic(fix.path, encode_source(fix.fixed, fix.newline, fix.bom))
    except OSError as e:
        return f"cannot write: {e.strerror or e}"
    return None


__all__ = [
    "FileResult", "FileFix", "Source", "SourceError", "Excluder", "discover", "read_source",
    "decode_source", "encode_source", "write_atomic", "parse_error", "check_files", "check_paths",
    "check_text", "fix_files", "write_fix", "default_jobs", "shown", "encode_finding", "roots_of",
    "decode_finding",
]
