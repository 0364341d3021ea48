"""A file's stat data as the caches compare them: a record is valid while these match."""

from __future__ import annotations

import os
from typing import Optional

Stat = tuple[int, int, int]  # (size, mtime_ns, inode)


def stat_of(path: str) -> Optional[Stat]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino
