"""Run a probe entry in a child process with the user's interpreter, safely (no torch here).

`run_probe()` blocks (the server calls it in a worker thread) and never raises for what the
user's code does: a failure, a timeout, running out of memory, a cancel or a crash comes back as
`{"ok": False, "error": {"kind", "message", "traceback", "file", "line"}, ...}`.

The child:
- is `PYTHON -m graphmend.probe.child ARGS.json`, started in a new session
  (`start_new_session=True`), so that it and everything it starts form one process group;
- finds graphmend through a private directory first on PYTHONPATH holding only a `graphmend`
  symlink to this package (none of the server's other packages), with the project root (`cwd`)
  first on its sys.path;
- gets its own compile caches (TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR in the private
  directory) unless `extra_env` names others;
- writes its result to a JSON file in the private directory (stdout is the user's), and its
  progress to a stage file the runner passes on to `on_stage`.

The runner watches it every 0.1 s: past `timeout_s` or when `cancel` is set, it sends SIGTERM to
the group, then SIGKILL to whatever is left after a grace period; when the resident memory of the
whole group (summed from /proc every 0.2 s; proportional set sizes when it has several
processes, so pages shared after a fork count once) exceeds `memory_mb`, or stdout and stderr together
exceed `output_mb`, it sends SIGKILL at once (a runaway must not keep going for a grace period).
It also ends leftovers of the group when the child exits normally, and then every process that
still carries this run's marker (GRAPHMEND_PROBE_RUN=<token>, set in the child's environment and
found in /proc/PID/environ): a process that called setsid() has left the group but not the marker.
The last 64 KiB of the child's stdout and stderr are kept; the pipes are read with poll(), so a
process that escaped both the group and the marker while holding them open cannot hang the runner.
(POSIX only; without /proc, as on macOS, the memory limit and the marker are not enforced.)

The result (JSON-able):

    ok, error: {kind, message, traceback, file, line} | None   kind: one of KINDS
    entry, python, torch (version), device ("cpu"|"cuda"), backend
    graphs        FX graphs compiled during the first call (counting backend), recompiled ones too
    breaks        graphs - 1 (as torch._dynamo.explain counts them)
    break_events  graph-break records Dynamo logged during the first call (repeats included)
    recompiles    "Recompiling function" records over all calls; recompile_reasons: their text
    break_list    one per site, deduplicated by (file, line, reason), in first-seen order:
                  {reason (gb_type: explanation, one line), gb_id ("GB0059"|None), gb_type,
                   detail (Dynamo's full text), file (abs), line, function (resume functions
                   mapped to the real one), user_stack [{file, line, function}] (outermost
                   first, torch's and the probe's frames dropped), in_workspace (file under
                   `cwd`, not site-packages), workspace_frame (innermost stack frame in the
                   workspace, for a diagnostic when the site is in a library), note (e.g. the
                   frame was skipped: a break in a loop), count}
    entry_file, entry_line   the entry function's definition
    timings       {compile_s (Dynamo's entire-frame compile time of the first call, backend
                   included), first_call_s, cold_start_s (first call minus compile),
                   steady_median_ms, steady_runs, steady_ms [...], import_s, build_s}
    messages      what the program said during the first call, in order ("print: ...",
                  "log: LEVEL name: ...", "warning: Category: ..."); messages_second: the second
    graph_list    [{ops, frame, graph_break}]; explain: {graph_count, graph_break_count,
                  op_count, break_reasons [break records]} or {error}
    outputs_path  torch.save'd outputs of the first call (only with `outputs_dir`)
    mend          (mended runs) {scope, unsafe, records: the import hook's MendRecord dicts}
    stdout_tail, stderr_tail, returncode, pid, peak_rss_mb, output_mb (written), duration_s
    leftovers_killed  pids of processes that had left the process group (setsid) but carried the
                  run's marker, killed when the run ended
"""

from __future__ import annotations

import ast
import collections
import importlib.machinery
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from typing import Callable, Optional, Sequence

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../graphmend
TAIL_BYTES = 64 * 1024
POLL_S = 0.1
TERM_GRACE_S = 2.0
DRAIN_S = 1.0  # after the run, how long the pipes may still deliver before reading stops
OUTPUT_MB = 512  # default cap on what the child writes to stdout and stderr together
MARKER_ENV = "GRAPHMEND_PROBE_RUN"
KINDS = ("import", "exception", "timeout", "memory", "output", "cancelled", "crashed", "no-torch",
         "bad-entry")


# --------------------------------------------------------------------------- process group


def _proc_stat(pid: int) -> Optional[tuple[str, int, int]]:
    """(state, pgrp, rss pages) from /proc/PID/stat, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read().decode("ascii", "replace")
    except OSError:
        return None
    rest = data[data.rfind(")") + 2:].split()
    try:
        return rest[0], int(rest[2]), int(rest[21])
    except (IndexError, ValueError):
        return None


def _has_proc() -> bool:
    return os.path.isdir("/proc/self")


def _live_group(pgid: int) -> list[tuple[int, int]]:
    """(pid, rss pages) of the group's live (non-zombie) processes, from /proc."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        st = _proc_stat(int(name))
        if st and st[1] == pgid and st[0] not in ("Z", "X"):
            out.append((int(name), st[2]))
    return out


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of the group."""
    if not _has_proc():
        try:
            os.killpg(pgid, 0)
            return [pgid]
        except OSError:
            return []
    return [pid for pid, _ in _live_group(pgid)]


def _pss_bytes(pid: int) -> Optional[int]:
    """Proportional set size (shared pages divided among the processes sharing them), from
    /proc/PID/smaps_rollup (Linux 4.14+), or None."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def group_rss_bytes(pgid: int) -> int:
    """Resident memory of the group's live processes. One process: its RSS (cheap, from
    /proc/PID/stat). Several: the sum of their PSS, so that pages a forked child shares with its
    parent (all of torch, after a fork) count once, not once per process; RSS where PSS cannot
    be read. (PSS costs a few ms a process to read, hence only then.)"""
    if not _has_proc():
        return 0
    page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
    members = _live_group(pgid)
    if len(members) == 1:
        return members[0][1] * page
    return sum(p if (p := _pss_bytes(pid)) is not None else pages * page for pid, pages in members)


def pid_alive(pid: int) -> bool:
    """True while `pid` runs (a zombie is dead)."""
    st = _proc_stat(pid) if _has_proc() else None
    if st is not None:
        return st[0] not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _has_proc()


def kill_group(pgid: int, grace_s: float = TERM_GRACE_S) -> None:
    """SIGTERM the group, SIGKILL what is left after `grace_s` (at once when it is 0), then wait
    (up to 1 s) until no live member is left."""
    if grace_s > 0:
        try:
            os.killpg(pgid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            if not group_members(pgid):
                return
            time.sleep(0.05)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return
    deadline = time.monotonic() + 1.0
    while group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.02)


def marked_processes(token: str) -> list[int]:
    """Live processes (of this user: others' environments are unreadable) whose environment holds
    GRAPHMEND_PROBE_RUN=`token`. /proc/PID/environ is the environment the process was started
    with (inherited through fork and exec), so setsid() does not remove it; an exec with a clean
    environment does."""
    if not _has_proc():
        return []
    needle = f"{MARKER_ENV}={token}".encode()
    me, out = os.getpid(), []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                data = f.read()
        except OSError:
            continue
        if needle in data.split(b"\0"):
            st = _proc_stat(int(name))
            if st and st[0] not in ("Z", "X"):
                out.append(int(name))
    return out


def kill_marked(token: str, within_s: float = 2.0) -> list[int]:
    """SIGKILL every live process carrying the run's marker (again, for ones forked meanwhile,
    until none is left or `within_s` has passed); the pids killed."""
    killed: list[int] = []
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        pids = marked_processes(token)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                if pid not in killed:
                    killed.append(pid)
            except OSError:
                pass
        time.sleep(0.02)
    # a killed process loses its environment before it is gone: wait until it is (or a zombie)
    while any(pid_alive(p) for p in killed) and time.monotonic() < deadline + 1.0:
        time.sleep(0.02)
    return killed


class _Tail:
    """Keeps the last `cap` bytes read from a pipe (counting all of them in `total`).

    It reads the raw descriptor after poll() says there is data, and checks `stop` at least every
    0.1 s: a process that escaped the run may hold the pipe open for ever, and a thread blocked in
    read() could neither be stopped nor let the pipe be closed (closing a buffered reader waits
    for the read in progress), which would hang the runner. While `over()` is true (the output
    cap is reached) it reads nothing more: the writer blocks on the full pipe until it is killed,
    and the server does not spend its time reading a flood."""

    def __init__(self, stream, cap: int = TAIL_BYTES, over: Optional[Callable[[], bool]] = None):
        self.stream, self.cap, self.over = stream, cap, over
        self.chunks: collections.deque = collections.deque()
        self.size = 0
        self.total = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            fd = self.stream.fileno()
            poller = select.poll() if hasattr(select, "poll") else None
            if poller is not None:
                poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
            while not self.stop.is_set():
                if self.over is not None and self.over():
                    self.stop.wait(0.05)
                    continue
                if poller is not None and not poller.poll(100):
                    continue
                data = os.read(fd, 65536)
                if not data:
                    break
                self.chunks.append(data)
                self.size += len(data)
                self.total += len(data)
                while self.size - len(self.chunks[0]) >= self.cap:
                    self.size -= len(self.chunks.popleft())
        except (OSError, ValueError):
            pass

    @staticmethod
    def finish(tails: Sequence["_Tail"], drain_s: float = DRAIN_S) -> None:
        """Let the pipes deliver until end of file for up to `drain_s` in all, then stop reading."""
        deadline = time.monotonic() + drain_s
        for t in tails:
            t.thread.join(timeout=max(0.0, deadline - time.monotonic()))
        for t in tails:
            t.stop.set()
        for t in tails:
            t.thread.join(timeout=1.0)

    def text(self) -> str:
        data = b"".join(self.chunks)[-self.cap:]
        s = data.decode("utf-8", "replace")
        if self.total > len(data):
            s = f"[... {self.total - len(data)} bytes not kept ...]\n" + s
        return s


class ChildRun:
    def __init__(self):
        self.returncode: Optional[int] = None
        self.killed: Optional[str] = None  # "timeout" | "cancelled" | "memory" | "output"
        self.stdout_tail = ""
        self.stderr_tail = ""
        self.duration_s = 0.0
        self.peak_rss_mb = 0.0
        self.output_bytes = 0  # stdout and stderr together
        self.start_error: Optional[str] = None
        self.pid: Optional[int] = None  # also the process group id
        self.leftovers_killed: list[int] = []  # marked processes outside the group, killed


def run_child(argv: Sequence[str], *, cwd: str, env: dict, timeout_s: Optional[float],
              memory_mb: Optional[int], cancel: Optional[threading.Event] = None,
              stage_path: Optional[str] = None,
              on_stage: Optional[Callable[[str], None]] = None,
              output_mb: Optional[int] = OUTPUT_MB) -> ChildRun:
    """Run one child in its own process group, watched; see the module docstring."""
    run = ChildRun()
    t0 = time.monotonic()
    # The marker: inherited by everything the child starts (unless it execs with a new
    # environment), found again in /proc/PID/environ after the run.
    token = f"{os.getpid()}-{uuid.uuid4().hex}"
    env = dict(env, **{MARKER_ENV: token})
    try:
        proc = subprocess.Popen(list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
    except OSError as e:
        run.start_error = f"cannot run {argv[0]}: {e}"
        return run
    pgid = run.pid = proc.pid
    limit = memory_mb * 1024 * 1024 if memory_mb else None
    out_limit = output_mb * 1024 * 1024 if output_mb else None
    tails: list[_Tail] = []

    def over_cap() -> bool:
        return out_limit is not None and sum(t.total for t in tails) > out_limit

    out, err = _Tail(proc.stdout, over=over_cap), _Tail(proc.stderr, over=over_cap)
    tails += [out, err]
    stage_pos = 0
    next_mem = 0.0

    def poll_stages() -> None:
        nonlocal stage_pos
        if not stage_path or on_stage is None:
            return
        try:
            with open(stage_path, "rb") as f:
                f.seek(stage_pos)
                data = f.read()
        except OSError:
            return
        end = data.rfind(b"\n")
        if end < 0:
            return
        stage_pos += end + 1
        for line in data[:end].decode("utf-8", "replace").splitlines():
            try:
                on_stage(line)
            except Exception:
                pass

    try:
        while True:
            if proc.poll() is not None:
                break
            now = time.monotonic()
            if cancel is not None and cancel.is_set():
                run.killed = "cancelled"
            elif timeout_s is not None and now - t0 > timeout_s:
                run.killed = "timeout"
            elif over_cap():
                run.killed = "output"
            elif now >= next_mem:
                rss = group_rss_bytes(pgid)
                run.peak_rss_mb = max(run.peak_rss_mb, rss / 2**20)
                if limit is not None and rss > limit:
                    run.killed = "memory"
                next_mem = now + 0.2
            if run.killed:
                # a runaway (memory, output) gets no grace period: it would go on meanwhile
                kill_group(pgid, grace_s=0 if run.killed in ("memory", "output") else TERM_GRACE_S)
                break
            poll_stages()
            if cancel is not None:
                cancel.wait(POLL_S)
            else:
                time.sleep(POLL_S)
    except BaseException:  # KeyboardInterrupt in a CLI: the child is in its own session
        run.killed = run.killed or "cancelled"
        kill_group(pgid, grace_s=0.5)
        raise
    finally:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except OSError:
                pass
            proc.wait()
        # Whatever the child left running in its group (compile workers, the user's processes).
        if group_members(pgid):
            kill_group(pgid, grace_s=0.5)
        # Whatever left the group (setsid) but still carries the run's marker.
        run.leftovers_killed = kill_marked(token)
        # Then stop reading, even if something that escaped both still holds the pipes open.
        _Tail.finish((out, err), drain_s=0 if run.killed == "output" else DRAIN_S)
        for s in (proc.stdout, proc.stderr):
            try:
                s.close()
            except OSError:
                pass
    poll_stages()
    run.returncode = proc.returncode
    run.stdout_tail, run.stderr_tail = out.text(), err.text()
    run.output_bytes = out.total + err.total
    run.duration_s = time.monotonic() - t0
    return run


# --------------------------------------------------------------------------- environment


def make_shim(dirpath: str) -> str:
    """A directory holding only `graphmend` -> this package (symlink; a copy where links fail)."""
    shim = os.path.join(dirpath, "pypath")
    os.makedirs(shim, exist_ok=True)
    link = os.path.join(shim, "graphmend")
    if not os.path.exists(link):
        try:
            os.symlink(PACKAGE_DIR, link, target_is_directory=True)
        except (OSError, NotImplementedError):
            shutil.copytree(PACKAGE_DIR, link, ignore=shutil.ignore_patterns("__pycache__"))
    return shim


def child_env(shim: str, cwd: str, private: str, extra_env: Optional[dict]) -> dict:
    env = dict(os.environ)
    parts = [shim, cwd]
    if env.get("PYTHONPATH"):
        parts.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(parts)
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("PYTHONIOENCODING", "utf-8")
    env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(private, "inductor-cache")
    env["TRITON_CACHE_DIR"] = os.path.join(private, "triton-cache")
    for k in ("PYTHONHOME", "PYTHONSTARTUP", "PYTHONINSPECT"):
        env.pop(k, None)
    if extra_env:
        for k, v in extra_env.items():
            if v is None:
                env.pop(k, None)
            else:
                env[str(k)] = str(v)
    return env


# --------------------------------------------------------------------------- entry location


def locate_entry(entry: str, cwd: str) -> tuple[Optional[str], Optional[int]]:
    """The entry's module file and the line of its function, found without running anything."""
    if ":" not in entry:
        return None, None
    mod, _, attr = entry.rpartition(":")
    path = None
    if mod.endswith(".py") or "/" in mod:
        p = os.path.join(cwd, mod)
        path = p if os.path.isfile(p) else None
    else:
        try:
            locations: Optional[list] = [cwd] + [p for p in sys.path if p]
            parts = mod.split(".")
            spec = None
            for i in range(len(parts)):
                name = ".".join(parts[: i + 1])
                spec = importlib.machinery.PathFinder.find_spec(name, locations)
                if spec is None:
                    break
                locations = list(spec.submodule_search_locations or [])
            if spec is not None and spec.origin and os.path.isfile(spec.origin):
                path = spec.origin
        except (ImportError, ValueError, OSError):
            path = None
    if path is None:
        return None, None
    path = os.path.abspath(path)
    line = 1
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        name = attr.split(".")[-1]
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and node.name == name:
                line = node.lineno
                if node.decorator_list:
                    line = min(d.lineno for d in node.decorator_list)
                break
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        pass
    return path, line


# --------------------------------------------------------------------------- run_probe


def _interpreter_path(python: str) -> str:
    """A relative path with a separator is taken from the caller's directory (not the child's);
    a bare name is looked up on PATH; symlinks are kept (a venv's python is one)."""
    python = os.path.expanduser(python or sys.executable)
    if not os.path.isabs(python) and (os.sep in python or "/" in python):
        python = os.path.abspath(python)
    return python


def _error(kind: str, message: str, file=None, line=None, tb=None) -> dict:
    return {"kind": kind, "message": message, "traceback": tb, "file": file, "line": line}


def _base_result(entry: str, python: str, device: str, backend: str) -> dict:
    return {
        "ok": False, "error": None, "entry": entry, "python": python, "torch": None,
        "device": device, "backend": backend, "graphs": 0, "breaks": 0, "recompiles": 0,
        "break_list": [], "entry_file": None, "entry_line": None,
        "timings": {"compile_s": None, "first_call_s": None, "cold_start_s": None,
                    "steady_median_ms": None, "steady_runs": 0},
        "outputs_path": None, "messages": [], "stdout_tail": "", "stderr_tail": "",
        "duration_s": None,
    }


def _last_lines(text: str, n: int = 6) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return "\n".join(lines[-n:])


def run_probe(entry: str, *, python: str, cwd: str, device: str = "auto", backend: str = "eager",
              timeout_s: float = 120, memory_mb: Optional[int] = 8192,
              mend_scope: Optional[Sequence[str]] = None, unsafe: bool = False, runs: int = 0,
              on_stage: Optional[Callable[[str], None]] = None,
              cancel: Optional[threading.Event] = None, extra_env: Optional[dict] = None,
              outputs_dir: Optional[str] = None, output_mb: Optional[int] = OUTPUT_MB) -> dict:
    """Probe `entry` ("pkg.module:function") in a child process; see the module docstring.

    `outputs_dir`: where the child saves the first compiled call's outputs (`outputs_path`);
    none are saved without it. `mend_scope`: install the mending import hook for these packages
    first (verify's mended side). `runs`: steady-state calls after the first. `memory_mb`,
    `output_mb` (stdout and stderr together): limits (None or 0: none)."""
    cwd = os.path.abspath(cwd)
    python = _interpreter_path(python)
    result = _base_result(entry, python, device, backend)
    t0 = time.monotonic()
    private = tempfile.mkdtemp(prefix="graphmend-probe-")
    try:
        def stage(text: str) -> None:
            if on_stage is not None:
                try:
                    on_stage(text)
                except Exception:
                    pass

        if not os.path.isdir(cwd):
            result["error"] = _error("bad-entry", f"the project directory {cwd} does not exist")
            return result
        stage(f"starting {python}")
        shim = make_shim(private)
        result_path = os.path.join(private, "result.json")
        stage_path = os.path.join(private, "stages")
        outputs_path = None
        if outputs_dir:
            os.makedirs(outputs_dir, exist_ok=True)
            outputs_path = os.path.join(os.path.abspath(outputs_dir), "outputs.pt")
        args = {"entry": entry, "cwd": cwd, "workspace": cwd, "device": device,
                "backend": backend, "runs": int(runs or 0),
                "mend_scope": list(mend_scope) if mend_scope is not None else None,
                "unsafe": bool(unsafe), "result_path": result_path, "stage_path": stage_path,
                "outputs_path": outputs_path,
                "mend_cache_dir": os.path.join(private, "mend-cache")}
        args_path = os.path.join(private, "args.json")
        with open(args_path, "w", encoding="utf-8") as f:
            json.dump(args, f)
        env = child_env(shim, cwd, private, extra_env)
        run = run_child([python, "-m", "graphmend.probe.child", args_path], cwd=cwd, env=env,
                        timeout_s=timeout_s, memory_mb=memory_mb, cancel=cancel,
                        stage_path=stage_path, on_stage=on_stage, output_mb=output_mb)
        result["stdout_tail"], result["stderr_tail"] = run.stdout_tail, run.stderr_tail
        result["returncode"] = run.returncode
        result["pid"] = run.pid
        result["peak_rss_mb"] = round(run.peak_rss_mb, 1)
        result["output_mb"] = round(run.output_bytes / 2**20, 1)
        result["leftovers_killed"] = run.leftovers_killed
        child_result = None
        if os.path.isfile(result_path) and not run.killed:
            try:
                with open(result_path, encoding="utf-8") as f:
                    child_result = json.load(f)
            except (OSError, ValueError) as e:
                result["error"] = _error("crashed", f"unreadable result from the child: {e}")
        if child_result is not None:
            for k, v in child_result.items():
                if k not in ("stdout_tail", "stderr_tail", "duration_s"):
                    result[k] = v
            result["python"] = python
        elif result["error"] is None:
            f, ln = locate_entry(entry, cwd)
            result["entry_file"], result["entry_line"] = f, ln
            if run.start_error:
                result["error"] = _error("no-torch", run.start_error + " (set `python` in "
                                         "[tool.graphmend.probe] to an interpreter with torch)")
            elif run.killed == "timeout":
                result["error"] = _error("timeout", f"{entry} did not finish in {timeout_s:g} s: "
                                         "stopped (its whole process group)", f, ln)
            elif run.killed == "cancelled":
                result["error"] = _error("cancelled", f"{entry}: cancelled", f, ln)
            elif run.killed == "memory":
                result["error"] = _error("memory", f"{entry} used more than {memory_mb} MiB "
                                         f"(peak seen {run.peak_rss_mb:.0f} MiB): stopped "
                                         "(its whole process group)", f, ln)
            elif run.killed == "output":
                result["error"] = _error("output", f"{entry} wrote more than {output_mb} MiB to "
                                         f"stdout and stderr: stopped (its whole process group); "
                                         "the last 64 KiB of each are kept", f, ln)
            else:
                rc = run.returncode
                if rc is not None and rc < 0:
                    try:
                        sig = signal.Signals(-rc).name
                    except ValueError:
                        sig = str(-rc)
                    hint = " (the system may have run out of memory)" if -rc == signal.SIGKILL else ""
                    msg = f"the probe process crashed: killed by signal {-rc} ({sig}){hint}"
                else:
                    msg = f"the probe process exited with status {rc} without a result"
                tail = _last_lines(run.stderr_tail)
                if tail:
                    msg += ":\n" + tail
                result["error"] = _error("crashed", msg, f, ln, run.stderr_tail or None)
        err = result.get("error")
        if err and not err.get("file") and err.get("kind") != "bad-entry":
            f, ln = (result.get("entry_file"), result.get("entry_line"))
            if not f:
                f, ln = locate_entry(entry, cwd)
            err["file"], err["line"] = f, ln
        if result.get("outputs_path") and not os.path.isfile(result["outputs_path"]):
            result["outputs_path"] = None
        result["ok"] = bool(result.get("ok")) and result.get("error") is None
    except Exception as e:  # the runner itself must never take the server down
        import traceback
        result["ok"] = False
        result["error"] = _error("crashed", f"probe runner failed: {type(e).__name__}: {e}",
                                 tb=traceback.format_exc())
    finally:
        shutil.rmtree(private, ignore_errors=True)
        result["duration_s"] = round(time.monotonic() - t0, 3)
    return result


def compare_outputs(a_path: str, b_path: str, *, python: str, cwd: str, timeout_s: float = 120,
                    memory_mb: Optional[int] = 8192,
                    cancel: Optional[threading.Event] = None) -> dict:
    """Compare two saved outputs in a small child (torch needed): {"ok", "outputs_equal",
    "max_abs_diff", "mismatches", "error"?}."""
    python = _interpreter_path(python)
    private = tempfile.mkdtemp(prefix="graphmend-compare-")
    try:
        shim = make_shim(private)
        out = os.path.join(private, "compare.json")
        env = child_env(shim, os.path.abspath(cwd), private, None)
        run = run_child([python, "-m", "graphmend.probe.child", "--compare", a_path, b_path, out],
                        cwd=cwd, env=env, timeout_s=timeout_s, memory_mb=memory_mb, cancel=cancel,
                        output_mb=OUTPUT_MB)
        if os.path.isfile(out) and not run.killed:
            with open(out, encoding="utf-8") as f:
                return json.load(f)
        why = run.start_error or run.killed or f"exit status {run.returncode}"
        return {"ok": False, "outputs_equal": None, "max_abs_diff": None,
                "error": f"comparing outputs failed: {why}\n{_last_lines(run.stderr_tail)}"}
    finally:
        shutil.rmtree(private, ignore_errors=True)
