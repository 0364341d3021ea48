"""An import error in the user's code."""

import fixpkg_this_dependency_is_missing  # ERROR:import  # noqa: F401


def probe():
    return None
