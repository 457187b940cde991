"""The layout as docs/layout.md states it, checked on the import graph of the source: a few
root modules, no module cycle, no package cycle, the faces never imported back, every stage
declared in its package's `stage.py`, tests mirroring the packages."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOPS = ("vault_pipeline", "assets", "sensors")
FACES = {"vault_pipeline.definitions", "vault_pipeline.cli"}


def _modules() -> dict[str, Path]:
    modules = {}
    for top in TOPS:
        for path in (ROOT / top).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def _targets(module: str, path: Path, node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    assert isinstance(node, ast.ImportFrom)
    base = node.module or ""
    if node.level:
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, base] if base else package)
    return [base] + [f"{base}.{alias.name}" for alias in node.names]


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (anywhere in the file, lazy imports too)."""
    modules = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in _targets(module, path, node):
                    while target and target not in modules:
                        target = target.rpartition(".")[0]
                    if target and target != module:
                        graph[module].add(target)
        graph.setdefault(module, set())
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def package_of(module: str) -> str:
    """`vault_pipeline.<package>` for a module in a subpackage; a root module is its own node."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "vault_pipeline" and len(parts) > 1 else parts[0]


def test_cycles_are_found() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_cycle() -> None:
    assert cycles(import_graph()) == []


def test_no_package_cycle() -> None:
    packages: dict[str, set[str]] = defaultdict(set)
    for module, imported in import_graph().items():
        for target in imported:
            if package_of(module) != package_of(target):
                packages[package_of(module)].add(package_of(target))
    assert cycles(packages) == []


def test_root_is_a_table_of_contents() -> None:
    root = [p.name for p in (ROOT / "vault_pipeline").glob("*.py")]
    assert len(root) <= 8, sorted(root)


def test_faces_are_never_imported_back() -> None:
    def face(module: str) -> bool:
        return any(module == f or module.startswith(f + ".") for f in FACES)

    for module, imported in import_graph().items():
        if module.startswith("vault_pipeline") and not face(module):
            assert not any(t.startswith(("assets", "sensors")) or face(t) for t in imported), module
        if module.startswith(("assets", "sensors")):
            assert not any(face(t) for t in imported), module


def test_every_stage_is_declared_in_a_stage_module() -> None:
    for module, path in _modules().items():
        if module.startswith("vault_pipeline") and path.name != "stage.py":
            assert not re.search(r"\bStage\(", path.read_text()), module


def test_tests_mirror_the_packages() -> None:
    packages = {p.name for p in (ROOT / "vault_pipeline").iterdir()
                if p.is_dir() and any(p.glob("*.py"))}
    folders = {p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and p.name != "data"
               and not p.name.startswith((".", "__"))}
    extra = folders - packages - {"assets", "sensors", "project", "deploy", "e2e"}
    assert not extra, f"test folders that mirror no package: {sorted(extra)}"
    assert not [p.name for p in (ROOT / "tests").glob("test_*.py")
                if p.stem.removeprefix("test_") + ".py" not in
                {m.name for m in (ROOT / "vault_pipeline").glob("*.py")}]


def test_benchmarks_import_no_tests() -> None:
    for path in (ROOT / "benchmarks").glob("*.py"):
        assert not re.search(r"^\s*(from|import) tests\b", path.read_text(), re.M), path.name
