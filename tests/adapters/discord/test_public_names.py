"""The Discord adapter's public names are the intended ones; it leans on no other adapter."""

from __future__ import annotations

import ast
from pathlib import Path

import adapters.discord

PACKAGE = Path(adapters.discord.__file__).parent


def test_public_names() -> None:
    assert sorted(adapters.discord.__all__) == [
        "AccessPolicy",
        "DiscordSetupError",
        "MnemoDiscordClient",
        "build_intents",
        "run_client",
        "split_message",
    ]
    assert all(hasattr(adapters.discord, name) for name in adapters.discord.__all__)


def test_it_imports_no_other_adapter() -> None:
    for module in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(module.read_text())
        imported = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module is not None
        } | {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        }
        foreign = {
            name
            for name in imported
            if name.startswith("adapters.") and not name.startswith("adapters.discord")
        }
        assert foreign == set(), f"{module.name} imports {foreign}"
