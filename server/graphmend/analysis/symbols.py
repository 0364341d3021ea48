"""One file's symbols from its ast: imports, classes, functions, and dotted-name qualification."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

FuncNode = Union[ast.FunctionDef, ast.AsyncFunctionDef]


@dataclass
class FunctionInfo:
    node: FuncNode
    qualname: str  # "Class.method", "func", "outer.<locals>.inner"
    cls: Optional["ClassInfo"] = None


@dataclass
class ClassInfo:
    node: ast.ClassDef
    name: str
    bases: list[str]  # qualified dotted names of the bases, as far as they can be qualified
    methods: dict[str, FunctionInfo] = field(default_factory=dict)
    # self.<attr> = <call> in any method: attr -> qualified dotted name of the callee (e.g. "torch.nn.Linear")
    attr_ctors: dict[str, str] = field(default_factory=dict)
    buffers: set[str] = field(default_factory=set)  # register_buffer / nn.Parameter names


def module_name_for(path: str) -> str:
    """Dotted module name of a file, climbing package directories (those with __init__.py)."""
    p = Path(path)
    if not p.suffix == ".py":
        return p.stem
    parts = [] if p.stem == "__init__" else [p.stem]
    d = p.parent
    while (d / "__init__.py").is_file():
        parts.insert(0, d.name)
        if d.parent == d:
            break
        d = d.parent
    return ".".join(parts) or p.stem


class Symbols:
    """Imports, classes and functions of one module, and `qualify(expr)` to dotted names."""

    def __init__(self, tree: ast.Module, module: str = "", is_package: bool = False):
        self.tree = tree
        self.module = module
        self.is_package = is_package
        self.imports: dict[str, str] = {}  # local name -> dotted target
        self.aliases: dict[str, str] = {}  # local name = <dotted attr>  (e.g. tc = torch.compile)
        self.classes: dict[str, ClassInfo] = {}
        self.functions: dict[str, FunctionInfo] = {}  # module-level functions by name
        self.all_functions: list[FunctionInfo] = []  # every def, nested and methods included
        self.logger_names: set[str] = set()
        self._collect()

    # --- imports -----------------------------------------------------------------------------
    def _resolve_relative(self, level: int, mod: Optional[str]) -> str:
        if level == 0:
            return mod or ""
        base = self.module.split(".") if self.module else []
        if not self.is_package:
            base = base[:-1]
        if level > 1:
            base = base[: len(base) - (level - 1)] if len(base) >= level - 1 else []
        return ".".join([*base, *([mod] if mod else [])])

    def _collect(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.imports[a.asname] = a.name
                    else:
                        top = a.name.split(".")[0]
                        self.imports[top] = top
            elif isinstance(node, ast.ImportFrom):
                src = self._resolve_relative(node.level, node.module)
                for a in node.names:
                    if a.name != "*":
                        self.imports[a.asname or a.name] = f"{src}.{a.name}" if src else a.name
        for stmt in self.tree.body:
            self._top_level(stmt)
        self._walk_defs(self.tree.body, prefix="", cls=None)

    def _top_level(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            v = stmt.value
            if isinstance(v, (ast.Attribute, ast.Name)):
                q = self.qualify(v)
                if q:
                    self.aliases[name] = q
            elif isinstance(v, ast.Call):
                q = self.qualify(v.func) or ""
                if q.endswith(("getLogger", "get_logger")) or q in ("logging.Logger",):
                    self.logger_names.add(name)
        elif isinstance(stmt, (ast.If, ast.Try)):
            for s in getattr(stmt, "body", []) + getattr(stmt, "orelse", []):
                self._top_level(s)

    def _walk_defs(self, body: list[ast.stmt], prefix: str, cls: Optional[ClassInfo]) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                q = f"{prefix}{stmt.name}"
                fi = FunctionInfo(stmt, q, cls)
                self.all_functions.append(fi)
                if cls is not None:
                    cls.methods.setdefault(stmt.name, fi)
                elif not prefix:
                    self.functions[stmt.name] = fi
                self._walk_defs(stmt.body, prefix=f"{q}.<locals>.", cls=None)
            elif isinstance(stmt, ast.ClassDef):
                ci = ClassInfo(stmt, stmt.name, [self.qualify(b) or "" for b in stmt.bases])
                if not prefix:
                    self.classes[stmt.name] = ci
                self._walk_defs(stmt.body, prefix=f"{prefix}{stmt.name}.", cls=ci)
                self._class_attrs(ci)
            elif isinstance(stmt, (ast.If, ast.Try, ast.With)):
                for sub in ("body", "orelse", "finalbody"):
                    self._walk_defs(getattr(stmt, sub, []) or [], prefix, cls)
                for h in getattr(stmt, "handlers", []) or []:
                    self._walk_defs(h.body, prefix, cls)

    def _class_attrs(self, ci: ClassInfo) -> None:
        for fi in ci.methods.values():
            for node in ast.walk(fi.node):
                if isinstance(node, ast.Assign):
                    for t in node.targets:
                        if (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                                and t.value.id == "self" and isinstance(node.value, ast.Call)):
                            q = self.qualify(node.value.func)
                            if q:
                                ci.attr_ctors.setdefault(t.attr, q)
                            if q in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
                                ci.buffers.add(t.attr)
                elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                      and node.func.attr in ("register_buffer", "register_parameter")
                      and node.args and isinstance(node.args[0], ast.Constant)
                      and isinstance(node.args[0].value, str)):
                    ci.buffers.add(node.args[0].value)

    # --- names -------------------------------------------------------------------------------
    def qualify(self, expr: ast.expr) -> Optional[str]:
        """`nn.Module` -> "torch.nn.Module" following imports; None for non-name expressions."""
        parts: list[str] = []
        e = expr
        while isinstance(e, ast.Attribute):
            parts.append(e.attr)
            e = e.value
        if not isinstance(e, ast.Name):
            return None
        head = e.id
        if head in self.imports:
            head = self.imports[head]
        elif head in self.aliases:
            head = self.aliases[head]
        elif head in self.classes or head in self.functions:
            head = f"{self.module}.{head}" if self.module else head
        return ".".join([head, *reversed(parts)])
