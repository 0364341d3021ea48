"""Editor latency: the language-server benchmark (benchmarks/lsp.py, the real `graphmend serve` over
stdio) on transformers' modeling_t5.py, modeling_longformer.py and modeling_utils.py, with the
floors measured in the same run: `ast.parse` and libcst's `parse_module` of the same file.

    python benchmarks/editor.py [--files A.py ...] [--edits 50] [--debounce 150] [--floor-runs 5]
                                [--quick] [--json OUT] [--markdown]

Per file, in turn: the floors (median of `--floor-runs` (7) parses in this process, after one warm-up;
and of as many fresh benchmarks/parse_server.py processes, didOpen -> diagnostics: a server that
only parses), then a fresh server measured by benchmarks/lsp.py (open -> diagnostics, edit -> diagnostics
p50/p95 over `--edits` edits, code action and resolve latency, fix-all, hover, the server's peak
RSS). `--quick`: modeling_t5.py only, 6 edits, 3 floor runs. Exit status: 0 every file measured,
1 a file's measurement failed (the others are still reported).
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import gc
import json
import statistics
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import lsp  # noqa: E402  (benchmarks/lsp.py)
from suite import environment  # noqa: E402


def default_files() -> list[str]:
    t5, longformer = lsp.default_files()
    return [t5, longformer, str(Path(t5).parents[2] / "modeling_utils.py")]


def timed_median(fn, text: str, runs: int) -> dict:
    fn(text)  # warm-up (imports, caches)
    ms = []
    for _ in range(runs):
        gc.collect()
        gc.disable()
        t0 = time.perf_counter()
        fn(text)
        ms.append((time.perf_counter() - t0) * 1000)
        gc.enable()
    return {"median": statistics.median(ms), "runs": ms}


def floors(path: Path, runs: int) -> dict:
    import libcst
    text = path.read_text(encoding="utf-8")
    return {"ast_parse_ms": timed_median(ast.parse, text, runs),
            "libcst_parse_ms": timed_median(libcst.parse_module, text, runs)}


async def protocol_floor(path: Path, runs: int, timeout: float) -> dict:
    """didOpen -> diagnostics of benchmarks/parse_server.py (a pygls server that only `ast.parse`s
    the text and publishes nothing), each in a fresh process as the didOpen rows are: what a
    server cannot go below for a text it never analysed (the message, a first parse in a new
    process, a publish). Median of `runs`."""
    text = path.read_text(encoding="utf-8") + "\n# a file no session opened\n"
    ms = []
    for _ in range(runs):
        s = lsp.Session([sys.executable, str(HERE / "parse_server.py")], 150, timeout)
        try:
            ms.append(await lsp.open_only(s, None, path, text, kept=False))
        finally:
            await s.stop()
    return {"median": statistics.median(ms), "runs": ms}


# issue 15: edit -> diagnostics p95 after the debounce, ms; didOpen -> diagnostics / the ast.parse floor
AFTER_DEBOUNCE_P95 = {"modeling_t5.py": 50.0, "modeling_longformer.py": 50.0, "modeling_utils.py": 80.0}
OPEN_OVER_PARSE = 2.0


def in_process(path: Path, edits: int) -> dict:
    """The server's check of each edit (the same sites as benchmarks/lsp.py: a character typed,
    then deleted), called in this process from the check of the version before it, as the
    server does: how many took the incremental path, and their time next to a full check's."""
    sys.path.insert(0, str(HERE.parent / "server"))
    from graphmend.analysis.workspace import Workspace
    from graphmend.config import Settings
    from graphmend.lsp.checker import check

    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    ws, settings = Workspace(), Settings()
    prev = check(text, str(path), 1, settings, ws, {})
    sites = lsp.edit_sites(text, [])
    inc, full, n_inc = [], [], 0
    for i in range(edits):
        _, ln, c = sites[(i // 2) % len(sites)]
        new = lines[:ln] + [lines[ln][:c] + "x" + lines[ln][c:]] + lines[ln + 1:] if i % 2 == 0 else lines
        t = "\n".join(new)
        gc.disable()
        t0 = time.perf_counter()
        got = check(t, str(path), i + 2, settings, ws, {}, prev)
        t1 = time.perf_counter()
        check(t, str(path), i + 2, settings, ws, {})  # the full check of the same text
        t2 = time.perf_counter()
        gc.enable()
        n_inc += got.rewalked is not None
        inc.append((t1 - t0) * 1000)
        full.append((t2 - t1) * 1000)
        prev.release(got)
        prev = got
    return {"edits": edits, "incremental": n_inc, "check_ms": lsp.stats(inc), "full_check_ms": lsp.stats(full)}


def measure_file(path: str, args) -> dict:
    src = Path(path).resolve()
    text = src.read_text(encoding="utf-8")
    out: dict = {"path": str(src), "lines": text.count("\n"), "bytes": len(text.encode())}
    print(f"[{src.name}] floors ...", file=sys.stderr, flush=True)
    out["floors"] = floors(src, args.floor_runs)
    out["floors"]["parse_server_ms"] = asyncio.run(protocol_floor(src, args.floor_runs, args.timeout))
    print(f"[{src.name}] in-process checks ...", file=sys.stderr, flush=True)
    out["in_process"] = in_process(src, args.edits)
    print(f"[{src.name}] server ...", file=sys.stderr, flush=True)
    ns = argparse.Namespace(files=[str(src)], edits=args.edits, debounce=args.debounce, root=False,
                            server=args.server, timeout=args.timeout)
    try:
        out["lsp"] = asyncio.run(lsp.run(ns))[src.name]
        out["lsp"].pop("edit_samples", None) if not args.samples else None
        out["error"] = None
    except lsp.BenchError as e:
        out["lsp"], out["error"] = None, f"{type(e).__name__}: {e}"
    except Exception:  # noqa: BLE001 (an error response, a malformed reply: report, go on)
        out["lsp"], out["error"] = None, traceback.format_exc()[-3000:]
    return out


# --------------------------------------------------------------------------- tables


def _ms(x) -> str:
    return "-" if x is None else f"{x:.1f}" if x < 10 else f"{x:.0f}"


def _dist(d: dict | None) -> str:
    if not d or not d.get("n"):
        return "- (n = 0)"
    return f"{_ms(d['p50'])} / {_ms(d['p95'])} (n = {d['n']})"


def markdown(data: dict) -> str:
    files = data["files"]
    deb, targets = data["debounce_ms"], data["targets_ms"]
    cols = [f"`{name}` ({f['lines']:,} lines)" for name, f in files.items()]
    rows = [["", *cols, "target"], ["---"] * (len(cols) + 2)]

    def row(label: str, fn, target: str = "") -> None:
        cells = []
        for f in files.values():
            if f["lsp"] is None and not label.startswith("floor"):
                cells.append("failed")
                continue
            try:
                cells.append(fn(f))
            except (KeyError, TypeError, ZeroDivisionError):
                cells.append("-")
        rows.append([label, *cells, target])

    n_floor = data["floor_runs"]
    row(f"floor: `ast.parse`, ms (median of {n_floor})", lambda f: _ms(f["floors"]["ast_parse_ms"]["median"]))
    row(f"floor: libcst `parse_module`, ms (median of {n_floor})",
        lambda f: _ms(f["floors"]["libcst_parse_ms"]["median"]))
    row(f"floor: a server that only parses, didOpen -> diagnostics, ms (median of {n_floor} fresh servers)",
        lambda f: _ms(f["floors"]["parse_server_ms"]["median"]))
    row("  / `ast.parse` floor", lambda f: f"{f['floors']['parse_server_ms']['median'] / f['floors']['ast_parse_ms']['median']:.1f}x")
    row("spawn -> initialize result, ms", lambda f: _ms(f["lsp"]["spawn_to_initialize_ms"]))
    for label, key in (("didOpen -> diagnostics, ms, a file no session opened: empty user cache (diagnostics)",
                        "open_empty_cache_ms"),
                       ("didOpen -> diagnostics, ms, changed since a session opened it: imports indexed (diagnostics)",
                        "open_indexed_imports_ms"),
                       ("didOpen -> diagnostics, ms, the same file again: its diagnostics kept (diagnostics)",
                        "open_to_diagnostics_ms")):
        row(label, lambda f, key=key: f"{_ms(f['lsp'][key])} ({f['lsp']['diagnostics']})")
        over = lambda f, floor, key=key: f["lsp"][key] / f["floors"][floor]["median"]  # noqa: E731
        row("  / libcst floor", lambda f, over=over: f"{over(f, 'libcst_parse_ms'):.2f}x")
        row(f"  / `ast.parse` floor (target <= {OPEN_OVER_PARSE:.0f}x)",
            lambda f, over=over: f"{over(f, 'ast_parse_ms'):.1f}x"
            + ("" if over(f, "ast_parse_ms") <= OPEN_OVER_PARSE else " (missed)"))
        row("  / the parse-only server's floor", lambda f, over=over: f"{over(f, 'parse_server_ms'):.1f}x")
    row("in process: the server's check of an edit, ms, p50 / p95 (incremental / edits)",
        lambda f: f"{_dist(f['in_process']['check_ms'])} ({f['in_process']['incremental']} / {f['in_process']['edits']})")
    row("in process: a full check of the same text, ms, p50 / p95",
        lambda f: _dist(f["in_process"]["full_check_ms"]))
    row("edit -> diagnostics, ms, p50 / p95", lambda f: _dist(f["lsp"]["edit_ms"]))
    row(f"  after the {deb} ms debounce, p50 / p95", lambda f: _dist(f["lsp"]["after_debounce_ms"]) + (
        "" if f["lsp"]["after_debounce_ms"]["p95"] <= AFTER_DEBOUNCE_P95.get(Path(f["path"]).name, 1e9)
        else " (missed)"),
        "p95 <= " + " / ".join(f"{AFTER_DEBOUNCE_P95.get(n, targets['after_debounce_p95']):.0f}" for n in files))
    row(f"burst of {lsp.BURST} changes: last change -> diagnostics, ms (stale publishes)",
        lambda f: f"{_ms(f['lsp']['burst']['last_change_to_diagnostics_ms'])} ({f['lsp']['burst']['stale_publishes']})",
        "0 stale")
    row("codeAction, ms, p50 / p95", lambda f: _dist(f["lsp"]["code_action_ms"]),
        f"p95 < {targets['code_action_p95']:.0f}")
    row("codeAction/resolve, ms, p50 / p95", lambda f: _dist(f["lsp"]["resolve_ms"]),
        f"p95 < {targets['code_action_p95']:.0f}")
    row("fix-all: list / resolve, ms (text edits)",
        lambda f: f"{_ms(f['lsp']['fix_all']['list_ms'])} / {_ms(f['lsp']['fix_all'].get('resolve_ms'))} "
                  f"({f['lsp']['fix_all'].get('text_edits') or 0})")
    row("hover, ms, p50 / p95", lambda f: _dist(f["lsp"]["hover_ms"]))
    row("server peak RSS (VmHWM), MiB", lambda f: _ms(f["lsp"]["peak_rss_mib"]))
    out = ["| " + " | ".join(r) + " |" for r in rows]
    out += ["", f"A fresh `graphmend serve` per file, over stdio, as a client without pull diagnostics; "
                f"debounceMs {deb}; {data['edits']} edits per file (a character typed, then deleted, at comment, "
                "statement and break-call sites in `forward` methods). The floors are parses of the same file "
                "in the benchmark process, in the same run. n = 0: the file has no diagnostics to act on."]
    for name, f in files.items():
        if f.get("error"):
            first = f["error"].strip().splitlines()[-1][:300]
            out.append(f"\n**{name}: the measurement failed**: {first}")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", nargs="+", help="Python files (default: transformers' t5, longformer, modeling_utils)")
    ap.add_argument("--edits", type=int, default=None, help="edit -> diagnostics samples per file (default 50)")
    ap.add_argument("--debounce", type=int, default=150, help="debounceMs given to the server (default 150)")
    ap.add_argument("--floor-runs", type=int, default=None, help="parses per floor (default 7)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for any one reply (default 60)")
    ap.add_argument("--server", metavar="CMD", help="server command (default: this python -m graphmend serve)")
    ap.add_argument("--samples", action="store_true", help="keep every edit sample in the JSON")
    ap.add_argument("--quick", action="store_true", help="modeling_t5.py only, 6 edits, 3 floor runs")
    ap.add_argument("--json", metavar="PATH", help="write the figures as JSON")
    ap.add_argument("--markdown", action="store_true", help="print the markdown table (the default output)")
    args = ap.parse_args(argv)
    args.files = args.files or (default_files()[:1] if args.quick else default_files())
    args.edits = args.edits or (6 if args.quick else 50)
    args.floor_runs = args.floor_runs or (3 if args.quick else 7)
    t0 = time.perf_counter()
    files = {}
    for f in args.files:
        r = measure_file(f, args)
        files[Path(f).name] = r
        if r["error"]:
            print(f"[{Path(f).name}] failed: {r['error']}", file=sys.stderr)
    data = {"part": "editor", "debounce_ms": args.debounce, "edits": args.edits, "floor_runs": args.floor_runs,
            "targets_ms": lsp.TARGETS, "files": files, "environment": environment(),
            "elapsed_s": time.perf_counter() - t0}
    print(markdown(data))
    print(f"({data['elapsed_s']:.0f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=1, default=str))
    return 1 if any(r["error"] for r in files.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
