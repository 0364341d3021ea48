"""The workspace index: every Python file's scope (entries and call edges), so a helper in one
file is in scope when a `forward` in another reaches it, as with `graphmend check` on a folder.

Built once in the background after `initialized` (with work-done progress, cancellable) and
updated per file on save; only the scopes are kept (no trees), so it stays small.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Callable, Optional

from graphmend import scan
from graphmend.analysis.engine import summarize
from graphmend.analysis.scope import FileScope, reach
from graphmend.analysis.workspace import Workspace
from graphmend.config import Settings


class Cancelled(Exception):
    pass


class WorkspaceIndex:
    def __init__(self) -> None:
        self._scopes: dict[str, FileScope] = {}  # path -> scope
        self._external: dict[str, dict[str, str]] = {}  # path -> reached from elsewhere (cache)
        self._entry_lines: dict[str, dict[str, int]] = {}  # path -> entry qualname -> 0-based def line
        self._lock = threading.Lock()
        self.files = 0
        self.errors: list[str] = []

    def build(self, roots: list[str], settings: Settings, workspace: Workspace,
              progress: Optional[Callable[[int, int], None]] = None,
              cancelled: Callable[[], bool] = lambda: False) -> int:
        """Summarize every Python file under `roots` (in this thread). Returns the file count."""
        files, errors = scan.discover(roots, settings) if roots else ([], [])
        self.errors = [f"{e.path}: {e.error}" for e in errors]
        scopes: dict[str, FileScope] = {}
        lines: dict[str, dict[str, int]] = {}
        for i, path in enumerate(files):
            if cancelled():
                raise Cancelled()
            if progress is not None and (i % 20 == 0 or i == len(files) - 1):
                progress(i + 1, len(files))
            try:
                src = scan.read_source(path)
            except scan.SourceError as e:
                self.errors.append(f"{path}: {e}")
                continue
            except OSError as e:
                self.errors.append(f"{path}: {e}")
                continue
            s = summarize(src.text, path, settings, workspace)
            if s.scope is not None:
                scopes[path] = s.scope
                lines[path] = _entry_lines(s.symbols, s.scope)
        with self._lock:
            self._scopes = scopes
            self._entry_lines = lines
            self._external = {}
            self.files = len(files)
        return len(files)

    def update(self, path: str, scope: Optional[FileScope], symbols=None) -> bool:
        """A saved file's new scope. Returns whether anything other files depend on changed."""
        with self._lock:
            if scope is not None:
                self._entry_lines[path] = _entry_lines(symbols, scope)
            old = self._scopes.get(path)
            if scope is None:
                changed = self._scopes.pop(path, None) is not None
            else:
                changed = old is None or (old.entries, old.edges, old.defined, old.disabled) != (
                    scope.entries, scope.edges, scope.defined, scope.disabled)
                self._scopes[path] = scope
            if changed:
                self._external = {}
            return changed

    def external(self, path: str) -> dict[str, str]:
        """Functions of `path` that entries in the other files reach (qualname -> entry label).
        The file's own entries are left out: the live analysis of its open text decides those."""
        with self._lock:
            hit = self._external.get(path)
            if hit is not None:
                return hit
            own = self._scopes.get(path)
            if own is None:
                return {}
            scopes = [s for p, s in self._scopes.items() if p != path]
            scopes.append(replace(own, entries={}))
            out = reach(scopes).get(own.module, {})
            self._external[path] = out
            return out

    def locate(self, qualname: str) -> Optional[tuple[str, int]]:
        """(file URI, 0-based line) of an entry defined in some workspace file."""
        from pygls.uris import from_fs_path
        with self._lock:
            for path, lines in self._entry_lines.items():
                if qualname in lines:
                    return from_fs_path(path), lines[qualname]
        return None


def _entry_lines(sym, scope: Optional[FileScope]) -> dict[str, int]:
    if sym is None or scope is None:
        return {}
    return {fi.qualname: fi.node.lineno - 1 for fi in sym.all_functions if fi.qualname in scope.entries}
