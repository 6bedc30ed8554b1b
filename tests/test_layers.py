"""The layout is the architecture: adapters -> bot -> memory, dependencies pointing down;
evaluation (the tools of `mnemo eval` and `mnemo calibrate`) measures memory, and only the
command line uses it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {
    "memory": {"bot", "adapters", "evaluation"},
    "evaluation": {"bot", "adapters"},
    "bot": {"adapters"},
    "adapters": {"evaluation"},
}


def imported_packages(path: Path) -> set[str]:
    """Top-level packages a module imports, wherever the import stands (also in functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_package_imports_a_layer_above_it(package: str) -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported_packages(path) & FORBIDDEN[package])
        for path in sorted((ROOT / package).rglob("*.py"))
        if imported_packages(path) & FORBIDDEN[package]
    }
    assert offenders == {}


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text("def late():\n    from bot.app import build_application\n")
    assert "bot" in imported_packages(module)


def memory_parts_imported(path: Path) -> set[str]:
    """The parts of ``memory`` (``memory.store``, ``memory.records``...) a module imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.append(node.module)
    return {module.split(".")[1] for module in modules if module.startswith("memory.")}


def part_of(path: Path) -> str:
    relative = path.relative_to(ROOT / "memory")
    return relative.parts[0].removesuffix(".py")


def test_the_parts_of_memory_import_each_other_without_a_cycle() -> None:
    graph: dict[str, set[str]] = {}
    for path in (ROOT / "memory").rglob("*.py"):
        if path.parent == ROOT / "memory" and path.name == "__init__.py":
            continue
        part = part_of(path)
        graph.setdefault(part, set()).update(memory_parts_imported(path) - {part})
    cycles = [
        (part, other)
        for part, others in graph.items()
        for other in others
        if part in reach(graph, other)
    ]
    assert cycles == []


def reach(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for following in graph.get(todo.pop(), set()):
            if following not in seen:
                seen.add(following)
                todo.append(following)
    return seen
