"""The workspace index: every Python file's scope (entries and call edges), so a helper in one
file is in scope when a `forward` in another reaches it, as with `graphmend check` on a folder;
and the findings each file's calls reveal in another file's functions (analysis/callers.py: a
helper whose parameters a caller elsewhere passes tensors to), shown in that file while its text
is the one they were found in.

Built once in the background after `initialized` (with work-done progress, cancellable) and
updated per file on save (the callers of a saved file are analysed again, in the background);
only scopes and those findings are kept (no trees), so it stays small. As `graphmend check`
does (scan.summarize_files), each file walks the functions its own entries reach, and after the
cross-file reach the files with functions that only other files' entries reach are walked again
with them: a caller's findings count only when it is reached (`seeded_for`).
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import replace
from typing import Callable, Optional

from graphmend import scan
from graphmend.analysis.engine import reached_in_file, summarize, unwalked
from graphmend.analysis.scope import FileScope, reach
from graphmend.analysis.workspace import Workspace
from graphmend.config import Settings
from graphmend.findings import Finding


class Cancelled(Exception):
    pass


class WorkspaceIndex:
    def __init__(self) -> None:
        self._scopes: dict[str, FileScope] = {}  # path -> scope
        self._external: dict[str, dict[str, str]] = {}  # path -> reached from elsewhere (cache)
        self._entry_lines: dict[str, dict[str, int]] = {}  # path -> entry qualname -> 0-based def line
        # caller path -> [(caller qualname, callee path, finding)]: callers.Seeded in other files
        self._seeded: dict[str, list[tuple[str, str, Finding]]] = {}
        # callee path -> sha1 of the text its callers' findings were found in
        self._digests: dict[str, str] = {}
        # caller path -> the other files whose functions it passes tensors to (read again on their save)
        self._calls_into: dict[str, set[str]] = {}
        self._reached: Optional[dict[str, dict[str, str]]] = None  # reach over every file (cache)
        self._walked: dict[str, set[str]] = {}  # path -> the functions its summary walked
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
        seeded: dict[str, list] = {}
        digests: dict[str, str] = {}
        calls_into: dict[str, set[str]] = {}
        walked: dict[str, set[str]] = {}
        for i, path in enumerate(files):
            if cancelled():
                raise Cancelled()
            if progress is not None and (i % 20 == 0 or i == len(files) - 1):
                progress(i + 1, len(files))
            got = self._summarize(path, settings, workspace, digests)
            if got is not None:
                scopes[path], lines[path], seeded[path], calls_into[path], walked[path] = got
        everywhere = reach(list(scopes.values()))
        for path, scope in list(scopes.items()):
            missing = unwalked(scope, walked[path], everywhere)
            if missing:  # reached from other files' entries: walk those too
                if cancelled():
                    raise Cancelled()
                got = self._summarize(path, settings, workspace, digests, dict.fromkeys(missing | walked[path], ""))
                if got is not None:
                    scopes[path], lines[path], seeded[path], calls_into[path], walked[path] = got
        with self._lock:
            self._scopes = scopes
            self._entry_lines = lines
            self._seeded = {p: v for p, v in seeded.items() if v}
            self._calls_into = {p: v for p, v in calls_into.items() if v}
            self._digests = digests
            self._walked = walked
            self._external = {}
            self._reached = None
            self.files = len(files)
        return len(files)

    def _summarize(self, path: str, settings: Settings, workspace: Workspace, digests: dict[str, str],
                   external: Optional[dict[str, str]] = None):
        """(scope, entry lines, findings in other files, the other files it passes tensors to,
        the functions walked) of one file, or None (reported). The functions walked are those
        its own entries reach and `external` (reached from other files)."""
        try:
            src = scan.read_source(path)
        except (scan.SourceError, OSError) as e:
            self.errors.append(f"{path}: {e}")
            return None
        s = summarize(src.text, path, settings, workspace, select=reached_in_file(external or {}, {}))
        if s.scope is None:
            return None
        foreign = _foreign(path, s.seeded)
        for _, target, _ in foreign:
            if target not in digests:
                digests[target] = _digest_of_file(target)
        return (s.scope, _entry_lines(s.symbols, s.scope), foreign, calls_into(path, s.facts, workspace),
                s.walked or set())

    def callers_of(self, path: str) -> list[str]:
        """The files whose calls revealed findings in `path`."""
        target = os.path.abspath(path)
        with self._lock:
            return [p for p, v in self._calls_into.items() if target in v]

    def reanalyse(self, paths: list[str], settings: Settings, workspace: Workspace) -> None:
        """Analyse the files `paths` again (in this thread): a file they call was saved."""
        digests: dict[str, str] = {}
        for path in paths:
            got = self._summarize(path, settings, workspace, digests, self.external(path))
            with self._lock:
                if got is None:
                    self._seeded.pop(path, None)
                    self._calls_into.pop(path, None)
                    continue
                scope, lines, foreign, into, self._walked[path] = got
                self._scopes[path], self._entry_lines[path] = scope, lines
                self._seeded[path], self._calls_into[path] = foreign, into
                self._digests.update(digests)
                self._external = {}
                self._reached = None

    def seeded_for(self, path: str, text: str) -> list[tuple[str, Finding]]:
        """(entry label, finding) of what other files' calls reveal in `path`, when `text` is the
        text they were found in and their caller is reached from an entry."""
        target = os.path.abspath(path)
        with self._lock:
            if not self._seeded or target not in self._digests:
                return []
            if text_digest(text) != self._digests[target]:
                return []  # edited since: the spans would be off; the callers are read again on save
            if self._reached is None:
                self._reached = reach(list(self._scopes.values()))
            out = []
            for caller_path, entries in self._seeded.items():
                scope = self._scopes.get(caller_path)
                reached = self._reached.get(scope.module, {}) if scope is not None else {}
                for caller, t, f in entries:
                    label = reached.get(caller)
                    if t == target and label is not None:
                        out.append((label, f))
            return out

    def update(self, path: str, scope: Optional[FileScope], symbols=None, seeded=None,
               calls_into: Optional[set[str]] = None, walked: Optional[set[str]] = None) -> bool:
        """A saved file's new scope (and the findings its calls reveal in other files: a list of
        callers.Seeded; the other files it passes tensors to; the functions its check walked).
        Returns whether anything other files depend on changed."""
        with self._lock:
            if walked is not None:
                self._walked[path] = set(walked)
            if calls_into is not None:
                self._calls_into[path] = calls_into
            if scope is not None:
                self._entry_lines[path] = _entry_lines(symbols, scope)
            if seeded is not None:
                foreign = _foreign(path, seeded)
                changed_seeded = foreign != self._seeded.get(path, [])
                self._seeded[path] = foreign
                for _, target, _ in foreign:
                    self._digests[target] = _digest_of_file(target)
            else:
                changed_seeded = False
            old = self._scopes.get(path)
            if scope is None:
                changed = self._scopes.pop(path, None) is not None
            else:
                changed = old is None or (old.entries, old.edges, old.defined, old.disabled, old.classes) != (
                    scope.entries, scope.edges, scope.defined, scope.disabled, scope.classes)
                self._scopes[path] = scope
            if changed:
                self._external = {}
                self._reached = None
            return changed or changed_seeded

    def unwalked(self) -> list[str]:
        """The files with functions that entries now reach but their summaries did not walk (a
        save gave another file an entry path to them): `reanalyse` them for what their calls
        reveal."""
        with self._lock:
            if self._reached is None:
                self._reached = reach(list(self._scopes.values()))
            return [p for p, scope in self._scopes.items() if unwalked(scope, self._walked.get(p, set()), self._reached)]

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


def _foreign(path: str, seeded) -> list[tuple[str, str, Finding]]:
    """(caller, callee path, finding without its analysis site: no tree is kept) of the findings
    a file's calls reveal in other files."""
    here = os.path.abspath(path)
    return [(x.caller, os.path.abspath(x.path), replace(x.finding, site=None)) for x in seeded
            if os.path.abspath(x.path) != here]


def calls_into(path: str, facts: dict, workspace: Workspace) -> set[str]:
    """The other files whose functions a file's walks pass tensors to (detect.CallFact)."""
    here, out = os.path.abspath(path), set()
    for fs in facts.values():
        for fact in fs:
            f = workspace.module_file(fact.module)
            if f and os.path.abspath(f) != here:
                out.add(os.path.abspath(f))
    return out


def text_digest(text: str) -> str:
    """sha1 of a document's text with its line endings and BOM normalised as files are read."""
    return hashlib.sha1(scan.normalize_text(text).text.encode("utf-8")).hexdigest()


def _digest_of_file(path: str) -> str:
    try:
        return text_digest(scan.read_source(path).text)
    except (scan.SourceError, OSError):
        return ""


def _entry_lines(sym, scope: Optional[FileScope]) -> dict[str, int]:
    if sym is None or scope is None:
        return {}
    return {fi.qualname: fi.node.lineno - 1 for fi in sym.all_functions if fi.qualname in scope.entries}
