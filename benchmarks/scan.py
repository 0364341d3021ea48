"""Scan speed: `graphmend check` over a tree (default: the installed transformers `models/`),
with the floors measured in the same run (reading the files, `ast.parse` of every file).

    python benchmarks/scan.py [PATH] [--jobs N] [--repeat 3]

Prints files, lines, wall time (median of the repeats), CPU time, files/s and the peak memory of
the check process and its workers.
"""

from __future__ import annotations

import argparse
import ast
import gc
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path


def default_tree() -> str:
    import importlib.util
    spec = importlib.util.find_spec("transformers")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("transformers is not installed: pass a PATH")
    return str(Path(list(spec.submodule_search_locations)[0]) / "models")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", nargs="?")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    tree = args.path or default_tree()
    files = sorted(str(p) for p in Path(tree).rglob("*.py"))
    texts = [Path(f).read_text(encoding="utf-8", errors="replace") for f in files]
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
    walls, cpus = [], []
    for _ in range(args.repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "graphmend", "check", "--jobs", str(args.jobs),
                            "--exit-zero", "--statistics", "-q", tree], capture_output=True, text=True)
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        if r.returncode not in (0, 1):
            print(r.stderr[-2000:], file=sys.stderr)
            return 1
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    wall = statistics.median(walls)
    print(f"tree: {tree}")
    print(f"files: {len(files)}, lines: {lines}, jobs: {args.jobs}, cores: {os.cpu_count()}")
    print(f"floor: ast.parse of every file, one core: {parse_s:.1f} s")
    print(f"graphmend check: wall {wall:.1f} s (median of {len(walls)}: "
          f"{', '.join(f'{w:.1f}' for w in walls)}), cpu {statistics.median(cpus):.1f} s, "
          f"{len(files) / wall:.0f} files/s, {lines / wall / 1000:.0f}k lines/s, "
          f"peak RSS of one process {peak_mib:.0f} MiB")
    print(r.stdout.strip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
