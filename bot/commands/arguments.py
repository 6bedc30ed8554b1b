"""Parsing command arguments into values, with the usage string as the error message."""

from __future__ import annotations

from bot.commands.errors import CommandError

# The largest id every backend stores: ids are INTEGER columns, 32-bit on PostgreSQL
# (SQLite's are 64-bit, but count from 1 and never get this far). A bigger number is no
# fact of anyone's, and would overflow PostgreSQL's query parameter. Checked on the digits,
# so no number is too long to read.
LARGEST_FACT_NUMBER = 2**31 - 1


def fact_number(text: str, usage: str) -> int:
    """The fact number in ``text`` (``3`` or ``#3``), or usage help."""
    cleaned = text.strip().removeprefix("#")
    if not cleaned.isdecimal():
        raise CommandError(f"Which fact? Give its number from the list. Usage: {usage}")
    if not fits(cleaned, LARGEST_FACT_NUMBER):
        raise CommandError(
            f"There is no fact #{cleaned}: fact numbers are those in the list. Usage: {usage}"
        )
    return int(cleaned)


def page_number(text: str, usage: str) -> int:
    """The page in ``text`` (1 if none); a page past the last is the caller's to refuse."""
    cleaned = text.strip()
    if not cleaned:
        return 1
    if cleaned.isdecimal() and not fits(cleaned, LARGEST_FACT_NUMBER):
        # Past the largest storable number is past the last page all the same.
        return LARGEST_FACT_NUMBER
    if not cleaned.isdecimal() or int(cleaned) < 1:
        raise CommandError(f"The page must be a number from 1. Usage: {usage}")
    return int(cleaned)


def fits(digits: str, largest: int) -> bool:
    """Whether the decimal ``digits`` are at most ``largest``, without converting a huge
    string (``int()`` refuses more than 4,300 digits)."""
    if len(digits.lstrip("0")) > len(str(largest)):
        return False
    return int(digits) <= largest


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
