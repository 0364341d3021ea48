"""Notebooks in the command line: `graphmend check|fix nb.ipynb` (graphmend.notebook, scan).

The fixture (tests/notebook_fixtures/model.ipynb, nbformat's own JSON style) has a markdown
cell, line magics, shell lines (one continued with a backslash, one assigned), a `%%time` cell
(Python body) and a `%%bash` cell (not Python), and a model whose forward prints, raises on NaN
and calls `.item()`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from graphmend import cli
from graphmend.notebook import Cells, Notebook, NotebookError
from graphmend.textlines import split_lines

FIXTURE = Path(__file__).parent / "notebook_fixtures" / "model.ipynb"


@pytest.fixture
def nb(tmp_path: Path) -> Path:
    p = tmp_path / "model.ipynb"
    shutil.copyfile(FIXTURE, p)
    return p


def cells_of(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"])


# --------------------------------------------------------------------------- the module of cells


@pytest.mark.parametrize("sources", [
    ["import torch", "%%bash\nif true; then\n  echo x\nfi", "x = 1\n"],
    ["!pip install a \\\n    b\nimport os", "def f():\n    %time g()\n    files = !ls\n    return files"],
    ["%%time\nprint(1)\n\n", "", "obj?\n??obj\nlen(x)"],
    ["%%writefile a.py\nthis is ) not python", "a = b % c\nd = e != f"],
    ["x = (a\n     % b)\ny = (c\n     != d)"],  # Python whose lines only look like magics
])
def test_cells_parse_and_split_back(sources):
    import ast
    cells = Cells.build(sources)
    ast.parse(cells.text)  # magics never make a syntax error
    assert cells.split(cells.text) == sources  # every magic back, every final newline kept
    for src in sources:  # Python lines are kept as they are (`%` and `!=` are operators there)
        for line in split_lines(src):
            if line.startswith(("a = ", "d = ", "x = ", "import ", "     % b", "     != d")):
                assert line in split_lines(cells.text)


def test_positions_map_both_ways():
    cells = Cells.build(["import torch\nx = 1", "y = 2\n\nz = 3"], [2, 5])
    lines = split_lines(cells.text)
    for k, src in enumerate(["import torch\nx = 1", "y = 2\n\nz = 3"]):
        for i, want in enumerate(split_lines(src), 1):
            m = cells.to_module(k, i)
            assert lines[m - 1] == want
            assert cells.to_cell(m) == (k, i)
    assert cells.to_cell(1) is None  # the marker of the first cell


def test_split_refuses_a_lost_magic_or_cell():
    cells = Cells.build(["!ls\nx = 1", "y = 2"])
    with pytest.raises(NotebookError):
        cells.split(cells.text.replace("pass  # <graphmend magic 0>", "pass"))
    with pytest.raises(NotebookError):
        cells.split(cells.text.replace("# <graphmend cell 2>\n", ""))


# --------------------------------------------------------------------------- check


def test_check_reports_cell_line_col(nb: Path, capsys):
    assert cli.main(["check", "--no-cache", str(nb)]) == 1
    out = capsys.readouterr().out
    found = [ln for ln in out.splitlines() if ln.startswith(str(nb))]
    assert [ln.split(": ")[1].split()[0] for ln in found] == ["GM101", "GM301", "GM401"]
    cells = cells_of(nb)
    for ln in found:
        loc = ln[len(str(nb)) + 1:].split(": ")[0]  # "cell 4:7:9"
        cell, line, col = loc.split(":")
        n = int(cell.removeprefix("cell "))
        text = split_lines(source(cells[n - 1]))[int(line) - 1]
        code = ln.split(": ")[1].split()[0]
        want = {"GM101": "print(", "GM301": "torch.isnan", "GM401": "y.sum().item()"}[code]
        assert text[int(col) - 1:].startswith(want), (ln, text)
    assert "GM001" not in out  # magics, shell lines and %%bash are no syntax error


def test_check_json_has_the_cell(nb: Path, capsys):
    cli.main(["check", "--no-cache", "--format", "json", str(nb)])
    got = json.loads(capsys.readouterr().out)
    assert {(d["code"], d["cell"], d["line"]) for d in got} == {("GM101", 4, 7), ("GM301", 4, 8), ("GM401", 4, 11)}


def test_check_sarif_names_the_cell(nb: Path, capsys):
    """SARIF has no notebook cells: the region is the cell's own lines, and the cell is a property."""
    cli.main(["check", "--no-cache", "--format", "sarif", str(nb)])
    results = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    got = {(r["ruleId"], r["properties"].get("notebookCell"),
            r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results}
    assert got == {("GM101", 4, 7), ("GM301", 4, 8), ("GM401", 4, 11)}


def test_directory_walk_includes_notebooks(nb: Path, capsys):
    (nb.parent / "plain.py").write_text("x = 1\n")
    cli.main(["check", "--no-cache", str(nb.parent)])
    assert f"{nb}:cell 4:7:9: GM101" in capsys.readouterr().out


def test_not_a_notebook_is_a_clear_error(tmp_path: Path, capsys):
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{not json")
    assert cli.main(["check", "--no-cache", str(bad)]) == 2
    assert "not a notebook: invalid JSON" in capsys.readouterr().err
    assert cli.main(["fix", str(bad)]) == 2
    assert bad.read_text() == "{not json"


# --------------------------------------------------------------------------- fix


def test_fix_rewrites_only_code_cell_sources(nb: Path, capsys):
    before = cells_of(nb)
    assert cli.main(["fix", str(nb)]) == 1  # the .item() remains
    out = capsys.readouterr().out
    assert f"{nb}:cell 4:10:16: GM401" in out  # remaining, in the mended cell's lines
    after = cells_of(nb)
    assert len(after) == len(before)
    for a, b in zip(before, after):
        assert {k: v for k, v in a.items() if k != "source"} == {k: v for k, v in b.items() if k != "source"}
    changed = [i for i, (a, b) in enumerate(zip(before, after)) if a["source"] != b["source"]]
    assert changed == [1, 3]  # the first code cell gets the helpers, the model cell the mends
    setup, model = source(after[1]), source(after[3])
    assert setup.startswith("%pip install -q torch\n%load_ext autoreload\nimport torch\nfrom torch import nn\n")
    assert "# --- graphmend runtime v" in setup and "_graphmend_" not in source(after[2])
    assert "graphmend.print(\"shape\", x.shape)" in model
    assert "graphmend.raise_if(torch.isnan(x).any(), ValueError, \"x contains NaN\")" in model
    assert all(isinstance(c["source"], list) for c in after)  # nbformat's list-of-lines form kept
    # the JSON around the changed sources is byte-identical (nbformat's style, kept)
    raw_before, raw_after = FIXTURE.read_text(), nb.read_text()
    for i in (0, 2, 4, 5):
        assert json.dumps(before[i], sort_keys=True, indent=1, ensure_ascii=False).replace("\n", "\n  ") in raw_after
    assert raw_after.endswith("}\n") and raw_before.count('"outputs"') == raw_after.count('"outputs"')
    # idempotent
    assert cli.main(["fix", str(nb)]) == 1
    assert nb.read_text() == raw_after


def test_fix_diff_writes_nothing(nb: Path, capsys):
    raw = nb.read_text()
    assert cli.main(["fix", "--diff", str(nb)]) == 1
    assert '+    "        graphmend.print(\\"shape\\", x.shape)\\n",' in capsys.readouterr().out
    assert nb.read_text() == raw


def _load(path: Path) -> dict:
    """Run the notebook's import and model cells (the others need IPython) in a namespace."""
    src = Notebook(path.read_text()).sources()
    ns: dict = {}
    exec(compile(Cells.build([src[0], src[2]]).text, str(path), "exec"), ns)
    return ns


def test_mended_notebook_behaves_the_same_in_fewer_graphs(nb: Path):
    torch = pytest.importorskip("torch")
    from difftest import Counter, compiled, observe

    cli.main(["fix", str(nb)])
    runs = {}
    for name, path in (("original", FIXTURE), ("mended", nb)):
        ns = _load(path)
        torch.manual_seed(0)
        net = ns["Net"]()
        counter = Counter()
        fn = compiled(net, counter)
        ok = observe(fn, torch.ones(4))
        graphs = len(counter.graphs)
        bad = observe(fn, torch.full((4,), float("nan")))
        runs[name] = (ok, bad, graphs)
    (ok0, bad0, g0), (ok1, bad1, g1) = runs["original"], runs["mended"]
    assert ok0.same_as(ok1) == [] and bad0.same_as(bad1) == []
    assert ok0.stdout == "shape torch.Size([4])\n" and bad0.error == ("ValueError", "x contains NaN")
    assert g1 == 1 < g0  # print and the guard no longer split the graph; .item() ends it


from hypothesis import given, settings, strategies as st  # noqa: E402

LINES = ["x = 1", "%time f()", "!pip install a", "files = !ls", "obj?", "y = x % 2", "z = x != 3",
         "def f(a): return a", "", "# comment", "print('%d' % 3)", "%%not-first", "  !indented",
         "if x:\n    %timeit a\n    b = !ls"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.lists(st.sampled_from(LINES), max_size=6), st.booleans(),
                          st.sampled_from(["", "%%bash\n", "%%time\n"])), min_size=1, max_size=5))
def test_cells_round_trip(cells):
    import ast
    sources = []
    for lines, newline, magic in cells:
        body = [ln for ln in lines if ln != "  !indented" or magic == "%%bash\n"]  # Python or IPython
        sources.append(magic + "\n".join(body) + ("\n" if newline and body else ""))
    built = Cells.build(sources)
    ast.parse(built.text)
    assert built.split(built.text) == sources
    for k, src in enumerate(sources):
        for i in range(1, len(split_lines(src)) + 1):
            assert built.to_cell(built.to_module(k, i)) == (k, i)
