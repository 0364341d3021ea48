"""Probe entries that misbehave on purpose (tests/test_probe_fence.py): each is run by the probe's
child process after it has imported torch, as a user's entry would be.

A pid an entry wants the test to know is appended, one per line, to $GM_FENCE_PIDFILE.
"""

import ctypes
import os
import signal
import sys
import time

_libc = ctypes.CDLL(None)


def _note_pid(pid: int) -> None:
    path = os.environ.get("GM_FENCE_PIDFILE")
    if path:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, f"{pid}\n".encode())
        finally:
            os.close(fd)


def _c_sleep(seconds: int = 300) -> None:
    """Sleep inside C (no Python bytecode runs, no signal handler of Python's is called)."""
    while True:
        _libc.sleep(seconds)


def _model():
    import torch
    return (lambda x: x + 1), (torch.zeros(2),)


def hang_ignoring_sigterm():
    """(a) Hangs in C-level sleep with SIGTERM ignored: only SIGKILL ends it."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _note_pid(os.getpid())
    _c_sleep()


def allocate_without_bound():
    """(b) Allocates (and touches) 16 MiB after 16 MiB as fast as it can, SIGTERM ignored.
    Safety net for a shared test machine: past 4 GiB it stops and sleeps (a watchdog that works
    stops it long before)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    hoard = []
    while len(hoard) < 256:
        hoard.append(b"\x01" * (16 * 2**20))
    _c_sleep()


def flood_stdout():
    """(c) Prints without end, 1 MiB a line, through Python's sys.stdout."""
    chunk = "x" * (2**20 - 1)
    while True:
        print(chunk)


def flood_stderr():
    """(c) Writes without end to file descriptor 2, 1 MiB at a time, bypassing Python's streams."""
    chunk = b"e" * 2**20
    while True:
        os.write(2, chunk)


def abort():
    """(d) Crashes the interpreter with SIGABRT."""
    print("about to abort", file=sys.stderr, flush=True)
    os.abort()


def segfault():
    """(d) Crashes the interpreter with SIGSEGV (reads address 0)."""
    print("about to read address 0", file=sys.stderr, flush=True)
    ctypes.string_at(0)


def _fork(child) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            child()
        finally:
            os._exit(0)
    return pid


def fork_children():
    """(e) Forks three children that ignore SIGTERM and sleep in C, then fails: the children are
    left running in the probe's process group."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by the children
    for _ in range(3):
        _note_pid(_fork(_c_sleep))
    raise RuntimeError("left three children behind")


def _daemon(setsid: bool, clean_env: bool) -> None:
    """Double fork: the grandchild is re-parented to init when its parent exits (a daemon),
    keeps the probe's stdout and stderr open, notes its pid and sleeps."""
    def grandchild():
        _note_pid(os.getpid())
        if clean_env:  # nothing of the probe's environment is left in /proc/PID/environ
            os.execve("/bin/sleep", ["sleep", "300"], {})
        _c_sleep()

    def middle():
        if setsid:
            os.setsid()  # a new session and process group: out of the probe's group
        _fork(grandchild)

    pidfile = os.environ.get("GM_FENCE_PIDFILE")
    os.waitpid(_fork(middle), 0)
    deadline = time.monotonic() + 10
    while pidfile and time.monotonic() < deadline:
        if os.path.exists(pidfile) and open(pidfile).read().strip():
            break
        time.sleep(0.01)


def daemon_in_group():
    """(e) A daemonized grandchild that stays in the probe's process group; then fails."""
    _daemon(setsid=False, clean_env=False)
    raise RuntimeError("left a daemon behind")


def daemon_setsid():
    """(e) A daemonized grandchild that calls os.setsid() (leaves the process group); then fails."""
    _daemon(setsid=True, clean_env=False)
    raise RuntimeError("left a daemon behind")


def daemon_setsid_clean_env():
    """(e) As daemon_setsid, and the grandchild execs `sleep` with an empty environment."""
    _daemon(setsid=True, clean_env=True)
    raise RuntimeError("left a daemon behind")


def delete_workspace_file():
    """(f) Deletes victim.txt in the project (the child's working directory), then works."""
    os.remove(os.path.join(os.getcwd(), "victim.txt"))
    return _model()
