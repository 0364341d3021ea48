"""Workspace scale: `graphmend check` over a whole tree (default: a copy of the installed
transformers `models/`), against `ruff check` and torchfix on the same tree in the same run.

    python benchmarks/scale.py [PATH] [--dirs bert,t5] [--jobs N] [--repeat 3] [--quick]
                               [--skip-torchfix] [--torchfix-timeout 1200] [--json OUT] [--markdown]

The tree is copied once to a temp dir (the installed package is never modified). Then, in rounds
(so that a shared machine's load drifts over every tool alike), each of `graphmend check` and
`ruff check` runs:

  * no cache   -- graphmend `--no-cache`, ruff `--no-cache`;
  * cold       -- an empty cache dir (the first run of a fresh checkout: it writes the cache);
  * warm       -- the same cache dir again, nothing changed;
  * 1 changed  -- a comment appended to one modeling file (`--changed-file`), the same cache dir.

torchfix (libcst-based, no cache) runs once at the end, under `--torchfix-timeout`; if it does not
finish, the figure is "did not finish in N s". Per run: wall time, CPU time (user + sys of the
process and its children, from wait4), the peak RSS of the largest process (wait4's ru_maxrss)
and of the whole process tree (summed RSS, sampled every 0.1 s from /proc), the exit status and
the number of findings. graphmend's findings of every run are compared with the cold run's (a
cache must not change them). Floors, in the same run: reading every file, and `ast.parse` of
every file on one core. `--quick`: two model dirs (`--dirs`), one round, no torchfix.
"""

from __future__ import annotations

import argparse
import ast
import gc
import hashlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
# The runs start in the copied tree: a relative PYTHONPATH (`PYTHONPATH=server`) would not hold
# there and an installed graphmend would be measured instead of this checkout's.
os.environ["PYTHONPATH"] = os.pathsep.join([str(HERE.parent / "server"),
                                            *(os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)])
from suite import environment, tool_version  # noqa: E402

MODES = ("no_cache", "cold", "warm", "changed")
MODE_LABEL = {"no_cache": "no cache", "cold": "cold (empty cache)", "warm": "warm (nothing changed)",
              "changed": "1 file changed", "once": "(no cache)"}
QUICK_DIRS = "bert,t5"


# --------------------------------------------------------------------------- measuring a process


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])  # after "(comm)": state ppid ...
        kids.setdefault(ppid, []).append(int(d))
    return kids


def tree_rss_bytes(pid: int, include_root: bool = True) -> int:
    """Summed RSS of pid (unless include_root is false) and its descendants (shared pages counted in
    each process)."""
    kids, page, total = _children_map(), os.sysconf("SC_PAGE_SIZE"), 0
    todo = [pid] if include_root else list(kids.get(pid, ()))
    while todo:
        p = todo.pop()
        todo.extend(kids.get(p, ()))
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * page
        except (OSError, IndexError, ValueError):
            pass
    return total


#: Runs the command as its own child and reports that child's wall time and rusage. A child exec'd
#: straight from this (large) process would inherit its memory high-water mark: Linux carries the
#: old address space's peak RSS into ru_maxrss across exec (and vfork shares it), so every tool
#: would seem to need at least what the benchmark process holds. The launcher is small (python -S).
LAUNCHER = """
import os, sys, time
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open(sys.argv[1], "w") as f:
    f.write(f"{wall} {ru.ru_utime + ru.ru_stime} {ru.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
"""


def measured(cmd: list[str], *, cwd: str, timeout: float, stdout: str) -> dict:
    """Run cmd (stdout to a file) under the launcher: wall, CPU (user + sys of it and its children),
    peak RSS of the largest process (ru_maxrss) and summed over its process tree (sampled)."""
    sampling = os.path.isdir("/proc")
    report = stdout + ".rusage"
    with open(stdout, "wb") as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen([sys.executable, "-S", "-c", LAUNCHER, report, *cmd], cwd=cwd, stdout=out,
                             stderr=err, start_new_session=True)
        peak, done, timed_out, samples = [0], threading.Event(), [False], [0]

        def sample():
            while True:
                try:
                    peak[0] = max(peak[0], tree_rss_bytes(p.pid, include_root=False))
                    samples[0] += 1
                except Exception:  # noqa: BLE001 (a vanished process mid-scan)
                    pass
                if done.wait(0.1):
                    return

        def kill():
            timed_out[0] = True
            try:
                os.killpg(p.pid, signal.SIGKILL)  # the group of the launcher started above
            except ProcessLookupError:
                pass

        sampler = threading.Thread(target=sample, daemon=True) if sampling else None
        if sampler:
            sampler.start()
        timer = threading.Timer(timeout, kill)
        timer.start()
        p.wait()
        timer.cancel()
        done.set()
        if sampler:
            sampler.join()
        err.seek(0)
        tail = err.read()[-3000:].decode(errors="replace")
    try:
        wall, cpu, maxrss, rc = Path(report).read_text().split()
        wall, cpu, maxrss, rc = float(wall), float(cpu), int(maxrss), int(rc)
    except (OSError, ValueError):  # killed (timeout) or the launcher failed
        wall, cpu, maxrss, rc = None, None, None, p.returncode
    return {"wall_s": wall, "cpu_s": cpu, "peak_rss_mib": None if maxrss is None else maxrss / 1024,
            # a run shorter than a few samples has no meaningful tree figure
            "tree_rss_mib": peak[0] / 2**20 if sampling and peak[0] and samples[0] >= 3 else None, "rc": rc,
            "timed_out": timed_out[0], "stderr_tail": tail if (rc != 0 or timed_out[0]) else ""}


# --------------------------------------------------------------------------- the tools


def find_tool(name: str) -> str | None:
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else shutil.which(name)


def graphmend_findings(path: str, root: str) -> tuple[int, str] | tuple[None, None]:
    try:
        found = json.loads(Path(path).read_text() or "[]")
    except (OSError, json.JSONDecodeError):
        return None, None
    keys = sorted(f"{os.path.relpath(f['path'], root)}:{f['line']}:{f['column']}:{f['code']}" for f in found)
    return len(found), hashlib.sha1("\n".join(keys).encode()).hexdigest()[:12]


def ruff_findings(path: str) -> int | None:
    try:
        return len(json.loads(Path(path).read_text() or "[]"))
    except (OSError, json.JSONDecodeError):
        return None


def torchfix_findings(path: str) -> int | None:
    try:
        return sum(1 for ln in Path(path).read_text(errors="replace").splitlines()
                   if re.search(r":\d+:\d+: TOR\d+", ln))
    except OSError:
        return None


# --------------------------------------------------------------------------- the benchmark


def default_tree() -> str:
    import importlib.util
    spec = importlib.util.find_spec("transformers")  # not imported: that takes seconds
    if spec is None or not spec.submodule_search_locations:
        sys.exit("transformers is not installed: pass a PATH")
    return str(Path(list(spec.submodule_search_locations)[0]) / "models")


def copy_tree(src: Path, dst: Path, dirs: list[str] | None) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    if not dirs:
        shutil.copytree(src, dst, ignore=ignore)
        return
    dst.mkdir(parents=True)
    for name in ("__init__.py",):
        if (src / name).exists():
            shutil.copy(src / name, dst / name)
    for d in dirs:
        if not (src / d).is_dir():
            sys.exit(f"no directory {d} in {src}")
        shutil.copytree(src / d, dst / d, ignore=ignore)


def pick_changed(tree: Path, wanted: str | None) -> Path:
    if wanted:
        p = tree / wanted
        if not p.is_file():
            sys.exit(f"--changed-file {wanted}: not a file under the tree")
        return p
    for cand in ("t5/modeling_t5.py", "bert/modeling_bert.py"):
        if (tree / cand).is_file():
            return tree / cand
    files = sorted(tree.rglob("modeling_*.py")) or sorted(tree.rglob("*.py"))
    return files[0]


def summarize(runs: list[dict], files: int, lines: int) -> dict:
    ok = [r for r in runs if not r["timed_out"] and r["wall_s"] is not None]
    if not ok:
        return {"n": len(runs), "timed_out": True, "timeout_s": runs[0].get("timeout_s") if runs else None}
    wall = statistics.median(r["wall_s"] for r in ok)
    tree = [r["tree_rss_mib"] for r in ok if r["tree_rss_mib"] is not None]
    out = {"n": len(ok), "timed_out": False, "wall_s": wall, "walls_s": [r["wall_s"] for r in ok],
           "cpu_s": statistics.median(r["cpu_s"] for r in ok), "files_per_s": files / wall,
           "klines_per_s": lines / wall / 1000, "peak_rss_mib": max(r["peak_rss_mib"] for r in ok),
           "tree_rss_mib": max(tree) if tree else None, "rcs": sorted({r["rc"] for r in ok}),
           "findings": ok[-1].get("findings")}
    if any("findings_equal_cold" in r for r in ok):
        out["findings_equal_cold"] = all(r.get("findings_equal_cold") for r in ok)
    return out


def run(args) -> dict:
    src = Path(args.path or default_tree()).resolve()
    dirs = [d.strip() for d in args.dirs.split(",") if d.strip()] if args.dirs else None
    jobs = args.jobs or os.cpu_count() or 1
    tools = {"graphmend": [sys.executable, "-m", "graphmend"]}
    ruff, torchfix = find_tool("ruff"), find_tool("torchfix")
    versions = {"graphmend": tool_version("graphmend"),  # at the start: a commit may land during the run
                "ruff": tool_version("ruff", ruff) if ruff else None,
                "torchfix": tool_version("torchfix", torchfix) if torchfix else None}
    work = Path(tempfile.mkdtemp(prefix="graphmend-scale-"))
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    try:
        tree = work / src.name
        t0 = time.perf_counter()
        copy_tree(src, tree, dirs)
        log(f"copied {src} -> {tree} in {time.perf_counter() - t0:.1f} s")
        files = sorted(tree.rglob("*.py"))
        t0 = time.perf_counter()
        texts = [f.read_text(encoding="utf-8", errors="replace") for f in files]
        read_s = time.perf_counter() - t0
        lines = sum(t.count("\n") for t in texts)
        gc.disable()
        t0 = time.perf_counter()
        for t in texts:
            try:
                ast.parse(t)
            except SyntaxError:
                pass
        parse_s = time.perf_counter() - t0
        gc.enable()
        del texts
        changed = pick_changed(tree, args.changed_file)
        out_dir = work / "out"
        out_dir.mkdir()
        runs: dict[str, dict[str, list]] = {"graphmend": {m: [] for m in MODES}}
        if ruff:
            runs["ruff"] = {m: [] for m in MODES}
        cold_digest = None

        def one(tool: str, mode: str, cmd: list[str], rnd: int, timeout: float) -> dict:
            stdout = str(out_dir / f"{tool}-{mode}-{rnd}.out")
            log(f"[round {rnd + 1}] {tool} {mode} ...")
            r = measured(cmd, cwd=str(work), timeout=timeout, stdout=stdout)
            r["timeout_s"] = timeout
            if tool == "graphmend":
                n, digest = graphmend_findings(stdout, str(tree))
                r["findings"] = n
                nonlocal cold_digest
                if mode == "no_cache" and cold_digest is None:
                    cold_digest = digest
                r["findings_digest"] = digest
                r["findings_equal_cold"] = digest is not None and digest == cold_digest
            elif tool == "ruff":
                r["findings"] = ruff_findings(stdout)
            else:
                r["findings"] = torchfix_findings(stdout)
            log(f"    {_n(r['wall_s'], 2)} s, cpu {_n(r['cpu_s'])} s, peak {_n(r['peak_rss_mib'], 0)} / "
                f"{_n(r['tree_rss_mib'], 0)} MiB, rc {r['rc']}, findings {r['findings']}"
                + (" TIMED OUT" if r["timed_out"] else ""))
            if r["rc"] not in (0, 1) and not r["timed_out"]:
                log(r["stderr_tail"])
            return r

        gm = tools["graphmend"] + ["check", "--jobs", str(jobs), "--exit-zero", "--format", "json"]
        rf = [ruff, "check", "--isolated", "--exit-zero", "--output-format", "json"] if ruff else None
        for rnd in range(args.repeat):
            gm_cache, rf_cache = work / f"gm-cache-{rnd}", work / f"ruff-cache-{rnd}"
            plan = [("graphmend", "no_cache", gm + ["--no-cache", str(tree)]),
                    ("ruff", "no_cache", rf and rf + ["--no-cache", str(tree)]),
                    ("graphmend", "cold", gm + ["--cache-dir", str(gm_cache), str(tree)]),
                    ("ruff", "cold", rf and rf + ["--cache-dir", str(rf_cache), str(tree)]),
                    ("graphmend", "warm", gm + ["--cache-dir", str(gm_cache), str(tree)]),
                    ("ruff", "warm", rf and rf + ["--cache-dir", str(rf_cache), str(tree)]),
                    ("change", None, None),
                    ("graphmend", "changed", gm + ["--cache-dir", str(gm_cache), str(tree)]),
                    ("ruff", "changed", rf and rf + ["--cache-dir", str(rf_cache), str(tree)])]
            for tool, mode, cmd in plan:
                if tool == "change":  # a new comment each round: the file's size and mtime change
                    with open(changed, "a", encoding="utf-8") as f:
                        f.write(f"\n# graphmend benchmark: edit {rnd + 1}\n")
                    continue
                if cmd:
                    runs[tool][mode].append(one(tool, mode, cmd, rnd, args.timeout))
            size = sum(f.stat().st_size for f in gm_cache.rglob("*") if f.is_file())
            runs["graphmend"].setdefault("cache_mib", []).append(size / 2**20)
        torchfix_status = "skipped (--skip-torchfix)" if args.skip_torchfix else \
            "not installed (pip install torchfix)" if not torchfix else "measured"
        if torchfix_status == "measured":
            runs["torchfix"] = {"once": [one("torchfix", "once", [torchfix, "-j", str(jobs), str(tree)], 0,
                                             args.torchfix_timeout)]}
    finally:
        shutil.rmtree(work, ignore_errors=True)

    summary = {tool: {mode: summarize(rs, len(files), lines) for mode, rs in modes.items()
                      if mode != "cache_mib" and rs} for tool, modes in runs.items()}
    if runs["graphmend"].get("cache_mib"):
        summary["graphmend"]["cache_mib"] = max(runs["graphmend"]["cache_mib"])
    return {
        "part": "scale",
        "tree": {"source": str(src), "dirs": dirs, "files": len(files), "lines": lines,
                 "changed_file": str(changed.relative_to(tree))},
        "jobs": jobs, "cores": os.cpu_count(), "repeat": args.repeat,
        "versions": versions,
        "commands": {"graphmend": "graphmend check --jobs J --exit-zero --format json "
                                  "[--no-cache | --cache-dir D] TREE",
                     "ruff": "ruff check --isolated --exit-zero --output-format json [--no-cache | --cache-dir D] TREE"
                     if ruff else "not installed (pip install ruff)",
                     "torchfix": f"torchfix -j J TREE (timeout {args.torchfix_timeout:.0f} s)"
                     if torchfix_status == "measured" else torchfix_status},
        "floor": {"read_s": read_s, "ast_parse_s": parse_s},
        "summary": summary,
        "runs": runs,
        "environment": environment(),
    }


# --------------------------------------------------------------------------- tables


def _n(x, d=1) -> str:
    return "-" if x is None else f"{x:,.{d}f}"


def markdown(data: dict) -> str:
    t, s = data["tree"], data["summary"]
    gm_cold = s["graphmend"].get("no_cache", {}).get("wall_s")
    tree = t["source"].replace(str(Path.home()), "~")
    what = f"`{Path(t['source']).name}/` ({', '.join(t['dirs'])})" if t["dirs"] else f"`{Path(t['source']).name}/`"
    out = [f"Tree: a copy of {what}: {t['files']:,} files, {t['lines']:,} lines; {data['jobs']} jobs on "
           f"{data['cores']} cores; wall and CPU are medians of {data['repeat']} round(s); one changed file: "
           f"`{t['changed_file']}` (a comment appended).", "",
           "| tool | run | wall s | files/s | k lines/s | CPU s | peak RSS MiB (largest process / tree) "
           "| findings | wall vs graphmend no cache |",
           "|---|---|---|---|---|---|---|---|---|"]
    versions = data["versions"]
    for tool in ("graphmend", "ruff", "torchfix"):
        label = f"{tool} {versions.get(tool) or ''}".strip()
        if tool not in s:
            why = data["commands"].get(tool, "not run")
            out.append(f"| {label} | {why} | | | | | | | |")
            continue
        for mode, r in s[tool].items():
            if not isinstance(r, dict):
                continue
            if r.get("timed_out"):
                out.append(f"| {label} | {MODE_LABEL[mode]} | did not finish in {_n(r.get('timeout_s'), 0)} s "
                           f"| | | | | | > {_n((r.get('timeout_s') or 0) / gm_cold, 0) if gm_cold else '-'}x |")
                continue
            finds = "-" if r.get("findings") is None else f"{r['findings']:,}"
            if "findings_equal_cold" in r and mode != "no_cache":
                finds += " (= no cache)" if r["findings_equal_cold"] else " (DIFFERENT from no cache)"
            ratio = f"{r['wall_s'] / gm_cold:.2f}x" if gm_cold else "-"
            out.append(f"| {label} | {MODE_LABEL[mode]} | {_n(r['wall_s'], 2)} | {_n(r['files_per_s'], 0)} "
                       f"| {_n(r['klines_per_s'], 0)} | {_n(r['cpu_s'])} | {_n(r['peak_rss_mib'], 0)} / "
                       f"{_n(r['tree_rss_mib'], 0)} | {finds} | {ratio} |")
    f = data["floor"]
    ratios = []
    g = s["graphmend"]

    def ratio(label: str, a: dict | None, b: dict | None) -> None:
        if a and b and not a.get("timed_out") and not b.get("timed_out") and a.get("wall_s") and b.get("wall_s"):
            cpu = f", {a['cpu_s'] / b['cpu_s']:.1f}x CPU" if b.get("cpu_s") else ""
            ratios.append(f"{label} {a['wall_s'] / b['wall_s']:.1f}x wall{cpu}")
    ratio("torchfix / graphmend (no cache):", s.get("torchfix", {}).get("once"), g.get("no_cache"))
    ratio("graphmend (no cache) / ruff (no cache):", g.get("no_cache"), s.get("ruff", {}).get("no_cache"))
    ratio("graphmend cold / warm:", g.get("cold"), g.get("warm"))
    ratio("graphmend cold / 1 file changed:", g.get("cold"), g.get("changed"))
    rw = s.get("ruff", {}).get("warm")
    targets = []  # issue 15

    def target(label: str, value, limit: float, unit: str = "x") -> None:
        if value is not None:
            targets.append(f"{label} {value:.2f}{unit} (target <= {limit:g}{unit}{'' if value <= limit else ', missed'})")
    for mode, limit in (("warm", 1.5), ("changed", 2.0)):
        a = g.get(mode)
        if a and rw and a.get("wall_s") and rw.get("wall_s"):
            target(f"graphmend {MODE_LABEL[mode]} / ruff warm:", a["wall_s"] / rw["wall_s"], limit)
    if g.get("no_cache") and g["no_cache"].get("wall_s"):
        target("graphmend without a cache:", g["no_cache"]["wall_s"], 15.0, " s")
    if g.get("warm") and g["warm"].get("peak_rss_mib"):
        target("graphmend warm, peak RSS:", g["warm"]["peak_rss_mib"], 200.0, " MiB")
    tf = s.get("torchfix", {}).get("once")
    if tf and tf.get("timed_out") and g.get("no_cache"):
        more = tf["timeout_s"] / g["no_cache"]["wall_s"]
        ratios.append(f"torchfix / graphmend (no cache): more than {more:.0f}x wall "
                      f"(torchfix did not finish in {tf['timeout_s']:.0f} s)")
    if ratios:
        out += ["", "Ratios of medians, same run: " + "; ".join(ratios) + "."]
    if targets:
        out += ["", "Targets: " + "; ".join(targets) + "."]
    out += ["", f"Floors in the same run, one core: reading every file {_n(f['read_s'], 2)} s; `ast.parse` of "
                f"every file {_n(f['ast_parse_s'], 1)} s."]
    if s["graphmend"].get("cache_mib") is not None:
        out.append(f"graphmend's cache for this tree: {_n(s['graphmend']['cache_mib'], 1)} MiB.")
    out += ["", "Commands: " + "; ".join(f"`{c}`" for c in data["commands"].values() if "TREE" in c)
            + f". Tree source: `{tree}`."]
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", nargs="?", help="the tree (default: the installed transformers models/)")
    ap.add_argument("--dirs", help="only these subdirectories of the tree (comma list)")
    ap.add_argument("--jobs", type=int, default=0, help="graphmend/torchfix jobs (default: the CPU count)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds of graphmend and ruff runs (default 3)")
    ap.add_argument("--changed-file", help="the file to change, relative to the tree (default: t5/modeling_t5.py)")
    ap.add_argument("--skip-torchfix", action="store_true")
    ap.add_argument("--torchfix-timeout", type=float, default=1200.0, help="seconds (default 1200)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per graphmend/ruff run (default 900)")
    ap.add_argument("--quick", action="store_true",
                    help=f"--dirs {QUICK_DIRS} (unless given) --repeat 1 --skip-torchfix")
    ap.add_argument("--json", metavar="PATH", help="write the figures (and every run) as JSON")
    ap.add_argument("--markdown", action="store_true", help="print the markdown table (default: text summary)")
    args = ap.parse_args(argv)
    if args.quick:
        args.dirs = args.dirs or (None if args.path else QUICK_DIRS)
        args.repeat, args.skip_torchfix = 1, True
    t0 = time.perf_counter()
    data = run(args)
    data["elapsed_s"] = time.perf_counter() - t0
    print(markdown(data))
    print(f"({data['elapsed_s']:.0f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=1, default=str))
    bad = [f"{tool} {mode}" for tool, modes in data["runs"].items() for mode, rs in modes.items()
           if mode != "cache_mib" for r in rs
           if not r["timed_out"] and r["rc"] not in (0, 1) or (tool == "graphmend" and r["rc"] != 0)]
    if bad or any(r.get("findings_equal_cold") is False for r in data["summary"]["graphmend"].values()
                  if isinstance(r, dict)):
        print("failed: " + ", ".join(bad or ["graphmend's findings changed with the cache"]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
