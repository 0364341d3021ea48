"""How mended code reaches the runtime (`graphmend/runtime.py`): the `runtime` setting.

* ``vendor`` (default): a copy of the runtime, ``_graphmend_runtime.py``, in the file's top-level
  package (beside the file when it is in no package); the mended file imports it, relatively
  inside a package. The copy's first lines carry its version and a digest of the rest, so a stale
  copy (an older version) is updated by ``graphmend fix`` and an edited one is reported and left
  alone.
* ``import``: ``from graphmend import runtime as graphmend`` (a project that depends on graphmend;
  also what the import hook, ``graphmend run``, uses).
* ``inline``: the runtime's source in the file, run into a module object named ``graphmend``
  (a single script or a notebook cell).

Every mode binds the name ``graphmend`` once near the top of the file (after its imports);
mended lines call ``graphmend.print(...)``, ``graphmend.raise_if(...)``, and so on.
"""

from __future__ import annotations

import ast
import hashlib
import re
from functools import lru_cache
from pathlib import Path
from typing import Optional

MODES = ("vendor", "import", "inline")
VENDOR_FILE = "_graphmend_runtime.py"
ALIAS = "graphmend"
IMPORT_LINE = f"from graphmend import runtime as {ALIAS}"
INLINE_BEGIN = "# --- graphmend runtime v{v} (inline; added by graphmend, do not edit) ---"
INLINE_END = "# --- end graphmend runtime ---"
_HEADER = ("# graphmend runtime v{v}: the helpers that graphmend-mended code calls (vendored by\n"
           "# `graphmend fix`, which updates it; do not edit). sha256 {digest}\n")
_HEADER_RE = re.compile(r"\A# graphmend runtime v(\d+):.*\n# .*sha256 ([0-9a-f]{64})\n")
# what marks a text as already importing the runtime, in any mode
_BOUND_RE = re.compile(
    r"^[ \t]*(?:from \.+ import _graphmend_runtime as graphmend|import _graphmend_runtime as graphmend"
    r"|from graphmend import runtime as graphmend"
    r"|# --- graphmend runtime v\d+ \(inline; added by graphmend, do not edit\) ---)[ \t]*(?:#.*)?$",
    re.MULTILINE)
# the runtime's public names (graphmend/runtime.py's __all__; a test keeps them equal)
NAMES = ("print", "print_if", "log", "log_if", "warn", "warn_if", "raise_if", "raise_unless",
         "format", "percent", "item", "to_float", "to_int", "to_bool", "tolist", "sdp_kernel")
_CALL_RE = re.compile(r"(?<![\w.])graphmend\.(?:" + "|".join(NAMES) + r")\b")


@lru_cache(maxsize=1)
def source() -> str:
    """The runtime module's source text (graphmend/runtime.py)."""
    return (Path(__file__).resolve().parent.parent / "runtime.py").read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def version() -> int:
    m = re.search(r"^VERSION = (\d+)", source(), re.MULTILINE)
    assert m, "graphmend/runtime.py defines VERSION"
    return int(m.group(1))


def vendored_text() -> str:
    """The text of `_graphmend_runtime.py`: a two-line header (version, digest) and the source."""
    body = source()
    return _HEADER.format(v=version(), digest=hashlib.sha256(body.encode()).hexdigest()) + body


def vendored_status(text: str) -> str:
    """"current", "stale" (an older version, unedited: `fix` replaces it), "newer" (a later
    graphmend wrote it), or "edited" (its text no longer matches its digest, or no header)."""
    m = _HEADER_RE.match(text)
    if not m:
        return "edited"
    body = text[m.end():]
    if hashlib.sha256(body.encode()).hexdigest() != m.group(2):
        return "edited"
    v = int(m.group(1))
    if v == version():
        return "current" if body == source() else "edited"
    return "stale" if v < version() else "newer"


def inline_block() -> str:
    """The runtime as a block for one file: its source run into a module object `graphmend`
    (one per process and version, registered in sys.modules so that Dynamo can guard on it)."""
    src = source()
    assert "'''" not in src and not src.rstrip().endswith("\\")
    name = f"_graphmend_runtime_inline_v{version()}"  # Dynamo imports a module's globals by name
    return (INLINE_BEGIN.format(v=version()) + "\n"
            f"{ALIAS} = __import__(\"sys\").modules.get(\"{name}\")\n"
            f"if {ALIAS} is None:\n"
            f"    {ALIAS} = __import__(\"types\").ModuleType(\"{name}\")\n"
            f"    exec(compile(r'''{src}''', \"<graphmend runtime>\", \"exec\"), {ALIAS}.__dict__)\n"
            f"    __import__(\"sys\").modules[\"{name}\"] = {ALIAS}\n"
            + INLINE_END + "\n")


def package_root(path: str) -> Optional[Path]:
    """The top-level package directory containing the file `path` (None: in no package)."""
    d = Path(path).resolve().parent
    if not (d / "__init__.py").is_file():
        return None
    while (d.parent / "__init__.py").is_file() and d.parent != d:
        d = d.parent
    return d


def vendor_path(path: str) -> Path:
    """Where the vendored copy for the file `path` lives."""
    root = package_root(path)
    return (root if root is not None else Path(path).resolve().parent) / VENDOR_FILE


def import_line(mode: str, path: str, tree: Optional[ast.Module] = None) -> str:
    """The line that binds `graphmend` in a file at `path` mended with runtime `mode`. A module
    of a namespace package (a directory without `__init__.py`, like pytorch-tabnet's) imports the
    vendored copy relatively when the package shows (`_in_namespace_package`); any other file in
    a directory without `__init__.py` (a script, a notebook's folder) imports it absolutely."""
    if mode == "import":
        return IMPORT_LINE
    if mode == "inline":
        return inline_block()
    real = path and not path.startswith("<") and path != "-"
    root = package_root(path) if real else None
    if root is not None:
        if tree is not None and _is_script(tree) and not any(
                isinstance(n, ast.ImportFrom) and n.level > 0 for n in ast.walk(tree)):
            # a module that is also run as a script (`python pkg/tools/setup.py`, deepxde's
            # set_default_backend.py, realcode round 9) has no parent package then: a relative
            # import would fail there, as the file's own absolute ones do not
            return f"from {root.name} import _graphmend_runtime as {ALIAS}"
        depth = len(Path(path).resolve().parent.relative_to(root).parts)
        return f"from {'.' * (depth + 1)} import _graphmend_runtime as {ALIAS}"
    if real and _in_namespace_package(Path(path).resolve(), tree):
        return f"from . import _graphmend_runtime as {ALIAS}"
    return f"import _graphmend_runtime as {ALIAS}"


def _is_script(tree: ast.Module) -> bool:
    """The module has an `if __name__ == "__main__":` block."""
    return any(isinstance(st, ast.If) and isinstance(st.test, ast.Compare) and isinstance(st.test.left, ast.Name)
               and st.test.left.id == "__name__" for st in tree.body)


_PACKAGE_IMPORT = r"^[ \t]*(?:from[ \t]+(?:\.|{name}\b)|import[ \t]+{name}\b)"


def _in_namespace_package(path: Path, tree: Optional[ast.Module]) -> bool:
    """The file's directory is a package although it has no `__init__.py`: it lies under a
    site-packages directory, or the file (not a script: no `if __name__ == "__main__":`) or a
    file beside it imports relatively or imports the directory by name."""
    d = path.parent
    if any(p.name in ("site-packages", "dist-packages") for p in d.parents):
        return True
    if tree is not None:
        if _is_script(tree):
            return False
        for n in ast.walk(tree):  # the file's own imports, from the text being mended
            if isinstance(n, ast.ImportFrom) and (n.level > 0 or (n.module or "").split(".")[0] == d.name) \
                    or isinstance(n, ast.Import) and any(a.name.split(".")[0] == d.name for a in n.names):
                return True
    pattern = re.compile(_PACKAGE_IMPORT.format(name=re.escape(d.name)), re.MULTILINE)
    try:
        siblings = sorted(f for f in d.glob("*.py") if f != path)[:200]
    except OSError:
        return False
    for f in siblings:
        try:
            if pattern.search(f.read_text(encoding="utf-8-sig", errors="replace")):
                return True
        except OSError:
            continue
    return False


def binds_runtime(text: str) -> bool:
    """Whether `text` already binds `graphmend` to the runtime (any mode)."""
    return _BOUND_RE.search(text) is not None


def uses_runtime(text: str) -> bool:
    """Whether code text calls the runtime."""
    return _CALL_RE.search(text) is not None


def inline_range(lines: list[str]) -> Optional[tuple[int, int]]:
    """0-based [start, end] of an inline runtime block in `lines` (begin marker .. end marker)."""
    start = None
    for i, ln in enumerate(lines):
        s = ln.strip()
        if start is None and s.startswith("# --- graphmend runtime v") and "(inline;" in s:
            start = i
        elif start is not None and s == INLINE_END:
            return start, i
    return None
