"""The diagnostics of a document as an earlier session left them, for opening it again.

Opening a file is a full check: its parse, the walks of its reached functions, and the first
resolution of what it imports; on transformers' large files that is 4-9x the file's `ast.parse`
time. When the same text was checked in an earlier session, with the same settings, the same
workspace context (what other files reach in it, what their calls reveal in it) and none of the
modules the analysis read since changed, its findings are the same: this cache gives them at
`didOpen` in about the time of hashing the text, and the full check still runs right after
(its result replaces them if anything differs, and code actions, hover and the next edit's
incremental check wait for it).

One small pickle per file path, in the user's cache directory next to the definitions index
(never in the workspace), keyed by the engine's fingerprint; a record is valid while the sha1 of
the text, the settings and context key and the stat data of every module the workspace had read
(an over-approximation of what this file's analysis read) all match. Written once per document and
session, after its first full check.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from typing import Optional, Sequence

from graphmend.filestat import replace_file, stat_of
from graphmend.findings import Finding
from graphmend.lsp.index import text_digest

FORMAT = 1


def _key(settings, external: dict[str, str], foreign: Sequence[tuple[str, Finding]]) -> str:
    from graphmend.scan import encode_finding
    ctx = (repr(settings), sorted(external.items()), [(label, encode_finding(f)) for label, f in foreign])
    return hashlib.sha1(repr(ctx).encode("utf-8")).hexdigest()


class OpenedCache:
    def __init__(self, directory: str, fingerprint: Optional[str] = None):
        if fingerprint is None:
            from graphmend.fingerprint import engine_fingerprint
            fingerprint = engine_fingerprint("opened")
        self.directory = os.path.join(directory, f"opened-{fingerprint[:16]}")
        self.fingerprint = fingerprint
        self.hits = self.misses = 0

    def _file(self, path: str) -> str:
        return os.path.join(self.directory, hashlib.sha1(os.path.abspath(path).encode()).hexdigest()[:24] + ".pickle")

    def get(self, path: str, text: str, settings, external: dict[str, str],
            foreign: Sequence[tuple[str, Finding]]) -> Optional[list[Finding]]:
        """The findings recorded for exactly this text and context, if nothing they depend on
        changed; else None."""
        try:
            with open(self._file(path), "rb") as f:
                rec = pickle.load(f)
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, ValueError,
                IndexError, TypeError):
            self.misses += 1
            return None
        ok = (isinstance(rec, dict) and rec.get("format") == FORMAT and rec.get("fingerprint") == self.fingerprint
              and rec.get("path") == os.path.abspath(path) and rec.get("digest") == text_digest(text)
              and rec.get("key") == _key(settings, external, foreign)
              and all(stat_of(d) == st for d, st in rec.get("deps", ())))
        if not ok:
            self.misses += 1
            return None
        from graphmend.scan import decode_finding
        try:
            found = [decode_finding(t) for t in rec["findings"]]
        except Exception:  # a damaged record: the full check answers
            self.misses += 1
            return None
        self.hits += 1
        return found

    def put(self, path: str, text: str, settings, external: dict[str, str],
            foreign: Sequence[tuple[str, Finding]], findings: list[Finding], deps: Sequence[str]) -> Optional[str]:
        """Record a full check's findings (atomically). Returns an error message, or None."""
        from graphmend.scan import encode_finding
        rec = {"format": FORMAT, "fingerprint": self.fingerprint, "path": os.path.abspath(path),
               "digest": text_digest(text), "key": _key(settings, external, foreign),
               "deps": [(d, stat_of(d)) for d in sorted(set(deps))],
               "findings": [encode_finding(f) for f in findings]}
        try:
            replace_file(self._file(path), pickle.dumps(rec, protocol=pickle.HIGHEST_PROTOCOL), ".opened-")
        except OSError as e:
            return f"cannot write the cache of opened documents in {self.directory}: {e.strerror or e}"
        return None
