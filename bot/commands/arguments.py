"""Parsing command arguments into values, with the usage string as the error message."""

from __future__ import annotations

from bot.commands.errors import CommandError


def fact_number(text: str, usage: str) -> int:
    """The fact number in ``text`` (``3`` or ``#3``), or usage help."""
    cleaned = text.strip().removeprefix("#")
    if not cleaned.isdecimal():
        raise CommandError(f"Which fact? Give its number from the list. Usage: {usage}")
    return int(cleaned)


def page_number(text: str, usage: str) -> int:
    cleaned = text.strip()
    if not cleaned:
        return 1
    if not cleaned.isdecimal() or int(cleaned) < 1:
        raise CommandError(f"The page must be a number from 1. Usage: {usage}")
    return int(cleaned)


def required_text(text: str, usage: str, what: str) -> str:
    cleaned = text.strip()
    if not cleaned:
        raise CommandError(f"{what} Usage: {usage}")
    return cleaned


def not_found(fact_id: int, prefix: str) -> CommandError:
    """The same words for an unknown id and another person's or room's id."""
    return CommandError(
        f"I have no fact #{fact_id} about you here. See {prefix}memory list for the numbers."
    )
