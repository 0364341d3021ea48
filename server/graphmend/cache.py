"""The `graphmend check` cache: each file's summary (its scope and the findings of the functions
walked: those its own entries reach, and those entries in other files reached when it was
checked; before cross-file scope is decided), reused while the file and every module file its
analysis consulted (base classes resolved in other files) are unchanged. A file whose functions
are now reached from elsewhere beyond what was walked is analysed again (scan.summarize_files).

Nothing is read that a warm run does not use:
  * one index (a pickle, uncompressed) read at start-up: per file its stat data (size, mtime_ns,
    inode), the sha1 of its bytes, its dependencies' stat data, its scope (what `reach` joins
    across files), its syntax error and suppressions, the functions that have findings, and
    where its findings lie in the data file;
  * the findings of every function of a file, one compressed blob per file in an append-only data
    file, read and decoded only when a function of the file that has findings is in scope.
A file is valid when its stat data match, else when the sha1 of its bytes does (a touched file
is hashed, not re-analysed); its dependencies by stat data. The data file is rewritten without
the blobs nothing refers to when they pass half of it.

One index per graphmend version and engine fingerprint (a hash of its source:
`graphmend.fingerprint`), Python version and setting that changes a summary (`scope`), in
`.graphmend_cache/` under the current directory (like ruff's `.ruff_cache`), or `cache-dir` /
$GRAPHMEND_CACHE_DIR. Scope across files is recomputed from the summaries on every run, so a
change in one file still reaches the findings of others.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
import zlib
from collections.abc import Mapping
from typing import Optional

from graphmend.analysis.engine import _no_gc
from graphmend.config import Settings
from graphmend.filestat import Stat, stat_of
from graphmend.fingerprint import engine_fingerprint

DEFAULT_DIR = ".graphmend_cache"
FORMAT = 6



def digest_of(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as f:
            return hashlib.sha1(f.read()).hexdigest()
    except OSError:
        return None


def default_dir(settings: Settings) -> str:
    return os.environ.get("GRAPHMEND_CACHE_DIR") or getattr(settings, "cache_dir", None) or DEFAULT_DIR


class LazyFindings(Mapping):
    """A cached file's `by_function` (qualname -> findings), its blob read and decoded when a
    function that has findings is first asked for."""

    def __init__(self, cache: "ScanCache", names: frozenset, where: tuple[int, int]):
        self._cache, self._names, self._where = cache, names, where
        self._raw: Optional[dict] = None

    def _load(self) -> dict:
        if self._raw is None:
            self._raw = self._cache.read_blob(*self._where)
        return self._raw

    def __getitem__(self, q: str):
        if q not in self._names:
            raise KeyError(q)
        from graphmend.scan import decode_finding
        with _no_gc():
            return [decode_finding(f) for f in pickle.loads(self._load()[q])]

    def get(self, q, default=None):
        if q not in self._names:
            return default
        return self[q]

    def __contains__(self, q) -> bool:
        return q in self._names

    def __iter__(self):
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


class ScanCache:
    def __init__(self, directory: str, settings: Settings):
        self.directory = directory
        key = f"{engine_fingerprint('check', (__file__,))}|scope={settings.scope}|format={FORMAT}"
        self.name = hashlib.sha1(key.encode()).hexdigest()[:16]
        self.path = os.path.join(directory, f"index-{self.name}.pickle")
        # path -> (stat, sha1, deps, scope, syntax error, suppressions, names with findings, (offset, length),
        #          seeded findings: (caller, path, encoded finding), analysis/callers.py;
        #          the functions walked, None: all)
        self.entries: dict[str, tuple] = {}
        self.data_name: Optional[str] = None  # the data file the index refers to
        self.dirty = False
        self.hits = self.misses = 0
        self._pending: dict[str, bytes] = {}  # path -> blob not yet written
        self._stats: dict[str, Optional[Stat]] = {}  # dependencies stat'ed in this run
        self._data = None  # the open data file
        self._load()

    # ------------------------------------------------------------------ reading
    def _load(self) -> None:
        try:
            with open(self.path, "rb") as f, _no_gc():
                data = pickle.load(f)
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, ValueError,
                IndexError, TypeError):
            return  # no cache, or an unreadable one: start afresh
        if not (isinstance(data, dict) and data.get("format") == FORMAT and isinstance(data.get("entries"), dict)):
            return
        entries, name = data["entries"], data.get("data")
        end = max((e[7][0] + e[7][1] for e in entries.values() if e[7] is not None), default=0)
        try:
            size = os.path.getsize(os.path.join(self.directory, name)) if name else 0
        except (OSError, TypeError):
            size = -1
        if size < end:
            return  # the data file is missing or cut short: start afresh
        self.entries, self.data_name = entries, name

    def _dep_stat(self, path: str) -> Optional[Stat]:
        if path not in self._stats:
            self._stats[path] = stat_of(path)
        return self._stats[path]

    def get(self, path: str):
        """The summary (an analysis.FileSummary, its findings read lazily) of `path`, if still valid."""
        key = os.path.abspath(path)
        entry = self.entries.get(key)
        if entry is None:
            self.misses += 1
            return None
        stat, digest, deps, scope, syntax_error, suppressions, names, where, seeded, walked = entry
        now = stat_of(key)
        if now != stat:
            if now is None or now[0] != stat[0] or digest_of(key) != digest:
                self.misses += 1
                return None
            self.entries[key] = (now, *entry[1:])  # touched, not changed
            self.dirty = True
        if any(self._dep_stat(d) != s for d, s in deps):
            self.misses += 1
            return None
        self.hits += 1
        from graphmend import analysis
        from graphmend.scan import decode_finding
        from graphmend.analysis.callers import Seeded
        return analysis.FileSummary(key if path == key else path, scope, LazyFindings(self, names, where),
                                    decode_finding(syntax_error) if syntax_error else None, suppressions,
                                    seeded=[Seeded(c, p, decode_finding(f)) for c, p, f in seeded],
                                    walked=None if walked is None else set(walked))

    def read_blob(self, offset: int, length: int) -> dict:
        if self._data is None:
            self._data = open(os.path.join(self.directory, self.data_name), "rb")
        self._data.seek(offset)
        with _no_gc():  # the cyclic GC made unpickling many small tuples ~10x slower
            return pickle.loads(zlib.decompress(self._data.read(length)))

    # ------------------------------------------------------------------ writing
    def put(self, path: str, stat: Optional[Stat], deps: list[tuple[str, Optional[Stat]]], encoded,
            digest: Optional[str] = None) -> None:
        """Record the encoded summary (scan.encode_summary) of `path`, read when it had `stat`
        and the bytes of sha1 `digest`."""
        if stat is None or digest is None or any(s is None for _, s in deps):
            return
        _, scope, by_function, syntax_error, suppressions, seeded, walked = encoded
        if scope is not None:  # call targets repeat across files ("torch:cat"): stored and loaded once
            scope.edges = {q: {sys.intern(t) for t in ts} for q, ts in scope.edges.items()}
        key = os.path.abspath(path)
        # each function's findings pickled on their own: only those in scope are decoded
        inner = {q: pickle.dumps(fs, protocol=pickle.HIGHEST_PROTOCOL) for q, fs in by_function.items()}
        self._pending[key] = zlib.compress(pickle.dumps(inner, protocol=pickle.HIGHEST_PROTOCOL), 1)
        self.entries[key] = (stat, digest, tuple(deps), scope, syntax_error, suppressions,
                             frozenset(by_function), None, seeded, walked)
        self.dirty = True

    def save(self) -> Optional[str]:
        """Append the new blobs, write the index (atomically). Returns an error message, or None."""
        if not self.dirty:
            return None
        try:
            os.makedirs(self.directory, exist_ok=True)
            ignore = os.path.join(self.directory, ".gitignore")
            if not os.path.exists(ignore):
                with open(ignore, "w", encoding="utf-8") as f:
                    f.write("# Created by graphmend automatically.\n*\n")
            self._write()
        except OSError as e:
            return f"cannot write the cache in {self.directory}: {e.strerror or e}"
        self.dirty = False
        return None

    def _write(self) -> None:
        old = os.path.join(self.directory, self.data_name) if self.data_name else None
        used = sum(e[7][1] for k, e in self.entries.items() if e[7] is not None and k not in self._pending)
        size = os.path.getsize(old) if old and os.path.exists(old) else 0
        new = sum(map(len, self._pending.values()))
        compact = old is None or size == 0 or used + new < (size + new) // 2  # over half garbage
        if compact:  # a new data file holding only what the index refers to
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=f".data-{self.name}-")
            with os.fdopen(fd, "wb") as out:
                for key, e in self.entries.items():
                    if key in self._pending or e[7] is None:
                        continue
                    blob = self._raw_blob(*e[7])
                    self.entries[key] = (*e[:7], (out.tell(), len(blob)), *e[8:])
                    out.write(blob)
                self._append(out)
            name = f"data-{self.name}-{os.path.basename(tmp)[-8:]}.bin"
            os.replace(tmp, os.path.join(self.directory, name))
        else:
            name = self.data_name
            with open(old, "ab") as out:
                self._append(out)
        self._write_index(name)
        if self._data is not None:
            self._data.close()
            self._data = None
        if compact and old and old != os.path.join(self.directory, name):
            try:
                os.remove(old)
            except OSError:
                pass
        self.data_name = name

    def _raw_blob(self, offset: int, length: int) -> bytes:
        if self._data is None:
            self._data = open(os.path.join(self.directory, self.data_name), "rb")
        self._data.seek(offset)
        return self._data.read(length)

    def _append(self, out) -> None:
        for key, blob in self._pending.items():
            e = self.entries[key]
            self.entries[key] = (*e[:7], (out.tell(), len(blob)), *e[8:])
            out.write(blob)
        out.flush()
        os.fsync(out.fileno())
        self._pending.clear()

    def _write_index(self, data_name: str) -> None:
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".index-")
        with os.fdopen(fd, "wb") as f:
            pickle.dump({"format": FORMAT, "data": data_name, "entries": self.entries}, f,
                        protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, self.path)
