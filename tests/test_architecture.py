"""The import direction of CONTRIBUTING.md, checked on the source: cli -> learners -> ... -> schema."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "rulecli"

# module prefix -> rulecli modules it must never import
FORBIDDEN = {
    "rulecli.errors": ("rulecli.",),
    "rulecli.schema": ("rulecli.model", "rulecli.learners", "rulecli.dataset", "rulecli.discretize", "rulecli.io"),
    "rulecli.model": ("rulecli.learners", "rulecli.dataset", "rulecli.discretize", "rulecli.metrics", "rulecli.io"),
    "rulecli.discretize": ("rulecli.model", "rulecli.learners", "rulecli.dataset", "rulecli.io"),
    "rulecli.learners": ("rulecli.io", "rulecli.metrics", "rulecli.held_out"),
    "rulecli.metrics": ("rulecli.learners", "rulecli.io"),
    "rulecli.held_out": ("rulecli.io",),
    "rulecli.dataset": ("rulecli.model", "rulecli.learners", "rulecli.io"),
    "rulecli.params": ("rulecli.",),
    "rulecli.search": ("rulecli.learners", "rulecli.io"),
    # the counting wing answers what search asks, in memory or in an engine; it knows no learner or search
    "rulecli.counting": ("rulecli.learners", "rulecli.search", "rulecli.io", "rulecli.metrics", "rulecli.held_out"),
    # an engine counts what learners ask; it knows neither them nor how they search
    "rulecli.engines": ("rulecli.learners", "rulecli.search", "rulecli.metrics", "rulecli.held_out"),
}
# the API sits between the commands and the library: only the CLI (and the package's lazy
# attribute access) may import it
API_USERS = ("rulecli.cli", "rulecli.api")
TERMINAL = ("typer", "rich", "click")


def _modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(p for p in parts if p != "__init__")
        out.append((name, path))
    return out


def _imports(path: Path, module: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: -node.level] if path.name != "__init__.py" else module.split(".")
                found.add(".".join([*base, node.module or ""]).rstrip("."))
            else:
                found.add(node.module or "")
    return found


@pytest.mark.parametrize(("module", "path"), _modules(), ids=lambda v: str(v))
def test_imports_point_one_way(module: str, path: Path):
    imports = _imports(path, module)
    if not module.startswith(("rulecli.cli", "rulecli.__main__")):
        assert not any(i.split(".")[0] in TERMINAL for i in imports), f"{module} talks to the terminal"
        assert not any(i.startswith("rulecli.cli") for i in imports), f"{module} imports the CLI"
    for prefix, banned in FORBIDDEN.items():
        if module.startswith(prefix):
            bad = [
                i
                for i in imports
                if i.startswith(banned) and not (prefix == "rulecli.params" and i == "rulecli.errors")
            ]
            assert not bad, f"{module} may not import {bad}"
    if not module.startswith(API_USERS) and module not in ("rulecli", "rulecli.__main__"):
        assert "rulecli.api" not in imports, f"{module} imports the API"


LIBRARY = [(m, p) for m, p in _modules() if m != "rulecli.io" and not m.startswith("rulecli.cli")]


@pytest.mark.parametrize(("module", "path"), LIBRARY, ids=lambda v: str(v))
def test_only_io_touches_files(module: str, path: Path):
    source = path.read_text()
    # calls through rulecli.io (``io.read_text(``) are how the library touches files
    assert not re.search(r"\bopen\(|(?<!io\.)(read_text|write_text|read_bytes|write_bytes)\(", source), module
    calls = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    assert not [c for c in calls if c.func.id in ("print", "open", "input")], module


def test_no_row_loops_in_the_library():
    for module, path in _modules():
        source = path.read_text()
        for banned in ("iter_rows", "map_elements", "to_pandas", "import pickle"):
            assert banned not in source, f"{module} uses {banned}"


def test_the_code_cites_papers_not_the_teaching_texts_beside_the_repository():
    # the texts the algorithms were specified from are not shipped: a reader of the code
    # follows a citation to a paper or a page under docs/
    cited = [
        f"{path.name}:{n}"
        for _, path in _modules()
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"shared/seeds|\bseeds? \d{3}\b|\bseeds'|\blecture\b", line)
    ]
    assert not cited, cited


FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]+")


def _user_texts(tree: ast.AST) -> set[int]:
    """The string nodes that are help or examples for the command line, or docstrings:
    those may name flags (a library message names parameters instead)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef) and body and isinstance(body[0], ast.Expr):
            out.add(id(body[0].value))
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        declared = [*node.args, *(k.value for k in node.keywords)] if name.endswith("param") else []
        shown = [k.value for k in node.keywords if k.arg in ("help", "examples")]
        out.update(id(inner) for part in (*declared, *shown) for inner in ast.walk(part))
    return out


def _flags_in_messages(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    allowed = _user_texts(tree)
    return [
        f"{path.name}:{node.lineno}: {node.value[:60]!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in allowed
        if FLAG.search(node.value)
    ]


def test_library_messages_name_parameters_not_flags():
    # a Python user reads "`target_bins` must be at least 2"; the command shows its own flag
    # there (rulecli.cli.naming)
    named = [
        hit for module, path in _modules() if not module.startswith("rulecli.cli") for hit in _flags_in_messages(path)
    ]
    assert not named, named


def test_the_flag_check_sees_a_message_naming_a_flag(tmp_path: Path):
    module = tmp_path / "m.py"
    module.write_text(
        '"""Docs may say --target."""\n'
        'x = param(1, "Help may say --bins.")\n'
        'raise ParamError(f"--target-bins must be at least {2}")\n'
    )
    assert [hit.split(":")[1] for hit in _flags_in_messages(module)] == ["3"]


MAX_FUNCTION_LINES = 60


def test_no_function_is_longer_than_a_screen():
    # a function that does one thing fits on a screen; a longer one hides its parts' names
    long = [
        f"{path.name}::{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for _, path in _modules()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        if node.end_lineno is not None and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long, long
