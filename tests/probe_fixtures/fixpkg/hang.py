"""Hangs. At import (before torch) it starts a grandchild `sleep` and writes its pid to
$GM_FIXTURE_PIDFILE, so a test can check that the whole process group was ended."""

import os
import subprocess
import time

_sleeper = subprocess.Popen(["sleep", "300"])
if os.environ.get("GM_FIXTURE_PIDFILE"):
    with open(os.environ["GM_FIXTURE_PIDFILE"] + ".tmp", "w") as f:
        f.write(str(_sleeper.pid))
    os.replace(os.environ["GM_FIXTURE_PIDFILE"] + ".tmp", os.environ["GM_FIXTURE_PIDFILE"])


def probe():
    time.sleep(300)
