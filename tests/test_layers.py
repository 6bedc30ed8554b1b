"""The layout is the architecture: adapters -> bot -> memory, dependencies pointing down."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {"memory": {"bot", "adapters"}, "bot": {"adapters"}, "adapters": set[str]()}


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
