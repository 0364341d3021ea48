"""`graphmend probe --verify` figures: original vs mended, each in a fresh child process with its
own compile caches, for small-config transformers models (random weights, eval, no_grad).

    python benchmarks/verify.py [--backend inductor] [--device auto|cpu|cuda] [--runs 20] [--timeout 900] [--specs t5,bart-fp16,phi3]
                                [--unsafe-fixes/--safe-only] [--json FILE] [--markdown]

The mended side installs the mending import hook for the scope "transformers": transformers'
modules are mended in memory as they are imported (no file is written). The entries are the
functions below (`benchmarks.verify:t5`, ...), which build the model and inputs the same way as
`benchmarks/models.py` (benchmarks/_model_child.py: torch.manual_seed(0), small configs; phi3 with
LongRoPE and an input longer than original_max_position_embeddings).

Columns: graphs and breaks of the first call (counting backend around the real backend); compile
time (Dynamo's compilation metrics: entire-frame compile time, backend included); first call;
cold start (first call minus compile time, as the paper defines it); steady-state median over
`--runs` calls; outputs of the first call bitwise equal (else the largest absolute difference);
messages (prints, log records, warnings of the first and second calls, in order) equal.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SPECS = {"t5": "t5", "bart-fp16": "bart_fp16", "phi3": "phi3"}
#: mixture-of-experts rows ([Route], GM601: changes the arithmetic; outputs within tolerance, not
#: bitwise): measured with `--specs mixtral,olmoe`, not in the default list
MOE_SPECS = {"mixtral": "mixtral", "olmoe": "olmoe"}
SPECS.update(MOE_SPECS)
DEFAULT_SPECS = ["t5", "bart-fp16", "phi3"]


# --------------------------------------------------------------------------- probe entries
# (imported in the probe's child, with the user's interpreter; torch only inside them)


def _entry(spec: str):
    from benchmarks._model_child import build_inputs, build_model, parse_spec

    family, dtype = parse_spec(spec)
    config, model = build_model(family, dtype)
    return model, build_inputs(family, config, dtype)


def t5():
    return _entry("t5")


def bart_fp16():
    return _entry("bart-fp16")


def phi3():
    return _entry("phi3")


def mixtral():
    return _entry("mixtral")


def olmoe():
    return _entry("olmoe")


# --------------------------------------------------------------------------- the table


def _f(v, d=3):
    if v is None:
        return "-"
    return f"{v:.{d}f}" if isinstance(v, float) else str(v)


def _yn(v):
    return "yes" if v is True else "no" if v is False else "-"


def row(spec: str, v: dict, wall: float) -> list[str]:
    g, c, f, cs, st = v["graphs"], v["compile_s"], v["first_call_s"], v["cold_start_s"], \
        v["steady_median_ms"]
    from graphmend.probe.verify import outputs_agree
    eq = _yn(v["outputs_equal"])
    if v["outputs_equal"] is False:
        eq = ("within tol" if outputs_agree(v) else "no") + f" (max {_f(v['max_abs_diff'], 6)})"
    return [spec, f"{_f(g[0])} / {_f(g[1])}", f"{_f(v['breaks'][0])} / {_f(v['breaks'][1])}",
            f"{_f(v['recompiles'][0])} / {_f(v['recompiles'][1])}",
            f"{_f(c[0], 2)} / {_f(c[1], 2)}", f"{_f(f[0], 2)} / {_f(f[1], 2)}",
            f"{_f(cs[0], 3)} / {_f(cs[1], 3)}", f"{_f(st[0], 2)} / {_f(st[1], 2)}", eq,
            _yn(v["messages_equal"]), str(v["fixes_applied"]), f"{wall:.0f}",
            ("error: " + (v["error"] or {}).get("message", "")[:120]) if v.get("error") else "ok"]


HEADER = ["model", "graphs b/a", "breaks b/a", "recompiles b/a", "compile s b/a",
          "first call s b/a", "cold start s b/a", "steady median ms b/a", "outputs equal",
          "messages equal", "fixes", "wall s", "status"]


def table(rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        out = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(out)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(HEADER)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths))  # noqa: E731
    return "\n".join([line(HEADER), line(["-" * w for w in widths])] + [line(r) for r in rows])


def _auto_device(python: str) -> str:
    """"cuda" when torch in `python` sees a CUDA GPU, else "cpu"."""
    try:
        out = subprocess.run([python, "-c", "import torch; print(torch.cuda.is_available())"],
                             capture_output=True, text=True, timeout=120).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "cpu"
    return "cuda" if out == "True" else "cpu"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="inductor")
    ap.add_argument("--device", default="auto",
                    help="cpu, cuda, ... (default auto: cuda when the interpreter's torch sees a GPU)")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--timeout", type=float, default=900, help="seconds per child process")
    ap.add_argument("--memory-mb", type=int, default=12288)
    ap.add_argument("--specs", default=",".join(DEFAULT_SPECS))
    ap.add_argument("--safe-only", action="store_true",
                    help="safe fixes only (default: --unsafe-fixes, as benchmarks/models.py)")
    ap.add_argument("--threads", type=int, default=None,
                    help="OMP_NUM_THREADS / torch threads in the children (on a shared machine, 1 "
                         "avoids OpenMP oversubscription stalls; default: torch's own choice)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--json", metavar="FILE", help="write every verify result here")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    sys.path.insert(0, os.path.join(ROOT, "server"))
    from graphmend.probe.verify import outputs_agree, verify

    if args.device == "auto":
        args.device = _auto_device(args.python)
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    if args.threads:
        env["OMP_NUM_THREADS"] = str(args.threads)
    rows, results = [], {}
    for spec in [s.strip() for s in args.specs.split(",") if s.strip()]:
        if spec not in SPECS:
            print(f"unknown spec {spec} (known: {', '.join(SPECS)})", file=sys.stderr)
            return 2
        t0 = time.monotonic()
        v = verify(f"benchmarks.verify:{SPECS[spec]}", python=args.python, cwd=ROOT,
                   device=args.device, backend=args.backend, timeout_s=args.timeout,
                   scope=["transformers"], unsafe=not args.safe_only, runs=args.runs,
                   memory_mb=args.memory_mb,
                   on_stage=lambda s, spec=spec: print(f"[{spec}] {s}", file=sys.stderr, flush=True),
                   extra_env=env)
        wall = time.monotonic() - t0
        results[spec] = v
        rows.append(row(spec, v, wall))
        print(f"[{spec}] done in {wall:.0f} s", file=sys.stderr, flush=True)
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(results, f, indent=1, default=str)
    print(f"probe --verify, {args.backend} backend on {args.device}, scope transformers, "
          f"{'safe' if args.safe_only else 'safe + unsafe'} fixes, steady state over {args.runs} calls"
          + (f", OMP_NUM_THREADS={args.threads}" if args.threads else ""))
    print(table(rows, args.markdown))
    return 0 if all(v.get("ok") and outputs_agree(v) and v.get("messages_equal")
                    for v in results.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
