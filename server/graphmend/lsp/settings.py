"""Editor settings (initializationOptions, workspace/configuration, didChangeConfiguration)
merged with `[tool.graphmend]` in the nearest pyproject.toml into the engine's Settings.

`configurationPreference` says who wins: "editorFirst" (default: a setting the user changed
in the editor overrides the file), "filesystemFirst" (the file overrides the editor) or
"editorOnly" (pyproject.toml is not read). Editors send every setting, defaults included, so a
setting counts as "changed in the editor" only when it differs from the engine's default.
Invalid values are reported (one message) and replaced by defaults; they never stop the server.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Optional

from graphmend.config import Settings, load_settings, settings_from_dict

PREFERENCES = ("editorFirst", "filesystemFirst", "editorOnly")
LOG_LEVELS = ("error", "warning", "info", "debug")
# editor key -> engine Settings field
ENGINE_KEYS = {"scope": "scope", "select": "select", "ignore": "ignore", "unsafeFixes": "unsafe_fixes",
               "runtime": "runtime", "lineLength": "line_length",
               "conditionalSeverity": "conditional_severity"}


@dataclass
class ServerSettings:
    enable: bool = True
    fix_on_save: bool = False
    log_level: str = "info"
    configuration_preference: str = "editorFirst"
    debounce_ms: int = 150
    workspace_trusted: bool = True  # the editor's trust in the workspace (VS Code passes it)
    # keep other modules' definitions between sessions (analysis/definitions.py), in the user's
    # cache directory, never in the workspace
    user_cache: bool = True
    engine: dict[str, Any] = field(default_factory=dict)  # editor values of ENGINE_KEYS, as given
    probe: dict[str, Any] = field(default_factory=dict)  # passed through to the probe layer


def _camel(key: str) -> str:
    head, *rest = key.replace("-", "_").split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def server_settings(options: Any, base: Optional[ServerSettings] = None) -> tuple[ServerSettings, list[str]]:
    """Parse the editor's settings object (camelCase or snake_case keys)."""
    s = ServerSettings(**{f.name: getattr(base, f.name) for f in fields(ServerSettings)}) if base \
        else ServerSettings()
    errors: list[str] = []
    if options is None or options == []:  # Neovim encodes an empty Lua table `{}` as `[]`
        return s, errors
    if not isinstance(options, dict):
        return s, [f"settings must be an object, not {type(options).__name__}"]
    if isinstance(options.get("graphmend"), dict):  # {"graphmend": {...}} as some clients send it
        options = options["graphmend"]
    engine = dict(s.engine)
    for raw, value in options.items():
        key = _camel(raw)
        if key in ENGINE_KEYS:
            engine[key] = value
        elif key in ("enable", "fixOnSave", "workspaceTrusted", "userCache"):
            if isinstance(value, bool):
                setattr(s, {"enable": "enable", "fixOnSave": "fix_on_save",
                            "workspaceTrusted": "workspace_trusted",
                            "userCache": "user_cache"}[key], value)
            else:
                errors.append(f"`{key}` must be true or false, not {value!r}")
        elif key == "logLevel":
            if value in LOG_LEVELS:
                s.log_level = value
            else:
                errors.append(f"`logLevel` must be one of {', '.join(LOG_LEVELS)}, not {value!r}")
        elif key == "configurationPreference":
            if value in PREFERENCES:
                s.configuration_preference = value
            else:
                errors.append(f"`configurationPreference` must be one of {', '.join(PREFERENCES)}, "
                              f"not {value!r}")
        elif key == "debounceMs":
            if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 5000:
                s.debounce_ms = value
            else:
                errors.append(f"`debounceMs` must be an integer from 0 to 5000, not {value!r}")
        elif key == "probe":
            if isinstance(value, dict):
                s.probe = dict(value)
            else:
                errors.append(f"`probe` must be an object, not {value!r}")
        elif key in ("interpreter", "path", "trace"):  # client-side settings
            continue
        else:
            errors.append(f"unknown setting `{raw}`")
    # Validate the engine part now, so a bad value is reported once, when it arrives.
    _, engine_errors = settings_from_dict({ENGINE_KEYS[k]: v for k, v in engine.items()})
    if engine_errors:
        errors += engine_errors
        for k in list(engine):  # drop the invalid ones: their defaults apply
            if settings_from_dict({ENGINE_KEYS[k]: engine[k]})[1]:
                del engine[k]
    s.engine = engine
    return s, errors


class SettingsResolver:
    """Engine Settings for a file: pyproject.toml (cached by path and mtime) merged with the
    editor's settings according to the preference."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[float, Settings, list[str]]] = {}

    def _file_settings(self, path: str) -> tuple[Settings, list[str]]:
        from graphmend.config import find_pyproject
        start = Path(path).parent if path else Path(os.getcwd())
        p = find_pyproject(start) if start.is_dir() else None
        if p is None:
            return Settings(), []
        key = str(p)
        try:
            mtime = p.stat().st_mtime
        except OSError:
            mtime = -1.0
        hit = self._cache.get(key)
        if hit and hit[0] == mtime:
            return hit[1], hit[2]
        s, errors = load_settings(p.parent)
        self._cache[key] = (mtime, s, errors)
        return s, errors

    def resolve(self, path: str, editor: ServerSettings) -> tuple[Settings, list[str]]:
        defaults = Settings()
        edited = {ENGINE_KEYS[k]: v for k, v in editor.engine.items()
                  if v != getattr(defaults, ENGINE_KEYS[k])}
        if editor.configuration_preference == "editorOnly":
            s, _ = settings_from_dict(edited)
            return s, []
        file_settings, errors = self._file_settings(path)
        if editor.configuration_preference == "filesystemFirst":
            merged, _ = settings_from_dict(edited)
            table = _explicit(file_settings)
            merged, _ = settings_from_dict(table, merged)
        else:
            merged, _ = settings_from_dict(edited, file_settings)
        merged.source = file_settings.source
        return merged, errors


def _explicit(s: Settings) -> dict:
    """The fields of file settings that differ from the defaults."""
    d = Settings()
    return {f.name: getattr(s, f.name) for f in fields(Settings)
            if f.name != "source" and getattr(s, f.name) != getattr(d, f.name)}
