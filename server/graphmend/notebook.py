"""Jupyter notebooks as one Python module: the code cells in order, and positions mapped both ways.

The engine sees one module (`Cells.text`): each code cell preceded by a marker comment line
(`# <graphmend cell N>`, N its 1-based position among all the notebook's cells, as ruff counts
them), with IPython syntax masked: a line magic (`%time f()`), a shell line (`!pip install x`,
`x = !ls`), a help line (`obj?`) and every line of a cell magic other than those whose body is
Python (`%%bash`, `%%writefile`; not `%%time`) become `pass  # <graphmend magic K>` at the line's
indentation, so the cell still parses and the line keeps its number. Nothing IPython-specific is
ever a syntax error here.

`split` turns a mended module back into cell sources: it cuts at the cell markers, puts each
masked line back as it was, and moves the runtime helper block that a mend inserts (after the
module's leading imports, which may be in a later cell) into the first code cell. It raises
`NotebookError` when a marker was lost, so a mend that would garble a cell is never written.

`Notebook` reads and writes the .ipynb JSON: only the `source` of changed code cells is
replaced; outputs, metadata, cell ids and every other field are kept, and the file is written
in the style it was read in (indentation, ASCII escapes, final newline; nbformat's own style
gives byte-identical unchanged cells).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from graphmend.textlines import split_lines
from graphmend.rewrite.runtime import INLINE_END

CELL_MARK = "# <graphmend cell {n}>"
_CELL_RE = re.compile(r"^# <graphmend cell (\d+)>$")
_MAGIC_RE = re.compile(r"^(\s*)pass  # <graphmend magic (\d+)>$")
# Cell magics whose body is Python (the first line is masked, the body checked).
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
_ASSIGN_MAGIC = re.compile(r"^\s*[\w.\[\], ]+?\s*=\s*[!%]")
_HELP = re.compile(r"^\s*(\?\??[\w.]*|[\w.]+\?\??)\s*$")
_HELPER_BEGIN = re.compile(r"^# --- graphmend runtime v\d+ \(inline;.*---$")  # rewrite/runtime.py INLINE_BEGIN
_HELPER_END = INLINE_END


class NotebookError(Exception):
    """The file is not a notebook GraphMend can read, or a mend would garble a cell."""


def _is_magic(line: str) -> bool:
    s = line.lstrip()
    return s.startswith(("%", "!")) or bool(_ASSIGN_MAGIC.match(line)) or bool(_HELP.match(line))


@dataclass
class Cells:
    """The module of a notebook's code cells, and where each cell is in it."""

    text: str
    numbers: list[int]  # per code cell: its 1-based position in the notebook
    starts: list[int]  # per code cell: the module line (1-based) of its first line
    lengths: list[int]  # per code cell: its number of lines
    magics: list[str] = field(default_factory=list)  # masked lines, by K
    newline_at_end: list[bool] = field(default_factory=list)  # per code cell

    @classmethod
    def build(cls, sources: Sequence[str], numbers: Optional[Sequence[int]] = None) -> "Cells":
        numbers = list(numbers) if numbers is not None else list(range(1, len(sources) + 1))
        out: list[str] = []
        starts: list[int] = []
        lengths: list[int] = []
        magics: list[str] = []

        def mask(line: str, indent: str) -> str:
            magics.append(line)
            return f"{indent}pass  # <graphmend magic {len(magics) - 1}>"

        for n, src in zip(numbers, sources):
            out.append(CELL_MARK.format(n=n))
            starts.append(len(out) + 1)
            lines = split_lines(src)
            first = lines[0].lstrip() if lines else ""
            name = first[2:].split(maxsplit=1)[0] if first.startswith("%%") and first[2:].strip() else ""
            whole = first.startswith("%%") and name not in PYTHON_CELL_MAGICS
            indent: Optional[str] = None  # of a masked line continued with a backslash
            mark, first_magic = len(out), len(magics)
            for i, line in enumerate(lines):
                if whole:  # not Python: every line, at the cell's top level
                    out.append(mask(line, ""))
                elif indent is not None or (i == 0 and first.startswith("%%")) or _is_magic(line):
                    own = line[: len(line) - len(line.lstrip())]
                    out.append(mask(line, own if indent is None else indent))
                    indent = (own if indent is None else indent) if line.endswith("\\") else None
                else:
                    out.append(line)
            if len(magics) > first_magic and not whole and not _parses(out[mark:]) and _parses(lines):
                # Python after all: `% b` continuing an expression in brackets, `!=` ... at a line start
                del out[mark:], magics[first_magic:]
                out.extend(lines)
            lengths.append(len(lines))
        text = "\n".join(out) + "\n"
        ends = [s.endswith(("\n", "\r")) for s in sources]
        return cls(text, numbers, starts, lengths, magics, ends)

    # ------------------------------------------------------------------ positions
    def to_cell(self, line: int) -> Optional[tuple[int, int]]:
        """Module line (1-based) -> (code-cell index, line in the cell, 1-based); None on a
        marker line or past the end."""
        for k in range(len(self.starts) - 1, -1, -1):
            if line >= self.starts[k]:
                local = line - self.starts[k] + 1
                if local <= max(self.lengths[k], 1):
                    return k, local
                return None
        return None

    def to_module(self, k: int, line: int) -> int:
        """(code-cell index, line in the cell, 1-based) -> module line."""
        return self.starts[k] + line - 1

    def cell_of_number(self, n: int) -> Optional[int]:
        try:
            return self.numbers.index(n)
        except ValueError:
            return None

    # ------------------------------------------------------------------ back to cells
    def split(self, text: str) -> list[str]:
        """The cell sources of a mended module (same cells, in order); see the module doc."""
        lines = split_lines(text)
        cuts = [(i, int(m.group(1))) for i, ln in enumerate(lines) if (m := _CELL_RE.match(ln))]
        if [n for _, n in cuts] != self.numbers:
            raise NotebookError("a mend changed the notebook's cell structure; nothing written")
        bodies: list[list[str]] = []
        for j, (i, _) in enumerate(cuts):
            end = cuts[j + 1][0] if j + 1 < len(cuts) else len(lines)
            bodies.append(lines[i + 1:end])
        prefix = lines[:cuts[0][0]] if cuts else []
        if any(ln.strip() for ln in prefix):  # the helper block, inserted at the module's top
            if _block(prefix) is None or any(ln.strip() for ln in prefix[:_block(prefix)[0]]) \
                    or any(ln.strip() for ln in prefix[_block(prefix)[1] + 1:]):
                raise NotebookError("a mend put code before the first cell; nothing written")
        _move_helpers(bodies, prefix)
        used: set[int] = set()
        out = []
        for k, body in enumerate(bodies):
            restored = []
            for ln in body:
                m = _MAGIC_RE.match(ln)
                if m:
                    j = int(m.group(2))
                    if j >= len(self.magics) or j in used:
                        raise NotebookError("a mend changed an IPython magic line; nothing written")
                    used.add(j)
                    restored.append(self.magics[j])
                else:
                    restored.append(ln)
            end = self.newline_at_end[k] if k < len(self.newline_at_end) else False
            out.append("\n".join(restored) + ("\n" if end else ""))
        if len(used) != len(self.magics):
            raise NotebookError("a mend removed an IPython magic line; nothing written")
        return out


def _parses(lines: list[str]) -> bool:
    import ast
    try:
        ast.parse("\n".join(lines))
        return True
    except (SyntaxError, ValueError):
        return False


def _block(body: list[str]) -> Optional[tuple[int, int]]:
    """(first, last) line index of the runtime helper block in a cell body."""
    for i, ln in enumerate(body):
        if _HELPER_BEGIN.match(ln):
            for j in range(i, len(body)):
                if body[j] == _HELPER_END:
                    return i, j
    return None


def _move_helpers(bodies: list[list[str]], prefix: list[str]) -> None:
    """Move the helper block from a later cell (or from before the first) into the first code
    cell, after its leading imports and masked magics (the block imports what it uses)."""
    if not bodies or _block(bodies[0]) is not None:
        return
    for body in [prefix, *bodies[1:]]:
        where = _block(body)
        if where is None:
            continue
        i, j = where
        block = body[i:j + 1]
        lo = i - 1 if i > 0 and body[i - 1] == "" else i  # the blank line inserted before it
        del body[lo:j + 1]
        first = bodies[0]
        at = _after_imports(first)
        ins = ([""] if at > 0 else []) + block + ([""] if at < len(first) else [])
        first[at:at] = ins
        return


def _after_imports(body: list[str]) -> int:
    """Index after the leading imports, docstring, `from __future__` and masked magics of a
    cell (its lines may not parse alone: a cell ending in an open bracket; then the top)."""
    import ast
    try:
        tree = ast.parse("\n".join(body))
    except SyntaxError:
        return 0
    end = 0
    for stmt in tree.body:
        magic = isinstance(stmt, ast.Pass) and _MAGIC_RE.match(body[stmt.lineno - 1] or "")
        doc = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and end == 0
        if isinstance(stmt, (ast.Import, ast.ImportFrom)) or magic or doc:
            end = stmt.end_lineno or stmt.lineno
        else:
            break
    return end


# ---------------------------------------------------------------------- the .ipynb file


def _cell_source(cell: dict) -> str:
    src = cell.get("source", "")
    if isinstance(src, list):
        if not all(isinstance(s, str) for s in src):
            raise NotebookError("a cell's source is not text")
        return "".join(src)
    if not isinstance(src, str):
        raise NotebookError("a cell's source is not text")
    return src


def _as_source_field(text: str, like: Any) -> Any:
    """Cell text in the form the cell had: a list of lines (nbformat's) or one string."""
    if isinstance(like, str):
        return text
    return split_lines(text, keepends=True)


class Notebook:
    """A parsed .ipynb: its JSON, its code cells, and how it was formatted."""

    def __init__(self, raw: str) -> None:
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as e:
            raise NotebookError(f"not a notebook: invalid JSON ({e})") from None
        if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
            raise NotebookError("not a notebook: no list of cells (only nbformat 4 is read)")
        if not all(isinstance(c, dict) for c in data["cells"]):
            raise NotebookError("not a notebook: a cell is not an object")
        lang = ((data.get("metadata") or {}).get("language_info") or {}).get("name") \
            if isinstance(data.get("metadata"), dict) else None
        if isinstance(lang, str) and lang.lower() not in ("python", "python3", "ipython", ""):
            raise NotebookError(f"not a Python notebook (language {lang})")
        self.raw = raw
        self.data = data
        self.code = [i for i, c in enumerate(data["cells"]) if c.get("cell_type") == "code"]
        self.cells = Cells.build([_cell_source(data["cells"][i]) for i in self.code],
                                 [i + 1 for i in self.code])
        second = raw.split("\n", 2)[1] if raw.count("\n") >= 1 else ""
        self.indent: Optional[int] = len(second) - len(second.lstrip(" ")) if raw.lstrip().startswith("{\n") else None
        self.ascii = raw.isascii()  # non-ASCII text was written escaped (or there is none)
        self.final_newline = raw.endswith("\n")

    @property
    def text(self) -> str:
        return self.cells.text

    def sources(self) -> list[str]:
        return [_cell_source(self.data["cells"][i]) for i in self.code]

    def with_sources(self, sources: Sequence[str]) -> str:
        """The .ipynb text with the code cells' sources replaced (unchanged cells untouched)."""
        if len(sources) != len(self.code):
            raise NotebookError("the number of code cells changed")
        data = json.loads(self.raw)  # a fresh copy: self.data stays as read
        changed = False
        for i, new in zip(self.code, sources):
            cell = data["cells"][i]
            if _cell_source(cell) != new:
                cell["source"] = _as_source_field(new, cell.get("source", []))
                changed = True
        if not changed:
            return self.raw
        out = json.dumps(data, indent=self.indent, ensure_ascii=self.ascii)
        return out + ("\n" if self.final_newline else "")

    def fixed(self, mended_module: str) -> str:
        """The .ipynb text for a mended module (raises NotebookError when it cannot be split)."""
        if mended_module == self.text:
            return self.raw
        return self.with_sources(self.cells.split(mended_module))


# ---------------------------------------------------------------------- findings


def to_cells(findings, cells: Cells) -> list:
    """Findings of the module -> the same findings with `cell` set and cell-local lines (a
    finding on a marker line, which cannot happen, keeps its module position)."""
    import dataclasses
    from graphmend.findings import Pos, Span
    out = []
    for f in findings:
        where = cells.to_cell(f.span.start.line)
        if where is None:
            out.append(f)
            continue
        k, line = where
        shift = f.span.start.line - line
        end = f.span.end
        end_line = max(line, end.line - shift)
        if cells.to_cell(end.line) is None or cells.to_cell(end.line)[0] != k:
            end_line, end = line + cells.lengths[k] - 1, Pos(0, 0)
        span = Span(Pos(line, f.span.start.col), Pos(end_line, end.col))
        out.append(dataclasses.replace(f, span=span, cell=cells.numbers[k]))
    return out
