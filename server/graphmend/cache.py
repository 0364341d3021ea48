"""The `graphmend check` cache: each file's summary (its scope and the findings of every
function, before cross-file scope is decided), reused while the file and every module file its
analysis consulted (base classes resolved in other files) are unchanged.

A file's entry is valid when its size and mtime and those of its dependencies match what was
recorded before it was read. One pickle per graphmend version and engine fingerprint (a hash of
its source: `graphmend.fingerprint`), Python version and setting that
changes a summary (`scope`), in `.graphmend_cache/` under the current directory (like ruff's
`.ruff_cache`), or `cache-dir` / $GRAPHMEND_CACHE_DIR. Scope across files is recomputed from the
summaries on every run, so a change in one file still reaches the findings of others.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
import zlib
from typing import Optional

from graphmend.config import Settings
from graphmend.fingerprint import engine_fingerprint

DEFAULT_DIR = ".graphmend_cache"
Stat = tuple[int, int]  # (size, mtime_ns)


def stat_of(path: str) -> Optional[Stat]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def default_dir(settings: Settings) -> str:
    return os.environ.get("GRAPHMEND_CACHE_DIR") or getattr(settings, "cache_dir", None) or DEFAULT_DIR


class ScanCache:
    def __init__(self, directory: str, settings: Settings):
        self.directory = directory
        key = f"{engine_fingerprint('check', (__file__,))}|scope={settings.scope}"
        name = hashlib.sha1(key.encode()).hexdigest()[:16]
        self.path = os.path.join(directory, f"summaries-{name}.pickle")
        self.entries: dict[str, tuple] = {}
        self.dirty = False
        self.hits = self.misses = 0
        self._load()

    def _load(self) -> None:
        try:
            with open(self.path, "rb") as f:
                data = pickle.loads(zlib.decompress(f.read()))
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, ValueError,
                zlib.error):
            return  # no cache, or an unreadable one: start afresh
        if isinstance(data, dict):
            self.entries = data

    def get(self, path: str):
        """The encoded summary of `path`, if still valid."""
        key = os.path.abspath(path)
        entry = self.entries.get(key)
        if entry is None:
            self.misses += 1
            return None
        stat, deps, encoded = entry
        if stat_of(key) != stat or any(stat_of(d) != s for d, s in deps):
            self.misses += 1
            return None
        self.hits += 1
        return encoded

    def put(self, path: str, stat: Optional[Stat], deps: list[tuple[str, Optional[Stat]]], encoded) -> None:
        if stat is None or any(s is None for _, s in deps):
            return
        self.entries[os.path.abspath(path)] = (stat, tuple(deps), encoded)
        self.dirty = True

    def save(self) -> Optional[str]:
        """Write the cache (atomically). Returns an error message, or None."""
        if not self.dirty:
            return None
        try:
            os.makedirs(self.directory, exist_ok=True)
            ignore = os.path.join(self.directory, ".gitignore")
            if not os.path.exists(ignore):
                with open(ignore, "w", encoding="utf-8") as f:
                    f.write("# Created by graphmend automatically.\n*\n")
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".summaries-")
            with os.fdopen(fd, "wb") as f:  # summaries repeat messages: compresses ~10x
                f.write(zlib.compress(pickle.dumps(self.entries, protocol=pickle.HIGHEST_PROTOCOL), 1))
            os.replace(tmp, self.path)
        except OSError as e:
            return f"cannot write the cache in {self.directory}: {e.strerror or e}"
        self.dirty = False
        return None
