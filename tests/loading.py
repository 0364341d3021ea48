"""Importing a file by its path, for the tests (benchmark scripts, generated modules)."""

from __future__ import annotations

import importlib.util
import sys


def load_path(path, name: str, reuse: bool = False):
    """Import the file `path` as module `name` (registered in sys.modules; with `reuse`, an
    already imported one is returned)."""
    if reuse and name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
