"""The `graphmend` command line (ruff-like).

    graphmend check [PATH...] [--format text|json|sarif|github] [--statistics] ...
    graphmend fix [PATH...] [--diff] [--unsafe-fixes] ...
    graphmend rules [--format text|json]
    graphmend rule CODE
    graphmend version | --version
    graphmend serve [ARGS...]          (the language server, graphmend.lsp.server)
    graphmend probe ENTRY [...]        (run the entry under Dynamo: graphmend.probe.cli)
    graphmend import-log FILE [...]    (Dynamo's breaks from a TORCH_LOGS log or TORCH_TRACE dir)
    graphmend run [--scope PKG,...] -- COMMAND...   (mend modules as they are imported)

Exit codes: 0 clean, 1 graph breaks reported (or, with `fix --diff`, changes
pending), 2 usage errors or files that could not be read/checked.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Optional, Sequence, TextIO

from graphmend import __version__, output, scan
from graphmend.config import SCOPES, Settings, load_settings, settings_from_dict
from graphmend.findings import CATALOGUE, Finding

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

FORMATS = ("text", "json", "sarif", "github")


class UsageError(Exception):
    """Bad command-line input; reported on stderr with exit code 2."""


# --------------------------------------------------------------------------- output helpers


def _write(stream: TextIO, text: str) -> None:
    if not text:
        return
    try:
        stream.write(text)
    except UnicodeEncodeError:
        enc = getattr(stream, "encoding", None) or "utf-8"
        stream.write(text.encode(enc, "backslashreplace").decode(enc, "replace"))


def _out(text: str) -> None:
    _write(sys.stdout, text if text.endswith("\n") or not text else text + "\n")


def _err(text: str) -> None:
    _write(sys.stderr, text if text.endswith("\n") else text + "\n")


def _error(msg: str) -> None:
    _err(f"graphmend: error: {msg}")


def _warn(msg: str) -> None:
    _err(f"graphmend: warning: {msg}")


# --------------------------------------------------------------------------- argument parsing


def _positive_int(s: str) -> int:
    try:
        n = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {s!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return n


def _csv(s: str) -> list[str]:
    return [p.strip() for p in s.split(",") if p.strip()]


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="files or directories to check (default: .); `-` reads stdin")
    g = p.add_argument_group("rule selection")
    g.add_argument("--select", type=_csv, metavar="CODES",
                   help="comma-separated codes or prefixes to report (replaces the configured list)")
    g.add_argument("--extend-select", type=_csv, metavar="CODES", default=[],
                   help="codes or prefixes to add to the selection")
    g.add_argument("--ignore", type=_csv, metavar="CODES", default=[],
                   help="codes or prefixes not to report (added to the configured list)")
    g.add_argument("--scope", choices=SCOPES,
                   help="which functions are checked: default (torch.compile entries and "
                        "nn.Module.forward, and what they call), compiled (torch.compile entries "
                        "only), module (every function)")
    f = p.add_argument_group("files")
    f.add_argument("--exclude", type=_csv, metavar="PATTERNS",
                   help="names or globs to skip (replaces the configured list)")
    f.add_argument("--extend-exclude", type=_csv, metavar="PATTERNS", default=[],
                   help="names or globs to skip, in addition to the configured ones")
    f.add_argument("--stdin-filename", metavar="PATH",
                   help="the name to report for source read from stdin")
    o = p.add_argument_group("running")
    o.add_argument("--config", metavar="FILE",
                   help="settings file (pyproject.toml with [tool.graphmend], or a graphmend.toml "
                        "with the settings at top level); default: the pyproject.toml nearest "
                        "to the first PATH")
    o.add_argument("-j", "--jobs", type=_positive_int, metavar="N",
                   help="worker processes (default: the number of CPUs)")
    u = o.add_mutually_exclusive_group()
    u.add_argument("--unsafe-fixes", dest="unsafe_fixes", action="store_true", default=None,
                   help="also consider fixes that may change meaning in corner cases")
    u.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_false",
                   help="do not consider unsafe fixes, even if the configuration enables them")
    o.add_argument("--conditional-severity", choices=("error", "warning", "information", "hint"),
                   help="severity of a break that needs a condition the analysis names (a dtype, "
                        "self.training, a config attribute); default information")
    o.add_argument("--show-fixes", action="store_true",
                   help="check: show each finding's fix; fix: list the fixes applied")
    o.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="graphmend",
        description="Find and mend torch.compile graph breaks.",
        epilog="Exit codes: 0 clean, 1 graph breaks found, 2 errors.")
    parser.add_argument("--version", action="version", version=f"graphmend {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help="report graph breaks",
                           description="Report the torch.compile graph breaks in PATHs.")
    _common(check)
    check.add_argument("--format", choices=FORMATS, default="text", help="output format")
    check.add_argument("--statistics", action="store_true",
                       help="show counts per rule instead of each finding")
    check.add_argument("--exit-zero", action="store_true",
                       help="exit 0 even when graph breaks are found (errors still exit 2)")
    check.add_argument("--no-cache", action="store_true",
                       help="neither read nor write the cache of file summaries")
    check.add_argument("--cache-dir", metavar="DIR",
                       help="where the cache lives (default: $GRAPHMEND_CACHE_DIR, `cache-dir` in "
                            "[tool.graphmend], or .graphmend_cache in the current directory)")

    fix = sub.add_parser("fix", help="apply fixes",
                         description="Apply the safe fixes (and, with --unsafe-fixes, the unsafe "
                                     "ones) to PATHs.")
    _common(fix)
    fix.add_argument("--runtime", choices=("vendor", "import", "inline"),
                     help="how mended code reaches graphmend's runtime: vendor (default: write "
                          "_graphmend_runtime.py into the package, one import line per file), import "
                          "(import graphmend.runtime), inline (the runtime in the file)")
    fix.add_argument("--diff", action="store_true",
                     help="print a unified diff of the changes and write nothing "
                          "(exit 1 when there would be changes)")

    rules = sub.add_parser("rules", help="list the rules")
    rules.add_argument("--format", choices=("text", "json"), default="text")

    rule = sub.add_parser("rule", help="explain one rule")
    rule.add_argument("code", metavar="CODE")

    sub.add_parser("version", help="print the version")
    # `serve` is dispatched before parsing (its arguments belong to the server).
    sub.add_parser("serve", help="run the language server (arguments go to the server)",
                   add_help=False)
    for name, what in PASSTHROUGH_HELP.items():
        sub.add_parser(name, help=what, add_help=False)
    return parser


# --------------------------------------------------------------------------- settings


def _norm_selectors(items: Sequence[str]) -> list[str]:
    out = []
    for s in items:
        s = s.strip().upper()
        out.append("GM" if s == "ALL" else s)
    return out


def _unknown_selectors(items: Sequence[str]) -> list[str]:
    return [s for s in items if not any(code.startswith(s) for code in CATALOGUE)]


def _load_config_file(path: str) -> tuple[Settings, list[str]]:
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"--config {path}: no such file")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        return Settings(), [f"{p}: cannot read settings: {e}"]
    if isinstance(data.get("tool"), dict) and "graphmend" in data["tool"]:
        table = data["tool"]["graphmend"]
    elif p.name == "pyproject.toml":
        table = {}
    else:
        table = data
    if not isinstance(table, dict):
        return Settings(), [f"{p}: [tool.graphmend] must be a table"]
    s, errors = settings_from_dict(table)
    s.source = str(p.resolve())
    return s, [f"{p}: {e}" for e in errors]


def resolve_settings(args) -> Settings:
    """Configuration file, then command-line flags. Config problems are warnings."""
    if args.config:
        settings, errors = _load_config_file(args.config)
    else:
        paths = [p for p in args.paths if p != "-"]
        if paths:
            start = paths[0]
        elif args.stdin_filename:
            start = str(Path(args.stdin_filename).parent)
        else:
            start = "."
        settings, errors = load_settings(start)
    for e in errors:
        _warn(f"{e} (using the default)")
    for sel in _unknown_selectors([*settings.select, *settings.ignore]):
        where = settings.source or "configuration"
        _warn(f"{where}: unknown rule selector `{sel}`")

    cli_sel = _norm_selectors(args.select or [])
    cli_ext = _norm_selectors(args.extend_select)
    cli_ign = _norm_selectors(args.ignore)
    bad = _unknown_selectors([*cli_sel, *cli_ext, *cli_ign])
    if bad:
        raise UsageError(f"unknown rule selector{'s' if len(bad) > 1 else ''}: {', '.join(bad)} "
                         "(`graphmend rules` lists the codes)")
    if args.select is not None:
        settings.select = cli_sel
    if cli_ext and settings.select:
        settings.select = [*settings.select, *cli_ext]
    if cli_ign:
        settings.ignore = [*settings.ignore, *cli_ign]
    if args.exclude is not None:
        settings.exclude = list(args.exclude)
    if args.extend_exclude:
        settings.extend_exclude = [*settings.extend_exclude, *args.extend_exclude]
    if args.scope:
        settings.scope = args.scope
    if args.unsafe_fixes is not None:
        settings.unsafe_fixes = args.unsafe_fixes
    if getattr(args, "runtime", None):
        settings.runtime = args.runtime
    if getattr(args, "conditional_severity", None):
        settings.conditional_severity = args.conditional_severity
    return settings


# --------------------------------------------------------------------------- check


def _read_stdin() -> scan.Source:
    buf = getattr(sys.stdin, "buffer", None)
    if buf is not None:
        return scan.decode_source(buf.read())
    return scan.normalize_text(sys.stdin.read())


def _report_errors(errors) -> None:
    for e in errors:
        _error(f"{e.path}: {e.error}")
    if len(errors) > 1:
        _error(f"{len(errors)} files could not be checked")


def cmd_check(args) -> int:
    settings = resolve_settings(args)
    paths = args.paths or ["."]
    if paths == ["-"]:
        name = args.stdin_filename or "-"
        try:
            src = _read_stdin()
        except scan.SourceError as e:
            results = [scan.FileResult(name, error=str(e))]
        else:
            results = [scan.check_text(src.text, name, settings)]
    elif "-" in paths:
        raise UsageError("`-` (stdin) cannot be combined with other paths")
    else:
        cache = None
        if not args.no_cache:
            from graphmend.cache import ScanCache, default_dir
            cache = ScanCache(args.cache_dir or default_dir(settings), settings)
        vendored: list[str] = []
        files, discover_errors = scan.discover(paths, settings, vendored)
        results = discover_errors + scan.check_files(files, settings, args.jobs, None, scan.roots_of(paths), cache)
        for p in vendored:
            why = _vendored_problem(p)
            if why and not args.quiet:
                _err(f"graphmend: warning: {p}: {why}")
        if cache is not None:
            why = cache.save()
            if why and not args.quiet:
                _err(f"graphmend: warning: {why}")

    errors = [r for r in results if r.error]
    checked = [r for r in results if not r.error]
    findings = [f for r in checked for f in r.findings]
    unsafe = settings.unsafe_fixes

    if args.format == "text":
        if args.statistics:
            _out(output.format_statistics(findings, unsafe))
        else:
            _out(output.format_text(checked, unsafe, args.show_fixes, settings.conditional_severity))
        if not args.quiet:
            _out(output.summary(findings, unsafe))
    elif args.format == "json":
        if args.statistics:
            import json
            _out(json.dumps(output.statistics_json(findings, unsafe), indent=2))
        else:
            _out(output.format_json(checked, settings.conditional_severity))
    elif args.format == "sarif":
        _out(output.format_sarif(checked, errors, settings.conditional_severity))
    elif args.format == "github":
        _out(output.format_github(checked, errors, settings.conditional_severity))

    _report_errors(errors)
    if errors:
        return 2
    return 1 if findings and not args.exit_zero else 0


# --------------------------------------------------------------------------- fix


def _vendored_problem(path: str) -> Optional[str]:
    """What is wrong with a vendored runtime copy (None: it is current)."""
    from graphmend.rewrite import runtime
    try:
        text = open(path, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError) as e:
        return f"cannot read the vendored graphmend runtime: {e}"
    status = runtime.vendored_status(text)
    if status == "stale":
        return (f"the vendored graphmend runtime is older than v{runtime.version()}; "
                "`graphmend fix` updates it")
    if status == "edited":
        return ("the vendored graphmend runtime was edited (it no longer matches its digest); "
                "delete it and run `graphmend fix` to restore it")
    if status == "newer":
        return "the vendored graphmend runtime was written by a newer graphmend"
    return None


def _vendor(fixes, settings: Settings, dry_run: bool, quiet: bool) -> dict:
    """Write (or, with dry_run, name) the vendored runtime copies the fixed files import, before
    the files are written. Returns {copy path: why} for copies that could not be written (the
    files that import them are then left unchanged)."""
    from graphmend.rewrite import runtime
    from graphmend.rewrite.apply import vendor_runtime
    if settings.runtime != "vendor":
        return {}
    failed, done = {}, set()
    for fx in fixes:
        if not fx.changed or not fx.applied or not runtime.uses_runtime(fx.fixed):
            continue
        target = runtime.vendor_path(fx.path)
        if target in done:
            continue
        done.add(target)
        if dry_run:
            old = target.read_text(encoding="utf-8") if target.is_file() else None
            status = "missing" if old is None else runtime.vendored_status(old)
            if status in ("missing", "stale") and not quiet:
                _err(f"Would {'write' if status == 'missing' else 'update'} {target} "
                     f"(graphmend runtime v{runtime.version()}).")
            continue
        path, what = vendor_runtime(fx.path)
        if what in ("created", "updated"):
            if not quiet:
                _err(f"{'Wrote' if what == 'created' else 'Updated'} {path} (graphmend runtime v{runtime.version()}).")
        elif what != "current" and not what.startswith(("edited", "written by a newer")):
            failed[target] = f"the vendored runtime {path}: {what}"
        elif what != "current" and not quiet:
            _err(f"graphmend: warning: {path}: {what}")
    return failed



def _not_fixed_reasons(fix: scan.FileFix) -> dict[int, str]:
    """Remaining finding index -> why fix_source skipped it (matched by code and message)."""
    pool = [(f.code, f.message, why) for f, why in fix.skipped]
    reasons: dict[int, str] = {}
    for i, f in enumerate(fix.remaining):
        if f.decline_reason:
            continue
        for j, (code, msg, why) in enumerate(pool):
            if code == f.code and msg == f.message:
                reasons[i] = why
                del pool[j]
                break
    return reasons


def _applied_table(fixes: Sequence[scan.FileFix]) -> str:
    from collections import Counter
    lines = []
    for fx in fixes:
        if not fx.applied:
            continue
        lines.append(f"- {fx.path}:")
        for code, n in sorted(Counter(f.code for f in fx.applied).items()):
            name = CATALOGUE[code].name if code in CATALOGUE else ""
            lines.append(f"    {n} × {code} ({name})" if name else f"    {n} × {code}")
    return "\n".join(lines) + ("\n" if lines else "")


def _fix_stdin(args, settings: Settings, unsafe: bool) -> int:
    name = args.stdin_filename or "-"
    try:
        src = _read_stdin()
    except scan.SourceError as e:
        _error(f"{name}: {e}")
        return 2
    from graphmend import rewrite
    # vendor: the copy goes beside --stdin-filename's package (written unless --diff); without a
    # file name there is nowhere to put it, so the text carries the runtime inline
    mode = settings.runtime if settings.runtime != "vendor" or args.stdin_filename else "inline"
    res = rewrite.fix_source(src.text, name, settings, unsafe=unsafe, runtime=mode)
    if mode == "vendor" and res.text != src.text and not args.diff:
        failed = _vendor([scan.FileFix(name, applied=list(res.applied), original=src.text, fixed=res.text)], settings,
                         False, args.quiet)
        if failed:
            _error(f"{name}: {next(iter(failed.values()))}; printing the input unchanged")
            res.text = src.text
    new = res.text
    why = scan.parse_error(new, name) if new != src.text else None
    if why:
        _error(f"{name}: the fixed text does not parse ({why}); printing the input unchanged")
        new = src.text
    if args.diff:
        _out(output.format_diff(name, src.text, new))
        return 1 if new != src.text else (2 if why else 0)
    sys.stdout.write(scan.encode_source(new, src.newline, False).decode("utf-8"))
    remaining = scan.check_text(new, name, settings)
    for line in output.format_text([remaining], unsafe).splitlines():
        _err(line)
    if why:
        return 2
    return 1 if remaining.findings else 0


def cmd_fix(args) -> int:
    settings = resolve_settings(args)
    unsafe = bool(settings.unsafe_fixes)
    paths = args.paths or ["."]
    if paths == ["-"]:
        return _fix_stdin(args, settings, unsafe)
    if "-" in paths:
        raise UsageError("`-` (stdin) cannot be combined with other paths")

    files, discover_errors = scan.discover(paths, settings)
    fixes = scan.fix_files(files, settings, unsafe=unsafe, jobs=args.jobs)
    errors = list(discover_errors)

    if args.diff:
        n_would = 0
        chunks = []
        for fx in fixes:
            if fx.error:
                errors.append(fx)
            if fx.changed:
                n_would += len(fx.applied)
                chunks.append(output.format_diff(fx.path, fx.original, fx.fixed))
        _out("".join(chunks))
        _vendor(fixes, settings, True, args.quiet)
        if not args.quiet:
            if n_would or chunks:
                _err(f"Would fix {output._plural(n_would, 'graph break')}.")
            else:
                _err("No fixes available.")
        _report_errors(errors)
        if errors:
            return 2
        return 1 if chunks else 0

    fixed = 0
    remaining: list[Finding] = []
    lines: list[str] = []
    failed = _vendor(fixes, settings, False, args.quiet)
    for fx in fixes:
        if fx.changed:
            from graphmend.rewrite import runtime
            why = (failed.get(runtime.vendor_path(fx.path)) if failed and runtime.uses_runtime(fx.fixed)
                   else None)
            why = (why + "; file left unchanged") if why else scan.write_fix(fx)
            if why is not None:
                fx.error = why
                fx.applied = []
                # The file is as it was: report what is in it now.
                fx.remaining = scan.check_files([fx.path], settings, jobs=1)[0].findings
            else:
                fixed += len(fx.applied)
        if fx.error:
            errors.append(fx)
            if not fx.remaining:
                continue
        reasons = _not_fixed_reasons(fx)
        for i, f in enumerate(fx.remaining):
            extra = f"not fixed: {reasons[i]}" if i in reasons else None
            lines.extend(output.finding_lines(fx.path, f, unsafe, False, extra))
        remaining.extend(fx.remaining)

    if args.show_fixes and fixed:
        _out(f"Fixed {output._plural(fixed, 'graph break')}:")
        _out(_applied_table(fixes))
    _out("\n".join(lines))
    if not args.quiet:
        _out(output.fix_summary(fixed, remaining, unsafe))
    _report_errors(errors)
    if errors:
        return 2
    return 1 if remaining else 0


# --------------------------------------------------------------------------- rules


def cmd_rules(args) -> int:
    _out(output.format_rules_json() if args.format == "json" else output.format_rules_text())
    return 0


def rule_doc(code: str) -> str:
    """The rule's documentation: graphmend.rules.rule_doc(code) when present, else the catalogue."""
    doc = None
    import importlib
    try:
        rules_mod = importlib.import_module("graphmend.rules")  # rule docs: optional, may not exist yet
    except ModuleNotFoundError as e:
        if e.name not in ("graphmend.rules",):
            _warn(f"rule documentation unavailable ({e})")
        rules_mod = None
    except Exception as e:  # a broken rules package must not break `graphmend rule`
        _warn(f"rule documentation unavailable ({type(e).__name__}: {e})")
        rules_mod = None
    fn = getattr(rules_mod, "rule_doc", None)
    if callable(fn):
        try:
            doc = fn(code)
        except Exception as e:
            _warn(f"rule documentation for {code} failed ({type(e).__name__}: {e})")
    if not doc:
        doc = output.rule_summary_doc(code)
    return doc


def cmd_rule(args) -> int:
    code = args.code.strip().upper()
    if code not in CATALOGUE:
        _error(f"unknown rule `{args.code}` (`graphmend rules` lists them)")
        return 2
    _out(rule_doc(code))
    return 0


# --------------------------------------------------------------------------- serve


def cmd_serve(argv: list[str]) -> int:
    try:
        from graphmend.lsp.server import main as serve_main
    except ModuleNotFoundError as e:
        _error(f"the language server needs the `{e.name}` package "
               f"(pip install 'pygls>=2,<3' lsprotocol): {e}")
        return 2
    return serve_main(argv)


# --------------------------------------------------------------------------- main


# Subcommands whose arguments belong to another module's main(argv) -> int.
PASSTHROUGH = {
    "probe": "graphmend.probe.cli:main_probe",
    "import-log": "graphmend.probe.cli:main_import_log",
    "run": "graphmend.probe.importhook:main",
}
PASSTHROUGH_HELP = {
    "probe": "run a probe entry under Dynamo and report what it really did (--verify: prove the mends)",
    "import-log": "show Dynamo's graph breaks from a TORCH_LOGS=graph_breaks log or a TORCH_TRACE dir",
    "run": "run a command with the modules under --scope mended as they are imported (no file written)",
}


def _passthrough(name: str, argv: list[str]) -> int:
    import importlib
    modname, _, fn = PASSTHROUGH[name].partition(":")
    rc = getattr(importlib.import_module(modname), fn)(argv)
    return rc if isinstance(rc, int) else 0


def _dispatch(argv: list[str]) -> int:
    if argv and argv[0] == "serve":
        return cmd_serve(argv[1:])
    if argv and argv[0] in PASSTHROUGH:
        return _passthrough(argv[0], argv[1:])
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version, usage errors
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    if args.command == "version":
        _out(f"graphmend {__version__}")
        return 0
    try:
        if args.command == "check":
            return cmd_check(args)
        if args.command == "fix":
            return cmd_fix(args)
        if args.command == "rules":
            return cmd_rules(args)
        if args.command == "rule":
            return cmd_rule(args)
    except UsageError as e:
        _error(str(e))
        return 2
    parser.print_help(sys.stderr)
    return 2


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit code (the console script exits with it)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _dispatch(argv)
    except KeyboardInterrupt:
        _err("graphmend: interrupted")
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 1


# commands that only analyse and write what they were asked to (output, fixed files, the cache)
# before they return: the process may leave without tearing its analysis down
_HARD_EXIT = frozenset({"check", "fix"})


def console_main() -> None:
    """The console script and `python -m graphmend`: `main`, then exit. After `check` and `fix`
    the process leaves at once (os._exit, output flushed), as mypy does: freeing the analysis of
    a large tree object by object took longer than a sixth of a one-process check of
    transformers' models/ (5.6 of 35.8 s, measured). `graphmend run` and the server exit
    normally: the user's program may count on its atexit hooks."""
    argv = sys.argv[1:]
    rc = main(argv)
    if argv and argv[0] in _HARD_EXIT:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass
        else:
            os._exit(rc if isinstance(rc, int) else 1)
    sys.exit(rc)


if __name__ == "__main__":  # pragma: no cover
    console_main()
