"""Settings: `[tool.graphmend]` in pyproject.toml (and, later, editor settings) -> one typed Settings."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, fields
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SCOPES = ("default", "compiled", "module")
RUNTIMES = ("vendor", "import", "inline")  # how mended code reaches the runtime (rewrite/runtime.py)
DEFAULT_LINE_LENGTH = 88


class ConfigError(ValueError):
    """A setting has the wrong type or value; the message says which."""


@dataclass
class Settings:
    # "default": torch.compile entries + nn.Module.forward + what they call;
    # "compiled": only explicit torch.compile entries and what they call; "module": every function.
    scope: str = "default"
    select: list[str] = field(default_factory=list)  # codes or prefixes; empty = all
    ignore: list[str] = field(default_factory=list)
    unsafe_fixes: bool = False
    exclude: list[str] = field(default_factory=lambda: [
        ".git", ".venv", "venv", "__pycache__", "node_modules", "build", "dist", ".tox", ".eggs"])
    extend_exclude: list[str] = field(default_factory=list)
    cache_dir: str | None = None  # `graphmend check`'s cache (default .graphmend_cache)
    # "vendor": a copy _graphmend_runtime.py in the package; "import": graphmend.runtime; "inline"
    runtime: str = "vendor"
    line_length: int = DEFAULT_LINE_LENGTH  # mended lines wrap here (else [tool.ruff]/[tool.black])
    # severity of a break that happens only under a condition the analysis names (a dtype,
    # self.training, a config attribute): "error" | "warning" | "information" | "hint"
    conditional_severity: str = "information"
    source: str | None = None  # the pyproject.toml these came from

    def enabled(self, code: str) -> bool:
        if self.select and not any(code.startswith(s) for s in self.select):
            return False
        return not any(code.startswith(s) for s in self.ignore)


def _coerce(name: str, value, default):
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"`{name}` must be true or false, not {value!r}")
        return value
    if isinstance(default, list):
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"`{name}` must be a list of strings, not {value!r}")
        return list(value)
    if name == "cache_dir":
        if not isinstance(value, str) or not value:
            raise ConfigError(f"`cache-dir` must be a path, not {value!r}")
        return value
    if name == "runtime":
        if value not in RUNTIMES:
            raise ConfigError(f"`runtime` must be one of {', '.join(RUNTIMES)}, not {value!r}")
        return value
    if name == "line_length":
        if not isinstance(value, int) or isinstance(value, bool) or not 20 <= value <= 1000:
            raise ConfigError(f"`line-length` must be an integer from 20 to 1000, not {value!r}")
        return value
    if name == "conditional_severity":
        from graphmend.findings import SEVERITIES
        if value not in SEVERITIES:
            raise ConfigError(f"`conditional-severity` must be one of {', '.join(SEVERITIES)}, not {value!r}")
    if name == "scope":
        if value not in SCOPES:
            raise ConfigError(f"`scope` must be one of {', '.join(SCOPES)}, not {value!r}")
    return value


def settings_from_dict(data: dict, base: Settings | None = None) -> tuple[Settings, list[str]]:
    """Merge a mapping (pyproject table or editor settings, `-` or `_` keys) over `base`.

    Returns the settings and a list of error messages; an invalid entry keeps its default.
    """
    s = Settings(**{f.name: getattr(base, f.name) for f in fields(Settings)}) if base else Settings()
    errors: list[str] = []
    known = {f.name for f in fields(Settings)} - {"source"}
    for raw_key, value in (data or {}).items():
        key = raw_key.replace("-", "_")
        if key in ("probe",):  # sub-tables owned by other layers
            continue
        if key not in known:
            errors.append(f"unknown setting `{raw_key}`")
            continue
        try:
            setattr(s, key, _coerce(key, value, getattr(Settings(), key)))
        except ConfigError as e:
            errors.append(str(e))
    return s, errors


def find_pyproject(start: Path) -> Path | None:
    start = start.resolve()
    for d in [start, *start.parents] if start.is_dir() else [*start.parents]:
        p = d / "pyproject.toml"
        if p.is_file():
            return p
    return None


def load_settings(start: Path | str = ".") -> tuple[Settings, list[str]]:
    """Settings from the nearest pyproject.toml above `start` (defaults if none)."""
    p = find_pyproject(Path(start))
    if p is None:
        return Settings(), []
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        return Settings(), [f"{p}: cannot read [tool.graphmend]: {e}"]
    tool = data.get("tool", {}) if isinstance(data.get("tool"), dict) else {}
    table = tool.get("graphmend", {})
    if isinstance(table, dict) and "line-length" not in table and "line_length" not in table:
        for other in ("ruff", "black"):  # the formatter's line length, when graphmend has none
            n = tool.get(other, {}).get("line-length") if isinstance(tool.get(other), dict) else None
            if isinstance(n, int) and not isinstance(n, bool) and 20 <= n <= 1000:
                table = {**table, "line-length": n}
                break
    s, errors = settings_from_dict(table)
    s.source = str(p)
    return s, [f"{p}: {e}" for e in errors]
