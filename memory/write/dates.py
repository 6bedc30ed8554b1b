"""When a fact became true: the message's own words, resolved against the message's time.

The model only copies the words that say when; ``dateparser`` resolves them (small models
put today's date on every fact). Words not in the message are dropped: no date beats a
wrong one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import dateparser

from memory.write.grounding import plain

# Any base far enough away that a relative expression resolves to another day.
SHIFT = timedelta(days=400)


@dataclass(frozen=True, slots=True)
class Resolved:
    day: datetime
    relative: bool


def parse_at(words: str, base: datetime) -> datetime | None:
    naive = base.astimezone(UTC).replace(tzinfo=None)
    return dateparser.parse(words, settings={"RELATIVE_BASE": naive})


def resolve(words: str | None, message: str, message_time: datetime) -> Resolved | None:
    """The day ``words`` (copied from ``message``) name, or None if they are not in the message
    or name no day. Blocking (dateparser may try many languages): call it in a thread."""
    if words is None or not words.strip() or plain(words.strip()) not in plain(message):
        return None
    parsed = parse_at(words, message_time)
    if parsed is None:
        return None
    elsewhere = parse_at(words, message_time - SHIFT)
    day = datetime(parsed.year, parsed.month, parsed.day, tzinfo=UTC)
    return Resolved(day, relative=elsewhere is None or elsewhere.date() != parsed.date())


def with_date(text: str, words: str, resolved: Resolved) -> str:
    """``text`` with the absolute day after a relative ``words`` it contains."""
    if not resolved.relative:
        return text
    start = plain(text).find(plain(words.strip()))
    if start < 0 or len(plain(text)) != len(text):
        return text
    end = start + len(words.strip())
    return f"{text[:end]} ({resolved.day.date().isoformat()}){text[end:]}"
