"""Child of tests/test_importhook.py: import fixture packages, run each one's Net eagerly and
compiled (with a counting backend), and print one JSON line per run:

    python run_pkg.py OUTDIR PKG [PKG ...]

For each package: the number of FX graphs, the messages (print lines, log records with their
line numbers) of the eager and compiled calls, where a raise in `forward` points, and whether
the functions carry mended code. Outputs are saved to OUTDIR/PKG.pt for torch.equal."""

import contextlib
import importlib
import io
import json
import logging
import sys
import traceback

import torch

out_dir, names = sys.argv[1], sys.argv[2:]


class Capture(logging.Handler):
    def __init__(self):
        super().__init__()
        self.events = []

    def emit(self, record):
        self.events.append(["log", record.levelname, record.getMessage(), record.lineno])


cap = Capture()
logging.getLogger().addHandler(cap)


def observe(fn):
    cap.events = []
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        res = fn()
    return res, [["print", line] for line in buf.getvalue().splitlines()] + cap.events


def mended(fn):
    return "graphmend" in fn.__code__.co_names  # the runtime, bound by the mend's import line


results = {}
for name in names:
    pkg = importlib.import_module(name)
    torch.manual_seed(0)
    net = pkg.Net().eval()
    x = torch.randn(2, 4)
    graphs = []

    def backend(gm, example_inputs, graphs=graphs):
        graphs.append(len(gm.graph.nodes))
        return gm.forward

    with torch.no_grad():
        eager, eager_msgs = observe(lambda net=net, x=x: net(x))
        compiled, compiled_msgs = observe(lambda net=net, x=x: torch.compile(net, backend=backend)(x))

    raise_frame = None
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            net(-torch.ones(2, 4))
    except ValueError:
        frames = traceback.extract_tb(sys.exc_info()[2])
        mine = [f for f in frames if f.filename == pkg.model.__file__ and f.name == "forward"]
        raise_frame = [mine[-1].lineno, mine[-1].line] if mine else None

    torch.save({"eager": eager, "compiled": compiled}, f"{out_dir}/{name}.pt")
    results[name] = {
        "graphs": len(graphs), "eager_msgs": eager_msgs, "compiled_msgs": compiled_msgs,
        "raise_frame": raise_frame, "model_file": pkg.model.__file__,
        "forward_mended": mended(pkg.model.Net.forward),
        "scale_mended": mended(pkg.helpers.scale),
        "unused_mended": mended(pkg.helpers.unused),
    }
print(json.dumps(results))
