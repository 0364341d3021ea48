"""A tiny package with graph breaks, mended by the import hook in tests/test_importhook.py."""

# `helpers` is imported (and compiled) before `model`, whose forward is the only code that
# reaches `helpers.scale`: the hook must mend it after the fact (cross-file scope).
from . import helpers  # noqa: F401
from .model import Net  # noqa: F401
