"""The engine's fingerprint: graphmend's version plus the CONTENT of the sources that decide a
finding or a mend (analysis, rules, rewrite, config, findings, ...), part of every cache key
(`graphmend check`'s summaries, the import hook's mends): a cache entry made by other code (a
new rule, an edited legality condition, a checkout between releases) is never reused, and
editing graphmend's other parts (CLI, language server) does not invalidate it."""

from __future__ import annotations

import functools
import hashlib
import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
DECIDING = ("__init__.py", "config.py", "findings.py", "textlines.py", "dynamo_registry.py")


@functools.lru_cache(maxsize=None)
def engine_fingerprint(salt: str = "", extra: tuple[str, ...] = ()) -> str:
    """A hex digest of `salt`, the version, the Python version and the deciding sources (plus
    the files in `extra`)."""
    from graphmend import __version__
    h = hashlib.sha256(f"graphmend {__version__} {salt} py{sys.version_info[:2]}".encode())
    files = [PACKAGE_DIR / n for n in DECIDING]
    for sub in ("analysis", "rules", "rewrite"):
        files += sorted((PACKAGE_DIR / sub).glob("*.py"))
    files += [Path(p).resolve() for p in extra]
    for p in files:
        try:
            data = p.read_bytes()
        except OSError:
            continue
        h.update(f"{p.relative_to(PACKAGE_DIR) if p.is_relative_to(PACKAGE_DIR) else p.name}:".encode())
        h.update(hashlib.sha256(data).digest())
    return h.hexdigest()
