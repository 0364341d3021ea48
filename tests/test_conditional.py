"""Conditional breaks: a site that breaks only under a condition the analysis can name (a dtype
test, `self.training`, a config attribute) says so in its message, is shown as information by
default (`conditional-severity` in [tool.graphmend], `conditionalSeverity` in the editor,
`--conditional-severity` on the command line), and is still mendable. A branch behind a local
`is_tracing = ... or is_torchdynamo_compiling()` guard is never traced, so it is not reported."""

from __future__ import annotations

import json

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from graphmend import cli
from graphmend.analysis import analyze_source
from graphmend.config import Settings, settings_from_dict
from graphmend.findings import Applicability, severity
from graphmend.lsp.settings import server_settings
from graphmend.rewrite import fix_source
from lsp_client import SERVER, capabilities, wait_for
from test_lsp import install_handlers

SRC = '''import logging
import torch
from torch import nn
from transformers.utils import is_torchdynamo_compiling

logger = logging.getLogger(__name__)


class Layer(nn.Module):
    def forward(self, hidden_states, mask, use_cache=True):
        if hidden_states.dtype == torch.float16 and (
            torch.isinf(hidden_states).any() or torch.isnan(hidden_states).any()
        ):
            clamp_value = torch.finfo(hidden_states.dtype).max - 1000
            hidden_states = torch.clamp(hidden_states, min=-clamp_value, max=clamp_value)
        if self.gradient_checkpointing and self.training:
            if use_cache:
                logger.warning_once("`use_cache=True` is incompatible with gradient checkpointing")
        if not self.training:
            print("eval")
        if self.config.output_attentions:
            print("attentions")
        if hidden_states.dtype != torch.float32:
            print("low precision")
        if use_cache:
            print("always")
        is_tracing = torch.jit.is_tracing() or isinstance(mask, torch.fx.Proxy) or is_torchdynamo_compiling()
        if not is_tracing and torch.all(mask == 1):
            return None
        return hidden_states
'''


def _by_line(findings):
    lines = SRC.splitlines()
    return {lines[f.span.start.line - 1].strip(): f for f in findings}


def test_named_conditions_in_messages():
    got = _by_line(analyze_source(SRC).findings)
    want = {
        "if hidden_states.dtype == torch.float16 and (": ("GM201", "hidden_states is float16"),
        'logger.warning_once("`use_cache=True` is incompatible with gradient checkpointing")':
            ("GM102", "`self.gradient_checkpointing` is on and the module is training"),
        'print("eval")': ("GM101", "the module is in eval mode"),
        'print("attentions")': ("GM101", "`self.config.output_attentions` is true"),
        'print("low precision")': ("GM101", "hidden_states is not float32"),
    }
    for line, (code, cond) in want.items():
        f = got[line]
        assert f.code == code
        assert f.condition is not None and f.condition.text == cond, (line, f.condition)
        assert f.message.endswith(f"(breaks only when {cond})"), f.message
        assert severity(f) == "information"
    plain = got['print("always")']  # a flag parameter is not a condition the analysis names
    assert plain.condition is None and severity(plain) == "warning"
    # never traced under Dynamo (is_tracing is True there): no finding on the torch.all branch
    assert "if not is_tracing and torch.all(mask == 1):" not in got
    fp16 = got["if hidden_states.dtype == torch.float16 and ("]
    assert fp16.condition.dtypes == ("float16",) and fp16.condition.kinds == ("dtype",)
    assert got['print("eval")'].condition.training is False
    assert got['logger.warning_once("`use_cache=True` is incompatible with gradient checkpointing")'] \
        .condition.training is True


def test_conditional_findings_stay_mendable():
    found = analyze_source(SRC).findings
    conditional = [f for f in found if f.condition is not None]
    assert conditional and all(f.applicability is Applicability.SAFE for f in conditional), \
        [(f.code, f.applicability, f.decline_reason) for f in conditional]
    res = fix_source(SRC)
    assert {f.code for f in res.applied} >= {"GM201", "GM101", "GM102"}
    assert not [f for f in res.remaining if f.condition is not None]


def test_only_tracing_guard_via_a_local_is_not_reported():
    src = ("import torch\n\n@torch.compile\ndef f(mask):\n    is_tracing = torch.jit.is_tracing()\n"
           "    if not is_tracing and torch.all(mask == 1):\n        return None\n    return mask\n")
    # torch.jit.is_tracing() is False under Dynamo: the branch IS traced, and breaks
    assert [f.code for f in analyze_source(src).findings] == ["GM201"]
    src2 = src.replace("torch.jit.is_tracing()", "torch.compiler.is_compiling()")
    assert analyze_source(src2).findings == []
    src3 = src2.replace("    if not is_tracing", "    is_tracing = mask.any()\n    if not is_tracing")
    assert [f.code for f in analyze_source(src3).findings] == ["GM201"], "a rebinding forgets the guard"


def test_severity_setting():
    s, errors = settings_from_dict({"conditional-severity": "warning"})
    assert errors == [] and s.conditional_severity == "warning"
    s, errors = settings_from_dict({"conditional-severity": "loud"})
    assert s.conditional_severity == "information" and "conditional-severity" in errors[0]
    assert Settings().conditional_severity == "information"
    ed, errors = server_settings({"conditionalSeverity": "hint"})
    assert errors == [] and ed.engine == {"conditionalSeverity": "hint"}
    _, errors = server_settings({"conditionalSeverity": 3})
    assert errors and "conditional-severity" in errors[0]


def test_cli_shows_severity(tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text("[tool.graphmend]\nconditional-severity = \"hint\"\n")
    (tmp_path / "m.py").write_text(SRC)
    monkeypatch.chdir(tmp_path)
    cli.main(["check", "--no-cache", "--format", "json", "m.py"])
    rows = json.loads(capsys.readouterr().out)
    sev = {r["line"]: r["severity"] for r in rows}
    cond = {r["line"]: r["condition"] for r in rows}
    assert sev[11] == "hint" and cond[11]["text"] == "hidden_states is float16"
    assert sev[26] == "warning" and cond[26] is None
    cli.main(["check", "--no-cache", "--conditional-severity", "warning", "--format", "sarif", "m.py"])
    levels = {r["locations"][0]["physicalLocation"]["region"]["startLine"]: r["level"]
              for r in json.loads(capsys.readouterr().out)["runs"][0]["results"]}
    assert levels[11] == "warning"
    cli.main(["check", "--no-cache", "m.py"])
    text = capsys.readouterr().out
    assert "m.py:11:12: GM201 [*] data-dependent branch on a tensor value breaks the graph (breaks only " \
           "when hidden_states is float16)\n  = hint: a conditional break" in text


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    lsp_client.root = tmp_path
    install_handlers(lsp_client)
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=capabilities("visual-studio-code"), root_uri=tmp_path.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="p")],
        initialization_options={"debounceMs": 20}))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_editor_severity_information_then_setting(client: LanguageClient):
    path = client.root / "m.py"
    path.write_text(SRC)
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=SRC)))
    diags = await wait_for(lambda: client.diagnostics.get(uri))
    sev = {d.range.start.line + 1: d.severity for d in diags}
    assert sev[11] == types.DiagnosticSeverity.Information
    assert sev[26] == types.DiagnosticSeverity.Warning
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"graphmend": {"conditionalSeverity": "error"}}))
    diags = await wait_for(lambda: (lambda d: d if d and {x.range.start.line + 1: x.severity for x in d}.get(11)
                                    == types.DiagnosticSeverity.Error else None)(client.diagnostics.get(uri)))
    assert {d.range.start.line + 1: d.severity for d in diags}[26] == types.DiagnosticSeverity.Warning


EARLY_EXIT = '''import torch


class Plan(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        if not self.training:
            return h
        n = int(h.sum())
        return h * n


class Half(torch.nn.Module):
    def forward(self, x):
        if x.dtype != torch.float16:
            raise ValueError("half only")
        else:
            y = x + 1
        print("half", y.shape)
        return y * 2


class Loop(torch.nn.Module):
    def forward(self, xs):
        out = xs[0]
        for x in xs:
            if self.training:
                pass
            else:
                continue
            out = out + x.sum().item()
        if torch.compiler.is_compiling():
            return out
        print("eager only")
        return out


class Export(torch.nn.Module):
    def forward(self, x):
        y = x * 2
        if torch.compiler.is_exporting():
            return y
        print("compiled, not exported")
        return y + 1


class Mask(torch.nn.Module):
    def forward(self, x, mask):
        y = x * 2
        if mask.dtype not in (torch.float32, torch.uint8, torch.bool):
            raise TypeError("mask dtype")
        if mask.dtype == torch.uint8:
            print("uint8 masks are deprecated")
            mask = mask.bool()
        return y.masked_fill(mask, 0.0)


class Reference(torch.nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config

    def forward(self, x):
        y = x * 2
        if self.config.reference_compile is False:
            return y
        print("reference")
        return y + 1
'''


def test_an_early_exit_makes_the_rest_of_its_block_conditional(tmp_path):
    """After `if not self.training: return h` (a `raise`, a `continue`, an `else` that leaves)
    the rest of the block runs only on the other side of the test: its breaks say so, and Dynamo
    breaks there exactly under that condition. Not after a compile-time test: what follows
    `if is_compiling(): return` is never traced, a condition on nothing the run can change."""
    import importlib.util
    from types import SimpleNamespace

    import torch
    from test_callers import break_lines, logged_break_lines

    path = tmp_path / "early_exit.py"
    path.write_text(EARLY_EXIT)
    spec = importlib.util.spec_from_file_location("early_exit", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    lines = EARLY_EXIT.splitlines()
    line = {text: i for i, text in enumerate(lines, 1)}
    at = {lines[f.span.start.line - 1].strip(): f
          for f in analyze_source(EARLY_EXIT, settings=Settings(scope="module")).findings}
    want = {"n = int(h.sum())": "the module is training",
            'print("half", y.shape)': "x is float16",
            "out = out + x.sum().item()": "the module is training"}
    for stmt, cond in want.items():
        f = at[stmt]
        assert f.condition is not None and f.condition.text == cond, (stmt, f.condition)
        assert severity(f) == "information"
    assert 'print("eager only")' not in at  # never traced: no finding, conditional or not
    # `is_exporting()` is True under torch.export only: under torch.compile the rest is traced
    assert at['print("compiled, not exported")'].condition is None
    # two dtype tests on one path: the dtypes both allow
    assert at['print("uint8 masks are deprecated")'].condition.text == "mask is uint8"
    assert at['print("uint8 masks are deprecated")'].condition.dtypes == ("uint8",)
    assert at['print("reference")'].condition.text == "`self.config.reference_compile is not False`"

    torch.manual_seed(0)
    plan, x = mod.Plan(), torch.randn(2, 4)
    assert break_lines(plan.train(), x, path=str(path)) == {line["        n = int(h.sum())"]}
    assert break_lines(plan.eval(), x, path=str(path)) == set()
    half = mod.Half()
    assert break_lines(half, x.half(), path=str(path)) == {line['        print("half", y.shape)']}
    with pytest.raises(ValueError, match="half only"):
        half(x)
    assert break_lines(mod.Export(), x, path=str(path)) == {line['        print("compiled, not exported")']}
    masked = mod.Mask()
    warned = line['            print("uint8 masks are deprecated")']
    assert break_lines(masked, x, torch.zeros(2, 4, dtype=torch.uint8), path=str(path)) == {warned}
    assert break_lines(masked, x, torch.zeros(2, 4, dtype=torch.bool), path=str(path)) == set()
    ref = line['        print("reference")']
    assert break_lines(mod.Reference(SimpleNamespace(reference_compile=None)), x, path=str(path)) == {ref}
    assert break_lines(mod.Reference(SimpleNamespace(reference_compile=False)), x, path=str(path)) == set()
    loop, xs = mod.Loop(), [torch.randn(3), torch.randn(3)]
    assert logged_break_lines(loop.eval(), xs, path=str(path)) == set()
    # a break in a loop: Dynamo skips the frame after it, and explain() does not see it
    assert logged_break_lines(loop.train(), xs, path=str(path)) == {line["            out = out + x.sum().item()"]}


def test_settings_objects_named_cfg_are_config_conditions():
    """skrl's agents keep their settings in `self.cfg` (`if self.cfg.time_limit_bootstrap and
    truncated.any():`, realcode round 34: the flag is off by default and the tensor test never
    runs); Lightning's in `self.hparams`, scripts' in `args`. A local flag is still no condition."""
    src = ("import torch\n\n\nclass Agent(torch.nn.Module):\n"
           "    def forward(self, r, t, args, flag):\n"
           "        if self.cfg.time_limit_bootstrap and t.any():\n            r = r + 1\n"
           "        if self.hparams.clip and t.all():\n            r = r - 1\n"
           "        if args.verbose:\n            print(r)\n"
           "        if flag:\n            print(t)\n"
           "        return r\n")
    got = {f.span.start.line: f for f in analyze_source(src).findings}
    assert got[6].condition.text == "`self.cfg.time_limit_bootstrap` is true" and got[6].condition.kinds == ("config",)
    assert got[8].condition.text == "`self.hparams.clip` is true"
    assert got[11].condition.text == "`args.verbose` is true" and severity(got[11]) == "information"
    assert got[13].condition is None and severity(got[13]) == "warning"
