"""GraphMend's benchmark suite: run every part's script (or the named parts), print their tables,
and with `--write-docs` rewrite the tables in docs/benchmarks.md.

    python benchmarks/suite.py [--parts models,precision,realcode,editor,scale,speed] [--quick] [--write-docs]
                               [--results DIR] [--from-results DIR] [--docs FILE]
                               [--args PART="..."] [--script PART=PATH] [--timeout PART=S]

Each part is a script in benchmarks/ run in a subprocess with `--json DIR/PART.json` (and `--markdown`);
its output goes to DIR/PART.log, and DIR/suite.json records the machine, the versions, the command
and each part's status. A part whose script is missing, fails or times out is reported as such
(in the printed tables and in the docs), never hidden. `--from-results DIR` re-renders a previous
run without measuring again. In docs/benchmarks.md, each part's table lives between
`<!-- bench:PART:begin -->` and `<!-- bench:PART:end -->`; the header (machine, versions, date,
command) between `<!-- bench:header:begin -->` and `<!-- bench:header:end -->`. Parts not run
keep what the docs had (each part's block names the date and command that produced it).

Exit status: 0 every part ran and passed; 1 some part failed, is missing or timed out; 2 usage.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DOCS = REPO / "docs" / "benchmarks.md"

#: part -> (script, full-run args, --quick args, timeout s, title)
PARTS = {
    "models": ("models.py", ["--markdown", "--models", "all", "--hook", "--coverage", "--no-explain",
                             "--calls", "1", "--timeout", "600", "--jobs", "2"],
               ["--markdown", "--models", "t5"], 7200,
               "Graph breaks eliminated on real models"),
    "shape": ("mend_shape.py", ["--markdown"], ["--markdown", "--quick"], 3600,
              "What a mend does to the file"),
    "precision": ("precision.py", ["--markdown"], ["--markdown", "--quick"], 3600,
                  "Static findings against Dynamo"),
    "editor": ("editor.py", ["--markdown"], ["--markdown", "--quick"], 1200, "Editor latency"),
    "scale": ("scale.py", ["--markdown"], ["--markdown", "--quick"], 3600, "Workspace scale"),
    "realcode": ("realcode.py", ["--markdown"], ["--markdown", "--models", "quick"], 5400,
                 "Real code beyond transformers"),
    "speed": ("verify.py", ["--markdown", "--threads", "1", "--specs", "t5,bart-fp16,phi3,mixtral"], ["--markdown", "--specs", "t5", "--runs", "3",
                                                              "--threads", "1"], 3600,
              "Speed of mended models"),
}


# --------------------------------------------------------------------------- the environment


def _run(cmd: list[str], timeout: float = 20) -> str | None:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def _dist(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def git_commit() -> str | None:
    head = _run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"])
    if head and _run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"]):
        head += "+dirty"
    return head


def tool_version(name: str, exe: str | None = None) -> str | None:
    """graphmend: the package version and the git commit; a tool: its `--version`, else the
    installed distribution's version."""
    if name == "graphmend":
        v = _dist("graphmend") or "?"
        c = git_commit()
        return f"{v} ({c})" if c else v
    if exe:
        out = _run([exe, "--version"])
        if out:
            m = re.search(r"\d+(\.\d+)+\S*", out)
            return m.group(0) if m else out.splitlines()[0]
    return _dist(name)


def cpu_model() -> str:
    try:
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            if ln.startswith("model name"):
                return ln.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def ram_gib() -> float | None:
    try:
        m = re.search(r"MemTotal:\s+(\d+) kB", Path("/proc/meminfo").read_text())
        return int(m.group(1)) / 2**20 if m else None
    except OSError:
        return None


def os_name() -> str:
    try:
        m = re.search(r'^PRETTY_NAME="?([^"\n]*)', Path("/etc/os-release").read_text(), re.M)
        if m:
            return f"{m.group(1)}, Linux {platform.release()}"
    except OSError:
        pass
    return platform.platform()


def environment() -> dict:
    """The machine and the versions (nothing is imported: torch would take seconds)."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cores": os.cpu_count(), "usable_cores": usable, "cpu": cpu_model(), "ram_gib": ram_gib(),
        "load_avg": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "os": os_name(), "python": platform.python_version(),
        "torch": _dist("torch"), "transformers": _dist("transformers"), "libcst": _dist("libcst"),
        "pygls": _dist("pygls"), "graphmend": tool_version("graphmend"),
    }


def env_line(env: dict) -> str:
    ram = f", {env['ram_gib']:.0f} GiB RAM" if env.get("ram_gib") else ""
    return (f"{env['cores']} cores ({env['cpu']}){ram}, {env['os']}; Python {env['python']}, torch {env['torch']}, "
            f"transformers {env['transformers']}, graphmend {env['graphmend']}")


def header_md(env: dict, command: str) -> str:
    ram = f"{env['ram_gib']:.1f} GiB" if env.get("ram_gib") else "?"
    load = ", ".join(f"{x:.2f}" for x in env["load_avg"]) if env.get("load_avg") else "?"
    return "\n".join([
        f"Last run: {env['date']}, `{command}`", "",
        "| machine | |", "|---|---|",
        f"| CPU | {env['cores']} cores ({env.get('usable_cores')} usable), {env['cpu']} |",
        f"| RAM | {ram} |", f"| OS | {env['os']} |",
        f"| load average at start (1/5/15 min) | {load} |",
        f"| Python | {env['python']} |", f"| torch | {env['torch']} |",
        f"| transformers | {env['transformers']} |", f"| libcst | {env['libcst']} |",
        f"| pygls | {env['pygls']} |", f"| graphmend | {env['graphmend']} |",
    ])


# --------------------------------------------------------------------------- rendering each part


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(f"graphmend_bench_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _md_from_log(log: str) -> str | None:
    """The markdown tables a script printed (lines starting with `|`, blocks kept apart)."""
    blocks, cur = [], []
    for ln in log.splitlines():
        if ln.startswith("|"):
            cur.append(ln)
        elif cur:
            blocks.append("\n".join(cur))
            cur = []
    if cur:
        blocks.append("\n".join(cur))
    return "\n\n".join(blocks) or None


def render_models(data: dict, log: str) -> str:
    results = data["results"]
    bench = _load("models", HERE / "models.py")
    out = [bench.format_table(results, markdown=True)]
    if any(r.get("hook") for r in results):
        out += ["", "Import hook (installed transformers mended at import) vs the mended copy:", "",
                bench.format_hook_table(results, markdown=True)]
    tot = data.get("totals") or bench.totals(results)
    out += ["", bench.format_totals(tot)]
    return "\n".join(out)


def render_precision(data: dict, log: str) -> str:
    bench = _load("precision", HERE / "precision.py")
    return bench.format_report(data["rows"], data["totals"], markdown=True)


def render_speed(data: dict, log: str) -> str:
    table = _md_from_log(log)
    if table is None:
        raise ValueError("verify.py printed no markdown table")
    first = next((ln for ln in log.splitlines() if ln.startswith("probe --verify")), None)
    return (first + "\n\n" if first else "") + table


def render_mine(name: str):
    def render(data: dict, log: str) -> str:
        return _load(name, HERE / f"{name}.py").markdown(data)
    return render


RENDER = {"models": render_models, "precision": render_precision, "speed": render_speed,
          "editor": render_mine("editor"), "scale": render_mine("scale"), "realcode": render_mine("realcode")}


def render_part(part: str, st: dict, results: Path) -> str:
    """The markdown block of one part: provenance line, then its tables or why there are none."""
    cmd = st.get("command", "")
    prov = (f"_Measured {st.get('date', '?')} on {env_line(st['environment'])}; `{cmd}` "
            f"({st.get('elapsed_s', 0):.0f} s)._") if st.get("environment") else ""
    status = st["status"]
    log = (results / f"{part}.log").read_text(errors="replace") if (results / f"{part}.log").exists() else ""
    if status == "missing":
        script = os.path.relpath(st.get("script", HERE / PARTS[part][0]), REPO)
        return (f"_Not measured: its script `{script}` does not exist yet "
                f"({st.get('date', '?')}). Run `python benchmarks/suite.py --parts {part}` once it does._")
    body = None
    if (results / f"{part}.json").exists():
        try:
            data = json.loads((results / f"{part}.json").read_text())
            body = RENDER[part](data, log) if part in RENDER else _md_from_log(log)
        except Exception as e:  # noqa: BLE001 (a format this suite does not know yet)
            body = _md_from_log(log)
            st.setdefault("notes", []).append(f"rendering {part}.json failed ({type(e).__name__}: {e}); "
                                              "the script's printed table is used")
    else:
        body = _md_from_log(log) if status == "ok" else None
    lines = [prov] if prov else []
    if status != "ok":
        tail = "\n".join(log.strip().splitlines()[-12:])
        lines += ["", f"**This part did not pass: {st.get('detail', status)}.** Last lines of its output:", "",
                  "```", tail or "(no output)", "```"]
    if body:
        lines += ["", body]
    elif status == "ok":
        lines += ["", "_The script passed but wrote no JSON and printed no table._"]
    for n in st.get("notes", []):
        lines += ["", f"_Note: {n}_"]
    return "\n".join(lines).strip()


def placeholder(part: str) -> str:
    return f"_Not yet measured — run `python benchmarks/suite.py --parts {part} --write-docs`._"


def rewrite_docs(text: str, blocks: dict[str, str]) -> str:
    """Replace what lies between each `<!-- bench:NAME:begin -->` / `end -->` pair with blocks[NAME];
    a pair not in blocks keeps its content, or gets the placeholder when it is empty. Missing markers
    are an error (the docs must have every part's section)."""
    for name in ["header", *PARTS]:
        begin, end = f"<!-- bench:{name}:begin -->", f"<!-- bench:{name}:end -->"
        i, j = text.find(begin), text.find(end)
        if i < 0 or j < i:
            raise ValueError(f"docs: no {begin} ... {end} pair")
        old = text[i + len(begin):j].strip()
        new = blocks.get(name) or old or (placeholder(name) if name != "header" else "_No run yet._")
        text = text[:i + len(begin)] + "\n" + new + "\n" + text[j:]
    return text


# --------------------------------------------------------------------------- running the parts


def _has_coverage(path: Path) -> bool:
    """The models part ran with --coverage (its ORIGINAL results carry executed lines)."""
    try:
        rows = json.loads(path.read_text()).get("results") or []
    except (OSError, ValueError, AttributeError):
        return False
    return any("coverage" in (r.get("original") or {}) for r in rows)


def run_part(part: str, script: Path, extra: list[str], quick: bool, results: Path, timeout: float) -> dict:
    st: dict = {"part": part, "script": str(script), "date": datetime.datetime.now(datetime.timezone.utc)
                .strftime("%Y-%m-%d %H:%M UTC")}
    if not script.exists():
        st.update(status="missing", detail=f"script {script} does not exist")
        return st
    out_json = results / f"{part}.json"
    out_json.unlink(missing_ok=True)
    base = PARTS[part][2] if quick else PARTS[part][1]
    models_json = results / "models.json"
    if part == "precision" and not quick and models_json.exists() and _has_coverage(models_json):
        base = [*base, "--from-json", str(models_json)]  # the models part's own runs: no child again
    cmd = [sys.executable, str(script), *base, *extra, "--json", str(out_json)]
    shown = " ".join(shlex.quote(os.path.relpath(c, REPO) if c.startswith(str(REPO)) else c) for c in
                     ["python", *cmd[1:-2]])
    st["command"] = shown
    st["environment"] = environment()
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONUNBUFFERED="1")
    print(f"== {part}: {shown}", flush=True)
    t0 = time.perf_counter()
    with open(results / f"{part}.log", "wb") as log:
        p = subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            import signal
            os.killpg(p.pid, signal.SIGKILL)  # the part's own process group, started above
            p.wait()
            rc = None
    st["elapsed_s"] = time.perf_counter() - t0
    if rc is None:
        st.update(status="timeout", detail=f"timed out after {timeout:.0f} s")
    elif rc != 0:
        st.update(status="failed", rc=rc, detail=f"exit status {rc}")
    elif not out_json.exists():
        st.update(status="failed", rc=rc, detail="exit status 0 but no JSON written")
    else:
        st.update(status="ok", rc=0)
    print(f"   {st['status']} in {st['elapsed_s']:.0f} s" + (f" ({st['detail']})" if st.get("detail") else ""),
          flush=True)
    return st


def _kv(items: list[str], what: str) -> dict[str, str]:
    out = {}
    for it in items or []:
        k, sep, v = it.partition("=")
        if not sep or k not in PARTS:
            raise SystemExit(f"--{what} {it!r}: want PART=VALUE with PART one of {', '.join(PARTS)}")
        out[k] = v
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default=",".join(PARTS), help=f"comma list (default: all of {','.join(PARTS)})")
    ap.add_argument("--quick", action="store_true", help="each part's small, fast variant")
    ap.add_argument("--write-docs", action="store_true", help="rewrite the tables in the docs file")
    ap.add_argument("--docs", default=str(DOCS), help="the docs file (default docs/benchmarks.md)")
    ap.add_argument("--results", help="where the JSON and logs go (default .bench/results/DATE)")
    ap.add_argument("--from-results", metavar="DIR", help="render a previous run's DIR, measure nothing")
    ap.add_argument("--args", action="append", metavar='PART="ARGS"', help="extra arguments for a part's script")
    ap.add_argument("--script", action="append", metavar="PART=PATH", help="run another script for a part")
    ap.add_argument("--timeout", action="append", metavar="PART=S", help="a part's timeout in seconds")
    args = ap.parse_args(argv)
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        print(f"unknown part(s): {', '.join(unknown)} (known: {', '.join(PARTS)})", file=sys.stderr)
        return 2
    extra = {k: shlex.split(v) for k, v in _kv(args.args, "args").items()}
    scripts = {k: Path(v).resolve() for k, v in _kv(args.script, "script").items()}
    timeouts = {k: float(v) for k, v in _kv(args.timeout, "timeout").items()}
    command = "python benchmarks/suite.py " + " ".join(shlex.quote(a) for a in (argv if argv is not None
                                                                                else sys.argv[1:]))

    if args.from_results:
        results = Path(args.from_results)
        suite = json.loads((results / "suite.json").read_text())
        statuses = {p: suite["parts"][p] for p in parts if p in suite["parts"]}
        env, command = suite["environment"], suite["command"]
    else:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        results = Path(args.results or REPO / ".bench" / "results" / stamp)
        results.mkdir(parents=True, exist_ok=True)
        env = environment()
        print(f"GraphMend benchmark suite: {env_line(env)}\nresults: {results}", flush=True)
        statuses = {}
        for part in parts:
            script = scripts.get(part, HERE / PARTS[part][0])
            statuses[part] = run_part(part, script, extra.get(part, []), args.quick, results,
                                      timeouts.get(part, PARTS[part][3]))
            (results / "suite.json").write_text(json.dumps(
                {"environment": env, "command": command, "parts": statuses}, indent=1, default=str))

    blocks = {}
    for part, st in statuses.items():
        try:
            blocks[part] = render_part(part, st, results)
        except Exception:  # noqa: BLE001 (report, do not hide)
            blocks[part] = f"_Rendering failed:_\n\n```\n{traceback.format_exc()[-2000:]}\n```"
            st["status"] = "failed"
        print(f"\n## {part}: {PARTS[part][4]} [{st['status']}]\n\n{blocks[part]}")
    if not args.from_results:
        (results / "suite.json").write_text(json.dumps(
            {"environment": env, "command": command, "parts": statuses}, indent=1, default=str))

    print("\nsummary: " + ", ".join(f"{p} {st['status']}" for p, st in statuses.items()))
    if args.write_docs:
        docs = Path(args.docs)
        blocks["header"] = header_md(env, command)
        docs.write_text(rewrite_docs(docs.read_text(), blocks))
        print(f"rewrote {docs}")
    return 0 if all(st["status"] == "ok" for st in statuses.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
