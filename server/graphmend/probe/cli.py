"""`graphmend probe` and `graphmend import-log` (dispatched here by graphmend.cli).

    graphmend probe [ENTRY] [--json] [--device auto|cpu|cuda] [--backend eager|inductor|aot_eager]
                    [--timeout S] [--memory-mb N] [--output-mb N] [--python PATH] [--verify] [--scope PKG,...]
                    [--unsafe-fixes] [--runs N] [--project DIR]
    graphmend import-log PATH [--json] [--project DIR]

ENTRY ("pkg.module:function") and the other settings default to `[tool.graphmend.probe]` in the
nearest pyproject.toml; flags override. Output is compiler-like (`path:line: dynamo GB0059 reason`).

Exit codes: probe and import-log: 0 no graph breaks, 1 graph breaks, 2 error (the user's code
failed, a timeout, bad arguments). probe --verify: 0 outputs and messages equal, 1 they differ,
2 error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Optional, Sequence

from graphmend.probe.config import DEVICES, ProbeSettings, load_probe_settings


def _write(stream, text: str) -> None:
    try:
        stream.write(text)
    except UnicodeEncodeError:
        enc = getattr(stream, "encoding", None) or "utf-8"
        stream.write(text.encode(enc, "backslashreplace").decode(enc, "replace"))


def _out(text: str = "") -> None:
    _write(sys.stdout, text + "\n")


def _err(text: str) -> None:
    _write(sys.stderr, text + "\n")


def _rel(path: Optional[str]) -> str:
    if not path:
        return "<unknown>"
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _loc(file: Optional[str], line: Optional[int]) -> str:
    return f"{_rel(file)}:{line}" if line else _rel(file)


def break_line(b: dict) -> str:
    gid = b.get("gb_id") or "-"
    text = f"{_loc(b.get('file'), b.get('line'))}: dynamo {gid} {b.get('reason') or ''}".rstrip()
    extra = []
    if b.get("function"):
        extra.append(f"in {b['function']}")
    if (b.get("count") or 1) > 1:
        extra.append(f"x{b['count']}")
    ws = b.get("workspace_frame")
    if not b.get("in_workspace") and ws:
        extra.append(f"via {_loc(ws.get('file'), ws.get('line'))}")
    if b.get("note"):
        extra.append(b["note"])
    return text + (f" [{'; '.join(extra)}]" if extra else "")


def error_lines(err: dict) -> list[str]:
    kind, msg = err.get("kind") or "error", (err.get("message") or "").rstrip()
    where = _loc(err.get("file"), err.get("line")) if err.get("file") else None
    first, *rest = msg.splitlines() or [""]
    lines = [f"{where}: error: {kind}: {first}" if where else f"graphmend: error: {kind}: {first}"]
    lines += [f"    {ln}" for ln in rest]
    return lines


def _fmt(v, digits: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def probe_report(r: dict) -> list[str]:
    lines = [break_line(b) for b in r.get("break_list") or []]
    if r.get("error"):
        lines += error_lines(r["error"])
        return lines
    t = r.get("timings") or {}
    sites = len(r.get("break_list") or [])
    lines.append(
        f"{r.get('graphs')} graph{'s' if r.get('graphs') != 1 else ''}, {r.get('breaks')} "
        f"break{'s' if r.get('breaks') != 1 else ''} ({sites} site{'s' if sites != 1 else ''}), "
        f"{r.get('recompiles')} recompile{'s' if r.get('recompiles') != 1 else ''}: "
        f"{r.get('entry')} on {r.get('device')}, {r.get('backend')} backend, torch {r.get('torch')}")
    timing = (f"compile {_fmt(t.get('compile_s'))} s, first call {_fmt(t.get('first_call_s'))} s, "
              f"cold start {_fmt(t.get('cold_start_s'))} s")
    if t.get("steady_runs"):
        timing += f", steady median {_fmt(t.get('steady_median_ms'))} ms over {t['steady_runs']}"
    lines.append(timing + f" (probe {_fmt(r.get('duration_s'), 1)} s)")
    return lines


def verify_report(v: dict) -> list[str]:
    from graphmend.probe.verify import SAME_KERNELS, outputs_agree
    lines = [f"verify {v.get('entry')}: original vs mended (scope {', '.join(v.get('scope') or [])}"
             f"{', unsafe fixes' if v.get('unsafe') else ''}; {v.get('backend')} backend, "
             f"{v.get('runs')} steady runs)"]
    rows = [("graphs", "graphs", 0), ("breaks", "breaks", 0), ("recompiles", "recompiles", 0),
            ("compile time (s)", "compile_s", 3), ("first call (s)", "first_call_s", 3),
            ("cold start (s)", "cold_start_s", 3), ("steady median (ms)", "steady_median_ms", 3)]
    lines.append(f"  {'':20} {'original':>12} {'mended':>12}")
    for label, key, digits in rows:
        a, b = (v.get(key) or [None, None])[:2]
        lines.append(f"  {label:20} {_fmt(a, digits):>12} {_fmt(b, digits):>12}")
    if v.get("outputs_equal") is True:
        lines.append("  outputs: bitwise equal")
    elif v.get("outputs_equal") is False and outputs_agree(v):
        why = "unsafe fixes change the arithmetic" if v.get("unsafe") and v.get("backend") in SAME_KERNELS \
            else f"{v.get('backend')} fuses the one graph and the split ones differently"
        lines.append(f"  outputs: within the dtype's tolerance, not bitwise (max abs diff "
                     f"{_fmt(v.get('max_abs_diff'), 6)}; {why})")
    elif v.get("outputs_equal") is False:
        lines.append(f"  outputs: DIFFER (max abs diff {_fmt(v.get('max_abs_diff'), 6)})")
        for m in v.get("output_mismatches") or []:
            lines.append(f"    {m.get('name')}: {m.get('why')}")
    else:
        lines.append("  outputs: not compared")
    if v.get("original") and v.get("mended"):
        if v.get("messages_equal"):
            n = len((v["original"] or {}).get("messages") or [])
            lines.append(f"  messages: equal ({n} in the first call)")
        else:
            lines.append("  messages: DIFFER")
            lines += [f"    {d}" for d in (v.get("messages_diff") or [])[:40]]
    mods = v.get("mended_modules") or []
    if mods:
        desc = ", ".join(f"{m.get('module')} ({m.get('applied')}"
                         f"{': ' + ' '.join(sorted(set(m.get('codes') or []))) if m.get('codes') else ''})"
                         + (f" [not mended: {m.get('error')}]" if m.get("error") else "")
                         for m in mods)
        lines.append(f"  mended: {v.get('fixes_applied')} fixes in {len(mods)} modules: {desc}")
    else:
        lines.append("  mended: no module under the scope needed a fix")
    mended = v.get("mended") or {}
    rest = mended.get("break_list") or []
    if rest:
        lines.append("  breaks left after mending:")
        lines += [f"    {break_line(b)}" for b in rest]
    if v.get("error"):
        lines += error_lines(v["error"])
    return lines


def _csv(s: str) -> list[str]:
    return [p.strip() for p in s.split(",") if p.strip()]


def _probe_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="graphmend probe",
        description="Run a probe entry under torch.compile in a child process (the project's "
                    "interpreter) and report what Dynamo really did: graphs, graph breaks with "
                    "their files and lines, recompiles, timings. --verify runs it original and "
                    "mended (in memory) and compares outputs, messages and timings.",
        epilog="Exit codes: 0 no graph breaks (verify: outputs and messages equal), 1 graph "
               "breaks (verify: a difference), 2 error.")
    p.add_argument("entry", nargs="?", metavar="ENTRY",
                   help="module:function returning (model_or_fn, inputs) "
                        "(default: [tool.graphmend.probe] entry)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--device", choices=DEVICES)
    p.add_argument("--backend", help="eager (default), aot_eager, inductor or another backend")
    p.add_argument("--timeout", type=float, metavar="S", help="seconds per child process")
    p.add_argument("--memory-mb", type=int, metavar="N",
                   help="resident memory limit of the probe's processes (0: none)")
    p.add_argument("--output-mb", type=int, metavar="N",
                   help="limit on what the probe writes to stdout and stderr together (0: none)")
    p.add_argument("--python", metavar="PATH", help="the interpreter with torch")
    p.add_argument("--verify", action="store_true", help="original vs mended")
    p.add_argument("--scope", type=_csv, metavar="PKG,...",
                   help="packages to mend for --verify (default: the entry's top-level package)")
    p.add_argument("--unsafe-fixes", dest="unsafe", action="store_true", default=None,
                   help="also apply unsafe fixes in --verify")
    p.add_argument("--runs", type=int, metavar="N",
                   help="steady-state calls after the first (default 0; --verify: 20)")
    p.add_argument("--project", metavar="DIR",
                   help="the project root (default: the directory of the nearest pyproject.toml)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    return p


def _settings(project: Optional[str]) -> tuple[ProbeSettings, list[str]]:
    start = project or "."
    s, errors = load_probe_settings(start)
    if project:
        s.root = os.path.abspath(project)
    return s, errors


def _progress(quiet: bool):
    if quiet or not sys.stderr.isatty():
        return None
    return lambda text: _err(f"graphmend: {text}")


def main_probe(argv: Sequence[str]) -> int:
    parser = _probe_parser()
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    s, errors = _settings(args.project)
    for e in errors:
        _err(f"graphmend: warning: {e} (using the default)")
    entry = args.entry or s.entry
    if not entry:
        _err("graphmend: error: no entry: give ENTRY (module:function) or set `entry` in "
             "[tool.graphmend.probe]")
        return 2
    if ":" not in entry:
        _err(f"graphmend: error: entry `{entry}` must be module:function")
        return 2
    s.entry = entry
    for flag, attr in (("device", "device"), ("backend", "backend"), ("timeout", "timeout"),
                       ("python", "python"), ("unsafe", "unsafe")):
        if getattr(args, flag) is not None:
            setattr(s, attr, getattr(args, flag))
    if args.python:
        s.python = os.path.abspath(args.python) if os.sep in args.python else args.python
    if args.memory_mb is not None:
        s.memory_mb = args.memory_mb or None
    if args.output_mb is not None:
        s.output_mb = args.output_mb or None
    if args.scope is not None:
        s.scope = args.scope
    runs = args.runs if args.runs is not None else (s.runs if s.runs is not None else
                                                    (20 if args.verify else 0))
    if runs < 0 or (args.timeout is not None and args.timeout <= 0):
        _err("graphmend: error: --runs and --timeout must be positive")
        return 2
    root = s.root or os.getcwd()
    progress = _progress(args.quiet or args.json)
    try:
        if args.verify:
            from graphmend.probe.verify import outputs_agree, verify
            scope = s.default_scope()
            v = verify(entry, python=s.interpreter(), cwd=root, device=s.device,
                       backend=s.backend, timeout_s=s.timeout, scope=scope, unsafe=s.unsafe,
                       runs=runs, on_stage=progress, memory_mb=s.memory_mb,
                       output_mb=s.output_mb)
            if args.json:
                _out(json.dumps(v, indent=2, default=str))
            else:
                for ln in verify_report(v):
                    _out(ln)
            if v.get("error"):
                return 2
            return 0 if outputs_agree(v) and v.get("messages_equal") else 1
        from graphmend.probe.runner import run_probe
        r = run_probe(entry, python=s.interpreter(), cwd=root, device=s.device,
                      backend=s.backend, timeout_s=s.timeout, memory_mb=s.memory_mb, runs=runs,
                      on_stage=progress, output_mb=s.output_mb)
    except KeyboardInterrupt:
        _err("graphmend: interrupted")
        return 130
    if args.json:
        _out(json.dumps(r, indent=2, default=str))
    else:
        for ln in probe_report(r):
            _out(ln)
    if r.get("error"):
        return 2
    return 1 if (r.get("break_list") or r.get("breaks")) else 0


def main_import_log(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(
        prog="graphmend import-log",
        description="Show Dynamo's graph breaks from a log you already have (nothing is run): a "
                    "TORCH_LOGS=graph_breaks log file or a TORCH_TRACE directory.",
        epilog="Exit codes: 0 no graph breaks, 1 graph breaks, 2 error.")
    p.add_argument("path", metavar="PATH", help="the log file or TORCH_TRACE directory")
    p.add_argument("--json", action="store_true", help="print the records as JSON")
    p.add_argument("--project", metavar="DIR",
                   help="the workspace root (which files are yours; default: the current directory)")
    try:
        args = p.parse_args(list(argv))
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    from graphmend.probe.logs import read_log
    r = read_log(args.path, workspace=os.path.abspath(args.project or os.getcwd()))
    if args.json:
        _out(json.dumps(r, indent=2, default=str))
    else:
        for b in r.get("break_list") or []:
            _out(break_line(b))
        if r.get("error"):
            for ln in error_lines(r["error"]):
                _err(ln)
        else:
            sites = len(r["break_list"])
            extra = []
            if r.get("graphs") is not None:
                extra.append(f"{r['graphs']} graphs")
            if r.get("recompiles") is not None:
                extra.append(f"{r['recompiles']} recompiles")
            _out(f"{r['breaks']} graph break{'s' if r['breaks'] != 1 else ''} at {sites} "
                 f"site{'s' if sites != 1 else ''}" + (f", {', '.join(extra)}" if extra else "")
                 + f" ({'TORCH_TRACE' if r['kind'] == 'torch_trace' else 'TORCH_LOGS'} "
                 f"{_rel(r['source'])})")
            if r.get("note"):
                _out(f"note: {r['note']}")
    if r.get("error"):
        return 2
    return 1 if r.get("break_list") else 0
