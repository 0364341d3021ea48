"""`[tool.graphmend.probe]` in pyproject.toml -> ProbeSettings (command-line flags override).

    [tool.graphmend.probe]
    entry = "examples.tiny_model:probe"   # module:function returning (model_or_fn, inputs)
    python = ".venv/bin/python"           # the interpreter with torch (default: the one running)
    device = "auto"                       # auto | cpu | cuda
    backend = "eager"                     # eager | aot_eager | inductor | any registered backend
    timeout = 120                         # seconds (wall clock, per child process)
    memory-mb = 8192                      # resident memory of the probe's process group; 0 = none
    runs = 20                             # steady-state calls (verify; probe: 0 unless given)
    scope = ["examples"]                  # packages verify mends in memory (default: the entry's
                                          # top-level package)
    unsafe-fixes = false                  # default: [tool.graphmend] unsafe-fixes
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from graphmend.config import find_pyproject

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEVICES = ("auto", "cpu", "cuda")


@dataclass
class ProbeSettings:
    entry: Optional[str] = None
    python: Optional[str] = None
    device: str = "auto"
    backend: str = "eager"
    timeout: float = 120.0
    memory_mb: Optional[int] = 8192
    output_mb: Optional[int] = 512  # stdout + stderr of the child together
    runs: Optional[int] = None  # None: 0 for probe, 20 for verify
    scope: list[str] = field(default_factory=list)
    unsafe: bool = False
    root: Optional[str] = None  # the project root (the pyproject's directory), the child's cwd
    source: Optional[str] = None  # the pyproject.toml these came from

    def interpreter(self) -> str:
        """The interpreter to run the child with: `python` (relative to the root) or this one."""
        if self.python:
            p = os.path.expanduser(self.python)
            if not os.path.isabs(p) and (os.sep in p or "/" in p) and self.root:
                p = os.path.join(self.root, p)
            return p
        return sys.executable

    def default_scope(self) -> list[str]:
        """`scope`, else the entry's top-level package or module (for verify's mended run)."""
        if self.scope:
            return list(self.scope)
        if self.entry and ":" in self.entry:
            mod = self.entry.rpartition(":")[0]
            if mod.endswith(".py") or "/" in mod:
                mod = mod[:-3] if mod.endswith(".py") else mod
                mod = mod.replace("\\", "/").strip("/").replace("/", ".")
            top = mod.split(".")[0]
            return [top] if top else []
        return []


def _num(name: str, value, kind, errors: list[str], minimum=None):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            (kind is int and not float(value).is_integer()):
        errors.append(f"`{name}` must be a {'whole ' if kind is int else ''}number, not {value!r}")
        return None
    if minimum is not None and value < minimum:
        errors.append(f"`{name}` must be {minimum} or more, not {value!r}")
        return None
    return kind(value)


def probe_settings_from_dict(data: dict, base: Optional[ProbeSettings] = None) \
        -> tuple[ProbeSettings, list[str]]:
    """Merge a `[tool.graphmend.probe]` table (or editor settings; `-` or `_` keys) over `base`.
    An invalid value keeps the default and is reported."""
    s = ProbeSettings(**vars(base)) if base else ProbeSettings()
    errors: list[str] = []
    for raw, value in (data or {}).items():
        key = raw.replace("-", "_")
        if key == "entry":
            if isinstance(value, str) and ":" in value:
                s.entry = value
            else:
                errors.append(f"`entry` must be \"module:function\", not {value!r}")
        elif key in ("python", "interpreter"):
            if isinstance(value, str) and value:
                s.python = value
            else:
                errors.append(f"`python` must be a path, not {value!r}")
        elif key == "device":
            if value in DEVICES:
                s.device = value
            else:
                errors.append(f"`device` must be one of {', '.join(DEVICES)}, not {value!r}")
        elif key == "backend":
            if isinstance(value, str) and value:
                s.backend = value
            else:
                errors.append(f"`backend` must be a backend name, not {value!r}")
        elif key in ("timeout", "timeout_s"):
            v = _num("timeout", value, float, errors, minimum=1)
            if v is not None:
                s.timeout = v
        elif key in ("memory_mb", "memory", "output_mb", "output"):
            attr = "memory_mb" if key.startswith("memory") else "output_mb"
            if value is False or value == 0:  # no limit
                setattr(s, attr, None)
            else:
                v = _num(attr.replace("_", "-"), value, int, errors, minimum=64 if attr == "memory_mb" else 1)
                if v is not None:
                    setattr(s, attr, v)
        elif key == "runs":
            v = _num("runs", value, int, errors, minimum=0)
            if v is not None:
                s.runs = v
        elif key == "scope":
            if isinstance(value, str):
                value = [p.strip() for p in value.split(",") if p.strip()]
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                s.scope = list(value)
            else:
                errors.append(f"`scope` must be a list of package names, not {value!r}")
        elif key in ("unsafe_fixes", "unsafe"):
            if isinstance(value, bool):
                s.unsafe = value
            else:
                errors.append(f"`unsafe-fixes` must be true or false, not {value!r}")
        else:
            errors.append(f"unknown probe setting `{raw}`")
    return s, errors


def load_probe_settings(start: Path | str = ".") -> tuple[ProbeSettings, list[str]]:
    """ProbeSettings from the nearest pyproject.toml above `start` (defaults, root = `start`'s
    directory, if there is none). Errors are messages naming the file."""
    start_p = Path(start).resolve()
    p = find_pyproject(start_p)
    if p is None:
        root = start_p if start_p.is_dir() else start_p.parent
        return ProbeSettings(root=str(root)), []
    base = ProbeSettings(root=str(p.parent), source=str(p))
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        return base, [f"{p}: cannot read [tool.graphmend.probe]: {e}"]
    table = data.get("tool", {}).get("graphmend", {})
    if not isinstance(table, dict):
        return base, [f"{p}: [tool.graphmend] must be a table"]
    unsafe = table.get("unsafe-fixes", table.get("unsafe_fixes"))
    if isinstance(unsafe, bool):
        base.unsafe = unsafe
    probe = table.get("probe", {})
    if not isinstance(probe, dict):
        return base, [f"{p}: [tool.graphmend.probe] must be a table"]
    s, errors = probe_settings_from_dict(probe, base)
    return s, [f"{p}: [tool.graphmend.probe] {e}" for e in errors]
