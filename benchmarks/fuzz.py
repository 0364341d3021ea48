"""Bounded fuzzing of GraphMend's mends and fixes: the property tests, run longer.

    python benchmarks/fuzz.py [--part mends|fix|all] [--budget-seconds N] [--max-examples N]
                              [--inductor N] [--seed N] [--save-failures DIR] [--json FILE]

`--part mends` runs the generated programs of tests/test_mend_properties.py (original vs mended:
outputs, exceptions, stdout/stderr, log records, warnings; eager and torch.compile with the eager
backend, `--inductor N` programs with inductor); `--part fix` runs the inputs of
tests/test_fix_fuzz.py (hypothesmith modules, odd layouts, mutated transformers files) through
`check` and `fix`. Each target gets a share of the time budget and of the example count and runs
in chunks of fresh seeds, without shrinking; every failure is recorded and the run goes on.

Prints, per target and in total: inputs tried, mends checked, mismatches / failing inputs by
kind, crashes, time. `--save-failures DIR` writes each distinct failing case in the format of
tests/regressions/ (mends: DIR/mends/*.py, fix: DIR/fix/*.json), ready to be triaged and kept.
Exit status 1 when anything failed. CI runs the short version as pytest (the "ci" profile);
this is the long one, e.g. `--budget-seconds 1800`.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import logging
import os
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
for p in (REPO / "server", REPO / "tests", REPO / "tests" / "regressions", HERE):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
os.environ.setdefault("GRAPHMEND_FUZZ_PROFILE", "long")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# target -> (module, weight of the time budget)
MENDS = {"where": 3, "trap": 2, "defer": 2, "mixed": 3}
FIX = {"pieces": 3, "mutated": 4, "grammar": 1, "node": 1, "spliced": 1}


def _run_target(mod, name: str, seconds: float, max_examples: int, seed: int, chunk: int) -> dict:
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    strategies, body = mod.FUZZ_TARGETS[name]
    start, done, chunks = time.monotonic(), 0, 0
    before = collections.Counter(mod.STATS)
    crashes = []

    def guarded(args):
        try:
            body(*args)
        except Exception as e:  # noqa: BLE001 - the harness itself failed on this input; go on
            crashes.append(f"{type(e).__name__}: {str(e)[:300]}")

    while done < max_examples and time.monotonic() - start < seconds:
        n = min(chunk, max_examples - done)
        test = settings(max_examples=n, phases=[Phase.generate], deadline=None, database=None,
                        suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)(
            hseed(seed * 1_000_003 + chunks)(given(st.tuples(*strategies()))(guarded)))
        test()
        done += n
        chunks += 1
    stats = collections.Counter(mod.STATS)
    stats.subtract(before)
    return {"target": name, "examples": done, "seconds": round(time.monotonic() - start, 1),
            "stats": {k: v for k, v in stats.items() if v}, "crashes": crashes}


def _save_mends(failures: list, out: Path) -> int:
    from test_regressions_mends import write_case
    (out / "mends").mkdir(parents=True, exist_ok=True)
    seen = set()
    for f in failures:
        key = (f["kind"], f["detail"][:80])
        if key in seen:
            continue
        seen.add(key)
        h = hashlib.sha1((f["src"] + f["detail"]).encode()).hexdigest()[:10]
        write_case(out / "mends" / f"{f['kind']}_{h}.py", f"[{f['kind']}] {f['detail'][:300]}", f["src"],
                   f["inputs"])
    return len(seen)


def _save_fix(failures: list, out: Path) -> int:
    (out / "fix").mkdir(parents=True, exist_ok=True)
    seen = set()
    for f in failures:
        key = f["problems"][0][:80]
        if key in seen:
            continue
        seen.add(key)
        h = hashlib.sha1(f["src"].encode()).hexdigest()[:10]
        (out / "fix" / f"{h}.json").write_text(json.dumps(
            {"origin": f["origin"], "path": Path(f["path"]).name if f["path"] != "<string>" else "<string>",
             "problems": f["problems"], "src": f["src"]}, ensure_ascii=True, indent=1))
    return len(seen)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=["mends", "fix", "all"], default="all")
    ap.add_argument("--budget-seconds", type=float, default=300.0, help="wall time for the whole run")
    ap.add_argument("--max-examples", type=int, default=100_000, help="examples for the whole run")
    ap.add_argument("--inductor", type=int, default=5, help="programs run under inductor (slow: ~5 s each)")
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100_000)
    ap.add_argument("--save-failures", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None, help="write the figures here too")
    args = ap.parse_args(argv)

    warnings.simplefilter("ignore")
    logging.getLogger("torch").setLevel(logging.CRITICAL)  # Dynamo's own logs of a torch error
    plan = []  # (module name, target, weight)
    if args.part in ("mends", "all"):
        plan += [("test_mend_properties", t, w) for t, w in MENDS.items()]
    if args.part in ("fix", "all"):
        plan += [("test_fix_fuzz", t, w) for t, w in FIX.items()]
    total_w = sum(w for _, _, w in plan)
    t0 = time.monotonic()
    results, mods = [], {}
    inductor_s = 0.0
    if args.part in ("mends", "all") and args.inductor:
        inductor_s = min(args.budget_seconds * 0.25, args.inductor * 8.0)
    for modname, target, w in plan:
        mod = mods.setdefault(modname, __import__(modname))
        mod.COLLECT = True
        logging.getLogger("torch").setLevel(logging.CRITICAL)  # after torch set its loggers up
        share = (args.budget_seconds - inductor_s) * w / total_w
        n = max(1, args.max_examples * w // total_w)
        chunk = 25 if modname == "test_mend_properties" else 50  # each chunk starts from a minimal example
        print(f"[fuzz] {target}: up to {n} examples, {share:.0f} s", flush=True)
        r = _run_target(mod, target, share, n, args.seed, chunk)
        results.append(r)
        print(f"[fuzz] {target}: {r['examples']} examples in {r['seconds']} s: {r['stats']}"
              + (f"; {len(r['crashes'])} harness crashes" if r["crashes"] else ""), flush=True)
    if inductor_s:
        mod = mods.setdefault("test_mend_properties", __import__("test_mend_properties"))
        r = _run_target(mod, "inductor", inductor_s, args.inductor, args.seed, args.inductor)
        results.append(r)
        print(f"[fuzz] inductor: {r['examples']} examples in {r['seconds']} s: {r['stats']}", flush=True)
    wall = time.monotonic() - t0

    totals = collections.Counter()
    for r in results:
        totals.update(r["stats"])
    crashes = sum(len(r["crashes"]) for r in results)
    mend_failures = mods["test_mend_properties"].FAILURES if "test_mend_properties" in mods else []
    fix_failures = mods["test_fix_fuzz"].FAILURES if "test_fix_fuzz" in mods else []
    figures = {
        "seed": args.seed, "seconds": round(wall, 1),
        "examples": sum(r["examples"] for r in results),
        "mends": {k: totals[k] for k in ("programs", "inputs", "mends safe", "mends unsafe", "declined",
                                          "compiled runs (eager)", "compiled runs (inductor)",
                                          "graph counts checked", "unsafe differences covered by the reason",
                                          "unsafe differences under compile (recorded)",
                                          "compile differences torch makes on the original too",
                                          "asserts Dynamo compiled into RuntimeError",
                                          "trace errors ahead of a mended check or message (documented)",
                                          "breaks GraphMend does not report (left alone)")},
        "mismatches": {k[len("mismatch "):]: v for k, v in totals.items() if k.startswith("mismatch ")},
        "fix": {k: totals[k] for k in ("inputs", "inputs that parse", "inputs fixed", "fixes applied",
                                        "failing inputs", "inputs too deep for the range checks")},
        "harness crashes": crashes,
        "targets": results,
    }
    # "inputs" is counted by both modules: split it
    figures["fix"]["inputs"] = sum(r["stats"].get("inputs", 0) for r in results if r["target"] in FIX)
    figures["mends"]["inputs"] = sum(r["stats"].get("inputs", 0) for r in results if r["target"] not in FIX)
    print("\n== figures ==")
    print(f"time {figures['seconds']} s, {figures['examples']} examples (seed {args.seed})")
    if args.part in ("mends", "all"):
        m = figures["mends"]
        print(f"mends: {m['programs']} programs, {m['inputs']} inputs, {m['mends safe']} safe and "
              f"{m['mends unsafe']} unsafe mends checked, {m['declined']} declined; "
              f"{m['compiled runs (eager)']} compiled (eager) + {m['compiled runs (inductor)']} (inductor) runs; "
              f"{m['graph counts checked']} graph counts checked")
        print(f"  unsafe differences covered by their reason: {m['unsafe differences covered by the reason']}; "
              f"mismatches: {figures['mismatches'] or 'none'}")
    if args.part in ("fix", "all"):
        f = figures["fix"]
        print(f"fix: {f['inputs']} inputs ({f['inputs that parse']} parse), {f['inputs fixed']} changed by "
              f"{f['fixes applied']} fixes; failing inputs: {f['failing inputs']}")
    print(f"harness crashes: {crashes}")
    if args.save_failures:
        saved = _save_mends(mend_failures, args.save_failures) + _save_fix(fix_failures, args.save_failures)
        print(f"saved {saved} distinct failing cases under {args.save_failures}")
    for r in results:
        for c in r["crashes"][:3]:
            print(f"  crash in {r['target']}: {c}")
    for fl in mend_failures[:10]:
        print(f"  [{fl['kind']}] {fl['detail'][:300]}")
    for fl in fix_failures[:10]:
        print(f"  [fix: {fl['origin'][:80]}] {fl['problems'][:2]}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1, default=str))
    bad = crashes or figures["mismatches"] or figures["fix"]["failing inputs"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
