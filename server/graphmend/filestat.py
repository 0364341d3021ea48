"""What the caches need of files: stat data (a record is valid while these match) and writing a
cache file whole or not at all."""

from __future__ import annotations

import contextlib
import os
import tempfile
from typing import Optional

Stat = tuple[int, int, int]  # (size, mtime_ns, inode)


def stat_of(path: str) -> Optional[Stat]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


def replace_file(path: str, data: bytes, prefix: str = ".graphmend-") -> None:
    """Write `data` to `path` atomically (a temporary file in the same directory, then
    os.replace), creating the directory; raises OSError."""
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=prefix, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
