"""The slash commands as they are sent to Discord, checked against Discord's documented limits.

Discord rejects the whole bulk upload when one command breaks a rule, so every rule that
could bite is checked here on the exact payload discord.py would PUT.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from adapters.discord.access import AccessPolicy
from adapters.discord.client import MnemoDiscordClient
from tests.adapters.discord.conftest import RecordingCore

NAME = re.compile(r"^[-_\w]{1,32}$")
SUB_COMMAND, SUB_COMMAND_GROUP = 1, 2
MAX_GLOBAL_COMMANDS = 100
MAX_OPTIONS = 25
MAX_CHOICES = 25
MAX_COMBINED_CHARACTERS = 4000


def check_name(where: str, name: str) -> list[str]:
    problems = []
    if not NAME.match(name):
        problems.append(f"{where}: name {name!r} does not match ^[-_\\w]{{1,32}}$")
    if name != name.lower():
        problems.append(f"{where}: name {name!r} is not lowercase")
    return problems


def check_description(where: str, description: str) -> list[str]:
    if 1 <= len(description) <= 100:
        return []
    return [f"{where}: description is {len(description)} characters (1-100)"]


def check_option(where: str, option: dict[str, Any]) -> list[str]:
    here = f"{where} {option['name']}"
    problems = check_name(here, option["name"]) + check_description(here, option["description"])
    choices = option.get("choices") or []
    if len(choices) > MAX_CHOICES:
        problems.append(f"{here}: {len(choices)} choices (max {MAX_CHOICES})")
    if choices and option.get("autocomplete"):
        problems.append(f"{here}: choices and autocomplete together")
    for choice in choices:
        if not 1 <= len(choice["name"]) <= 100:
            problems.append(f"{here}: choice name {choice['name']!r} not 1-100 characters")
    for key in ("min_length", "max_length"):
        if key in option and not 0 <= option[key] <= 6000:
            problems.append(f"{here}: {key} {option[key]} outside 0-6000")
    if option["type"] in (SUB_COMMAND, SUB_COMMAND_GROUP):
        problems += check_options(here, option.get("options") or [], option["type"])
    return problems


def check_options(where: str, options: list[dict[str, Any]], parent_type: int | None) -> list[str]:
    problems = []
    if len(options) > MAX_OPTIONS:
        problems.append(f"{where}: {len(options)} options or sub-commands (max {MAX_OPTIONS})")
    names = [option["name"] for option in options]
    if len(set(names)) != len(names):
        problems.append(f"{where}: duplicate option names {names}")
    kinds = {option["type"] in (SUB_COMMAND, SUB_COMMAND_GROUP) for option in options}
    if len(kinds) > 1:
        problems.append(f"{where}: sub-commands mixed with plain options")
    if parent_type == SUB_COMMAND_GROUP and any(o["type"] != SUB_COMMAND for o in options):
        problems.append(f"{where}: a sub-command group may hold only sub-commands")
    required = [bool(option.get("required")) for option in options]
    if required != sorted(required, reverse=True):
        problems.append(f"{where}: a required option comes after an optional one")
    for option in options:
        problems += check_option(where, option)
    return problems


def combined_characters(command: dict[str, Any]) -> int:
    """Name, description, and option names, descriptions and choice values, all levels."""
    total = len(command["name"]) + len(command["description"])
    for option in command.get("options") or []:
        total += combined_characters(option)
        total += sum(len(str(choice["value"])) for choice in option.get("choices") or [])
    return total


def limit_violations(commands: list[dict[str, Any]]) -> list[str]:
    problems = []
    if len(commands) > MAX_GLOBAL_COMMANDS:
        problems.append(f"{len(commands)} global commands (max {MAX_GLOBAL_COMMANDS})")
    names = [command["name"] for command in commands]
    if len(set(names)) != len(names):
        problems.append(f"duplicate command names {names}")
    for command in commands:
        where = f"/{command['name']}"
        problems += check_name(where, command["name"])
        problems += check_description(where, command["description"])
        problems += check_options(where, command.get("options") or [], None)
        if combined_characters(command) > MAX_COMBINED_CHARACTERS:
            problems.append(f"{where}: more than {MAX_COMBINED_CHARACTERS} characters in all")
        if not set(command.get("contexts") or []) <= {0, 1, 2}:
            problems.append(f"{where}: unknown contexts {command['contexts']}")
    return problems


@pytest.fixture
def registered() -> list[dict[str, Any]]:
    """The payload discord.py would PUT to /applications/{id}/commands."""
    client = MnemoDiscordClient(RecordingCore(), AccessPolicy())
    return [command.to_dict(client.tree) for command in client.tree.get_commands()]


def test_the_commands_fit_every_discord_limit(registered: list[dict[str, Any]]) -> None:
    assert limit_violations(registered) == []


def test_memory_group_has_the_sub_commands_people_expect(registered: list[dict[str, Any]]) -> None:
    by_name = {command["name"]: command for command in registered}
    assert set(by_name) == {"memory", "search"}
    memory = {option["name"]: option for option in by_name["memory"]["options"]}
    assert list(memory) == [
        "list", "search", "forget", "forget-all", "undo", "history", "export", "pause",
        "resume", "help",
    ]  # fmt: skip
    assert all(option["type"] == SUB_COMMAND for option in memory.values())
    for name in ("forget", "history"):
        (fact,) = memory[name]["options"]
        assert (fact["name"], fact["type"], fact["required"], fact["autocomplete"]) == (
            "fact", 4, True, True,
        )  # fmt: skip
    (query,) = by_name["search"]["options"]
    assert (query["name"], query["type"], query["required"]) == ("query", 3, True)


def test_commands_work_in_servers_and_direct_messages_only(
    registered: list[dict[str, Any]],
) -> None:
    for command in registered:
        assert command["contexts"] == [0, 1]  # guild, bot DM; not other people's group DMs
        assert command["integration_types"] == [0]  # installed to a server, not to a user


@pytest.mark.parametrize(
    ("broken", "expected"),
    [
        ({"name": "Memory"}, "is not lowercase"),
        ({"name": "memory list"}, "does not match"),
        ({"name": "m" * 33}, "does not match"),
        ({"description": ""}, "description is 0 characters"),
        ({"description": "d" * 101}, "description is 101 characters"),
        (
            {"options": [{"name": f"o{i}", "description": "d", "type": 3} for i in range(26)]},
            "26 options",
        ),
        (
            {"options": [
                {"name": "a", "description": "d", "type": 3},
                {"name": "b", "description": "d", "type": 3, "required": True},
            ]},
            "required option comes after an optional one",
        ),
        (
            {"options": [{"name": "a", "description": "d", "type": 3, "choices": [
                {"name": f"c{i}", "value": i} for i in range(26)
            ]}]},
            "26 choices",
        ),
        ({"description": "d" * 100, "options": [
            {"name": f"o{i}", "description": "d" * 100, "type": 1, "options": [
                {"name": "x", "description": "d" * 100, "type": 3}
            ]} for i in range(25)
        ]}, "characters in all"),
    ],
)  # fmt: skip
def test_the_checker_catches_what_discord_would_reject(
    broken: dict[str, Any], expected: str
) -> None:
    command = {"name": "memory", "description": "ok", "type": 1, "options": [], **broken}
    problems = limit_violations([command])
    assert any(expected in problem for problem in problems), problems


def test_the_checker_counts_commands() -> None:
    commands = [{"name": f"c{i}", "description": "d", "type": 1} for i in range(101)]
    assert limit_violations(commands) == ["101 global commands (max 100)"]
