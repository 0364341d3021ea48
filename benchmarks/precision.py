"""Static findings (``graphmend check``) against what Dynamo really does on small real models.

    python benchmarks/precision.py [--models SPECS] [--quick] [--json out.json] [--markdown]
                                   [--timeout S] [--details]

For each spec (same specs and child as ``benchmarks/models.py``: ``_model_child.py`` builds the model
from a small config with random weights) one ORIGINAL child runs with ``--coverage``:

* Dynamo break sites: every first-call graph break of the counting backend plus every break reason of
  ``torch._dynamo.explain``; a site is the innermost user frame inside transformers (file:line), with
  the rest of its user stack (callers).
* executed lines: ``sys.settrace`` line coverage of one eager forward, restricted to transformers files.
* static findings: ``graphmend check --unsafe-fixes --format json`` on the family's modeling files, the
  shared files ``models.py`` mends, and every file a break site lies in.

recall    = break sites that a finding covers (same file, line within the finding's span) / break sites.
            ``recall (stack)`` also counts a site whose CALLER frame lies in a finding's span (the
            finding is on the call that leads to the break).
precision = findings on executed lines (span intersects the eager coverage) where Dynamo broke (some
            break's user stack has a frame in the span) / findings on executed lines.

Reported apart, outside the precision figure:

* conditional findings whose named condition the run did not meet (a finding that "breaks only
  when hidden_states is float16" in a float32 run, "only when the module is training" in these
  eval runs); one whose site broke anyway counts as usual (and is listed: its condition is wrong);
* findings inside a function Dynamo skipped whole (GB0088, "Skipping the function and falling back
  to eager", read from Dynamo's graph_breaks log): its other breaks cannot show while it runs
  eagerly. A GM501 finding in such a function is confirmed: that skip is what it predicts.

Misses (sites no finding covers) and false alarms (executed findings where Dynamo did not break) are
listed with file:line, code and a reason.
"""

from __future__ import annotations

import argparse
import json
import linecache
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import models as bench  # noqa: E402
from _model_child import expand_specs, parse_spec  # noqa: E402

DEFAULT_MODELS = "breaks,clean"
QUICK_MODELS = "t5,bart-fp16,bert"


def _tf_frames(reason: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in reason.get("user_stack") or [] if str(f.get("short", "")).startswith("transformers/")]


def break_sites(res: dict[str, Any]) -> list[dict[str, Any]]:
    """Deduplicated Dynamo break sites (innermost transformers frame) of one child result."""
    reasons = [("backend", r) for r in res.get("break_reasons") or []]
    reasons += [("explain", r) for r in ((res.get("explain") or {}).get("break_reasons") or [])]
    sites: dict[tuple[str, int], dict[str, Any]] = {}
    for source, r in reasons:
        frames = _tf_frames(r)
        if not frames:
            key = ("<outside transformers>", 0)
            site = sites.setdefault(key, {"file": key[0], "line": 0, "function": "?", "source": "",
                                          "gb": r.get("gb"), "summary": r.get("summary", ""),
                                          "stack": [], "seen_by": set(), "count": 0})
        else:
            inner = frames[-1]
            key = (inner["short"], inner["line"])
            site = sites.setdefault(key, {"file": inner["short"], "line": inner["line"],
                                          "function": inner.get("function"),
                                          "source": inner.get("source", ""), "gb": r.get("gb"),
                                          "summary": r.get("summary", ""), "stack": set(),
                                          "seen_by": set(), "count": 0})
            site["stack"] |= {(f["short"], f["line"]) for f in frames[:-1]}
        site["seen_by"].add(source)
        site["count"] += 1
    out = []
    for s in sites.values():
        s["stack"] = sorted(s["stack"])
        s["seen_by"] = sorted(s["seen_by"])
        out.append(s)
    return sorted(out, key=lambda s: (s["file"], s["line"]))


def _in_span(f: dict[str, Any], file: str, line: int) -> bool:
    return f["file"] == file and f["line"] <= line <= (f.get("end_line") or f["line"])


RUN_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}


def condition_met(cond: dict[str, Any] | None, run_dtype: str, training: bool = False) -> bool | None:
    """Whether the run met a finding's named condition: False when a named part is decided
    against it (the model's dtype, eval mode), None when nothing named is decided."""
    if not cond:
        return None
    dt = RUN_DTYPES.get(run_dtype, run_dtype)
    if cond.get("training") is not None and bool(cond["training"]) != training:
        return False
    if cond.get("dtypes") and dt not in cond["dtypes"]:
        return False
    if cond.get("not_dtypes") and dt in cond["not_dtypes"]:
        return False
    return True if (cond.get("training") is not None or cond.get("dtypes") or cond.get("not_dtypes")) else None


def skipped_functions(res: dict[str, Any]) -> list[tuple[str, int, int, str]]:
    """(file, first line, last line, name) of the functions Dynamo skipped whole.

    Which frame that is: the one Dynamo names ("frame skipped: NAME (FILE line N)", recorded by the
    child as `skipped_frame`) when the log has it; else, for a break inside a for/while loop
    ("graph break in loop ... Skipping the frame", torch 2.13: Dynamo gives up on the frame whose
    loop holds the break, as with grounding-dino's `get_reference_points`), the innermost
    transformers frame of the user stack whose line is inside a loop of its function; else the
    frame it was compiling when it gave up (the first transformers frame of the user stack). A
    record without a user stack (a duplicate) falls back to its site."""
    import ast
    root = Path(res.get("transformers_file", "")).parent.parent
    trees: dict[str, Any] = {}

    def tree_of(short: str):
        if short not in trees:
            try:
                trees[short] = ast.parse((root / short).read_text(encoding="utf-8"))
            except (OSError, SyntaxError, ValueError):
                trees[short] = None
        return trees[short]

    def enclosing(short: str, line: int, *, at_def: bool = False):
        tree = tree_of(short)
        best = None
        for n in ast.walk(tree) if tree is not None else ():
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([n.lineno, *(d.lineno for d in n.decorator_list)])
                if (first <= line <= n.lineno) if at_def else (n.lineno <= line <= n.end_lineno):
                    if best is None or n.lineno > best.lineno:
                        best = n
        return best

    def in_loop(fn, line: int) -> bool:
        return any(isinstance(n, (ast.For, ast.AsyncFor, ast.While)) and n.lineno <= line <= n.end_lineno
                   for n in ast.walk(fn))

    out = []
    for b in res.get("skipped_functions") or []:
        best, short = None, None
        sf = b.get("skipped_frame")
        start = None
        if sf and str(sf.get("short", "")).startswith("transformers/"):
            short = sf["short"]
            if str(sf.get("function", "")).startswith("torch_dynamo_resume_in_"):
                best, start = enclosing(short, sf["line"]), sf["line"]  # the rest of it, from there
            else:
                best = enclosing(short, sf["line"], at_def=True)
        if best is None:
            frames = [f for f in b.get("user_stack") or [] if str(f.get("short", "")).startswith("transformers/")]
            if not frames and str(b.get("site", {}).get("short", "")).startswith("transformers/"):
                frames = [b["site"]]
            if not frames:
                continue
            for f in reversed(frames):
                fn = enclosing(f["short"], f["line"])
                if fn is not None and in_loop(fn, f["line"]):
                    best, short = fn, f["short"]
                    break
            else:
                short = frames[0]["short"]
                best = enclosing(short, frames[0]["line"])
        if best is not None:
            key = (short, start or best.lineno, best.end_lineno, best.name)
            if key not in out:
                out.append(key)
    return out


def evaluate(res: dict[str, Any], findings: list[dict[str, Any]]) -> dict[str, Any]:
    sites = break_sites(res)
    skipped = skipped_functions(res)
    cov = {k: set(v) for k, v in (res.get("coverage") or {}).items()}
    hits, misses = [], []
    for s in sites:
        direct = [f for f in findings if _in_span(f, s["file"], s["line"])]
        via = [] if direct else [f for f in findings for fl in s["stack"] if _in_span(f, fl[0], fl[1])]
        rec = {"file": s["file"], "line": s["line"], "function": s["function"], "source": s["source"],
               "gb": s["gb"], "summary": s["summary"][:160], "count": s["count"], "seen_by": s["seen_by"]}
        if direct:
            hits.append({**rec, "how": "site", "codes": sorted({f["code"] for f in direct})})
        elif via:
            hits.append({**rec, "how": "caller", "codes": sorted({f["code"] for f in via})})
        else:
            files = {f["file"] for f in findings}
            if s["file"] == "<outside transformers>":
                why = "break outside transformers files (no user frame there)"
            elif s["file"] not in files and not any(True for f in findings if f["file"] == s["file"]):
                why = "no finding in this file"
            else:
                why = "no finding spans this line"
            misses.append({**rec, "reason": why})
    executed, confirmed, false_alarms, not_run = [], [], [], 0
    conditional_apart, conditional_broke, masked = [], [], []
    all_frames = [(s["file"], s["line"]) for s in sites] + [fl for s in sites for fl in s["stack"]]
    for f in findings:
        lines = cov.get(f["file"], set())
        span = range(f["line"], (f.get("end_line") or f["line"]) + 1)
        if not any(ln in lines for ln in span):
            not_run += 1
            continue
        broke = any(file == f["file"] and ln in span for file, ln in all_frames)
        brief = {"file": f["file"], "line": f["line"], "code": f["code"], "message": f.get("message")}
        if not broke and condition_met(f.get("condition"), res.get("dtype", "fp32")) is False:
            conditional_apart.append({**brief, "condition": (f.get("condition") or {}).get("text")})
            continue
        if not broke and "value" in ((f.get("condition") or {}).get("kinds") or ()):
            # a value test the run does not report (`len(self.step_t)` is nonzero, `p > 0.0`):
            # apart with its condition, as in benchmarks/realcode.py
            conditional_apart.append({**brief, "condition": (f.get("condition") or {}).get("text"),
                                      "undecided": True})
            continue
        if broke and condition_met(f.get("condition"), res.get("dtype", "fp32")) is False:
            conditional_broke.append({**brief, "condition": (f.get("condition") or {}).get("text")})
        inside = [k for k in skipped if k[0] == f["file"] and k[1] <= f["line"] <= k[2]]
        if inside and f["code"] == "GM501":
            executed.append(f)
            confirmed.append(f)  # Dynamo skipped the function, as the finding predicts
            continue
        if inside and not broke:
            masked.append({**brief, "function": inside[0][3]})
            continue
        executed.append(f)
        if broke:
            confirmed.append(f)
            continue
        src = " ".join(linecache.getline(str(Path(res.get("transformers_file", "")).parent.parent / f["file"]),
                                         ln).strip() for ln in span)[:160]
        if "float16" in src or "finfo" in src:
            why = "dtype-guarded branch: the breaking part runs only in another dtype"
        elif f.get("applicability") == "unsafe" or f.get("fixable") is False:
            why = "executed, Dynamo compiled through it (no break at this site)"
        else:
            why = "executed, no Dynamo break at this site"
        false_alarms.append({"file": f["file"], "line": f["line"], "end_line": f.get("end_line"),
                             "code": f["code"], "rewrite": f.get("rewrite"), "entry": f.get("entry"),
                             "message": f.get("message"), "source": src, "reason": why})
    n_sites = len(sites)
    return {
        "sites": n_sites, "found": len(hits), "found_at_site": sum(1 for h in hits if h["how"] == "site"),
        "recall": round(sum(1 for h in hits if h["how"] == "site") / n_sites, 3) if n_sites else None,
        "recall_stack": round(len(hits) / n_sites, 3) if n_sites else None,
        "findings": len(findings), "findings_executed": len(executed), "findings_not_executed": not_run,
        "confirmed": len(confirmed),
        "precision": round(len(confirmed) / len(executed), 3) if executed else None,
        "hits": hits, "misses": misses, "false_alarms": false_alarms,
        "conditional_not_met": conditional_apart, "conditional_broke": conditional_broke,
        "masked_by_skip": masked, "skipped_functions": [list(k) for k in skipped],
    }


def measure(spec: str, *, root: Path, python: str, timeout: float, log,
            res: dict[str, Any] | None = None) -> dict[str, Any]:
    """One row. ``res``: an ORIGINAL child result already measured with ``--coverage`` (from
    ``models.py --coverage --json``); else a child is run here."""
    family, dtype = parse_spec(spec)
    t0 = time.perf_counter()
    if res is None:
        with tempfile.TemporaryDirectory(prefix="graphmend-precision-") as tmp:
            res = bench.run_child(spec, python=python, timeout=timeout, calls=1, explain=True,
                                  extra_args=["--coverage"], outputs=str(Path(tmp) / "o.pt"))
    if res.get("ok") and "coverage" not in res:
        return {"spec": spec, "family": family, "dtype": dtype, "ok": False,
                "error": "result has no line coverage (run models.py with --coverage)"}
    entry: dict[str, Any] = {"spec": spec, "family": family, "dtype": dtype, "ok": bool(res.get("ok"))}
    if not res.get("ok"):
        entry["error"] = (res.get("error") or "failed").splitlines()[0][:300]
        return entry
    files = bench.default_files(root, family)
    for s in break_sites(res):
        rel = s["file"].removeprefix("transformers/")
        if s["file"].startswith("transformers/") and rel not in files:
            files.append(rel)
    static = bench.static_findings(root, files, python)
    if static.get("error"):
        entry.update(ok=False, error=f"graphmend check: {static['error']}")
        return entry
    entry["graphs"] = res.get("graphs")
    entry["breaks"] = res.get("breaks")
    entry["files_checked"] = files
    entry.update(evaluate(res, static["findings"]))
    entry["seconds"] = round(time.perf_counter() - t0, 1)
    log(f"[{spec}] sites {entry['sites']} found {entry['found_at_site']}, findings executed "
        f"{entry['findings_executed']} confirmed {entry['confirmed']} ({entry['seconds']} s)")
    return entry


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rows if r.get("ok")]
    sites = sum(r["sites"] for r in ok)
    found = sum(r["found_at_site"] for r in ok)
    found_stack = sum(r["found"] for r in ok)
    ex = sum(r["findings_executed"] for r in ok)
    conf = sum(r["confirmed"] for r in ok)
    u_sites = {(m["file"], m["line"]) for r in ok for m in r["hits"] + r["misses"]}
    u_miss = {(m["file"], m["line"]) for r in ok for m in r["misses"]}
    u_fa = {(m["file"], m["line"]) for r in ok for m in r["false_alarms"]}
    apart = sum(len(r.get("conditional_not_met", [])) for r in ok)
    masked = sum(len(r.get("masked_by_skip", [])) for r in ok)
    return {"rows": len(ok), "failed": [r["spec"] for r in rows if not r.get("ok")],
            "conditional_not_met": apart, "masked_by_skip": masked,
            "conditional_broke": sum(len(r.get("conditional_broke", [])) for r in ok),
            "precision_all_executed": round(conf / (ex + apart + masked), 3) if ex + apart + masked else None,
            "sites": sites, "found": found, "found_stack": found_stack,
            "recall": round(found / sites, 3) if sites else None,
            "recall_stack": round(found_stack / sites, 3) if sites else None,
            "findings_executed": ex, "confirmed": conf,
            "precision": round(conf / ex, 3) if ex else None,
            "unique_sites": len(u_sites), "unique_missed": len(u_miss), "unique_false_alarms": len(u_fa)}


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def format_report(rows: list[dict[str, Any]], tot: dict[str, Any], markdown: bool) -> str:
    header = ["model", "dtype", "breaks", "break sites", "found (site/stack)", "recall",
              "findings (executed)", "confirmed", "precision", "misses", "false alarms",
              "conditional, not met", "in skipped functions", "mended but still breaking"]
    table = []
    for r in rows:
        if not r.get("ok"):
            table.append([r["family"], r["dtype"], "ERR", "-", "-", "-", "-", "-", "-",
                          r.get("error", "")[:80], "-", "-", "-", "-"])
            continue
        table.append([r["family"], r["dtype"], str(r["breaks"]), str(r["sites"]),
                      f"{r['found_at_site']}/{r['found']}", _pct(r["recall"]),
                      f"{r['findings']} ({r['findings_executed']})", str(r["confirmed"]),
                      _pct(r["precision"]), str(len(r["misses"])), str(len(r["false_alarms"])),
                      str(len(r.get("conditional_not_met", []))), str(len(r.get("masked_by_skip", []))),
                      str(len(r["still_breaking"])) if "still_breaking" in r else "-"])
    out = [bench._format(header, table, markdown), "",
           f"Total over {tot['rows']} rows: recall {_pct(tot['recall'])} ({tot['found']}/{tot['sites']} break "
           f"sites; {_pct(tot['recall_stack'])} counting caller frames), precision "
           f"{_pct(tot['precision'])} ({tot['confirmed']}/{tot['findings_executed']} executed findings "
           f"where Dynamo broke). Unique sites {tot['unique_sites']}, unique misses "
           f"{tot['unique_missed']}, unique false alarms {tot['unique_false_alarms']}. "
           f"Apart: {tot['conditional_not_met']} conditional findings whose condition the run did not meet, "
           f"{tot['masked_by_skip']} findings in functions Dynamo skipped whole; counting them as executed "
           f"findings, precision {_pct(tot['precision_all_executed'])}; conditional findings that broke "
           f"although their condition was not met: {tot['conditional_broke']}."]
    miss, fa = {}, {}
    for r in rows:
        for m in r.get("misses", []):
            miss.setdefault((m["file"], m["line"]), (m, []))[1].append(r["spec"])
        for f in r.get("false_alarms", []):
            fa.setdefault((f["file"], f["line"], f["code"]), (f, []))[1].append(r["spec"])
    if miss:
        out += ["", "Misses (Dynamo broke, no finding):"]
        for (file, line), (m, specs) in sorted(miss.items()):
            out.append(f"- {file.removeprefix('transformers/')}:{line} {m['gb'] or '-'} "
                       f"{m['summary'][:70]!r} `{m['source'][:60]}` ({m['reason']}; {', '.join(specs)})")
    if fa:
        out += ["", "False alarms (finding executed, Dynamo did not break there):"]
        for (file, line, code), (f, specs) in sorted(fa.items()):
            out.append(f"- {file.removeprefix('transformers/')}:{line} {code} `{f['source'][:60]}` "
                       f"({f['reason']}; {', '.join(specs)})")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=DEFAULT_MODELS,
                    help=f"specs and/or set names as in models.py (default {DEFAULT_MODELS})")
    ap.add_argument("--quick", action="store_true", help=f"only {QUICK_MODELS}")
    ap.add_argument("--json", help="write rows and totals to this file")
    ap.add_argument("--markdown", action="store_true", help="GitHub markdown table")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--timeout", type=float, default=300, help="seconds per child (default 300)")
    ap.add_argument("--from-json", metavar="FILE",
                    help="reuse the ORIGINAL results of `models.py --coverage --json FILE` (no child "
                         "is run; --models filters them)")
    args = ap.parse_args(argv)
    root = bench.transformers_root(args.python)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    t0 = time.perf_counter()
    if args.from_json:
        loaded = json.loads(Path(args.from_json).read_text())["results"]
        given = {r["spec"]: r.get("original") or {} for r in loaded}
        mended_rows = {r["spec"]: r for r in loaded}
        wanted = expand_specs(args.models) if args.models != DEFAULT_MODELS or args.quick else list(given)
        if args.quick:
            wanted = expand_specs(QUICK_MODELS)
        rows = [measure(s, root=root, python=args.python, timeout=args.timeout, log=log, res=given[s])
                for s in wanted if s in given]
        for r in rows:  # models.py's count of breaks on lines the fix wrote (must be 0)
            if "still_breaking" in mended_rows.get(r["spec"], {}):
                r["still_breaking"] = mended_rows[r["spec"]]["still_breaking"]
    else:
        specs = expand_specs(QUICK_MODELS if args.quick else args.models)
        rows = [measure(s, root=root, python=args.python, timeout=args.timeout, log=log) for s in specs]
    tot = totals(rows)
    tot["seconds"] = round(time.perf_counter() - t0, 1)
    print(format_report(rows, tot, args.markdown))
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "totals": tot}, indent=1, default=str))
        log(f"wrote {args.json}")
    return 1 if tot["failed"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
