"""Count the FX graphs torch.compile makes of a file's entry, before and after `graphmend fix`.

    python scripts/count_graphs.py examples/tiny_model.py [--entry probe] [--backend eager]

The entry returns (callable or nn.Module, example inputs). The mended code is produced in
memory (no file is written) and both versions run in this process: eager outputs, compiled
outputs, graph counts, and the messages (stdout, log records, warnings) are compared.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import logging
import sys
import tempfile
import warnings
from pathlib import Path

import torch

from graphmend.rewrite import fix_source


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


class Recorder(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages = []

    def emit(self, record):
        if not record.name.startswith(("torch", "filelock")):
            self.messages.append(f"log {record.levelname}: {record.getMessage()}")


def run(mod, entry: str, backend: str, compiled: bool):
    torch._dynamo.reset()
    model, inputs = getattr(mod, entry)()
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        if backend == "inductor":
            from torch._inductor.compile_fx import compile_fx
            return compile_fx(gm, example_inputs)
        return gm.forward

    fn = torch.compile(model, backend=counting) if compiled else model
    rec = Recorder()
    logging.getLogger().addHandler(rec)
    out = io.StringIO()
    with warnings.catch_warnings(record=True) as w, contextlib.redirect_stdout(out), torch.no_grad():
        warnings.simplefilter("always")
        result = fn(*inputs)
    logging.getLogger().removeHandler(rec)
    msgs = [f"stdout: {line}" for line in out.getvalue().splitlines()] + rec.messages + [
        f"warning {x.category.__name__}: {x.message}" for x in w if "/torch/" not in x.filename]
    return result, len(graphs), msgs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--entry", default="probe")
    ap.add_argument("--backend", default="eager", choices=["eager", "inductor"])
    args = ap.parse_args(argv)
    logging.getLogger("torch").setLevel(logging.ERROR)  # Dynamo's own break warnings: we count them
    src = Path(args.file).read_text()
    mended = fix_source(src, args.file, runtime="import").text  # in memory: the installed runtime
    with tempfile.TemporaryDirectory() as tmp:
        mp = Path(tmp) / (Path(args.file).stem + "_mended.py")
        mp.write_text(mended)
        orig = load(Path(args.file), "gm_original")
        mend = load(mp, "gm_mended")
        eo, _, eager_msgs = run(orig, args.entry, args.backend, compiled=False)
        co, g_before, msgs_before = run(orig, args.entry, args.backend, compiled=True)
        cm, g_after, msgs_after = run(mend, args.entry, args.backend, compiled=True)
    print(f"FX graphs under torch.compile (backend {args.backend}): "
          f"before {g_before} ({g_before - 1} breaks), after graphmend fix {g_after} ({g_after - 1} breaks)")
    print(f"outputs bitwise equal (eager original vs compiled mended): {torch.equal(eo, cm)}")
    print(f"messages equal (eager original vs compiled mended): {eager_msgs == msgs_after}")
    for m in msgs_after:
        print("   ", m)
    ok = torch.equal(eo, cm) and eager_msgs == msgs_after and g_after < g_before
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
