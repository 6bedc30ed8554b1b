"""Stage 1: ask the model for the facts the user states about themselves in one message."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, date, datetime

from memory.llm import LanguageModel
from memory.write.parsing import parse_answer
from memory.write.prompts import extraction as prompt

log = logging.getLogger(__name__)

DEFAULT_CATEGORY = "other"


@dataclass(frozen=True, slots=True)
class ProposedFact:
    """A fact taken from a message, before it is compared with what is already known."""

    text: str
    category: str = DEFAULT_CATEGORY
    valid_from: datetime | None = None


async def extract_facts(
    llm: LanguageModel, text: str, message_time: datetime
) -> list[ProposedFact]:
    """The user's own facts in ``text``; raises UnusableModelOutput on a broken answer.

    Only the user's message is sent: bot replies and web results never become facts.
    """
    raw = await llm.complete(
        prompt.build_messages(text, message_time), json_schema=prompt.json_schema(), temperature=0
    )
    response = parse_answer("extraction", raw, prompt.ExtractionResponse)
    facts = [to_proposed(extracted) for extracted in response.facts if extracted.text.strip()]
    return facts


def to_proposed(extracted: prompt.ExtractedFact) -> ProposedFact:
    category = extracted.category.strip().lower()
    return ProposedFact(
        text=" ".join(extracted.text.split()),
        category=category if category in prompt.CATEGORIES else DEFAULT_CATEGORY,
        valid_from=parse_day(extracted.valid_from, extracted.text),
    )


def parse_day(value: str | None, fact_text: str) -> datetime | None:
    """A YYYY-MM-DD date as midnight UTC; a malformed date is dropped, the fact is kept."""
    if value is None or not value.strip():
        return None
    try:
        day = date.fromisoformat(value.strip()[:10])
    except ValueError:
        log.warning(
            "extraction gave an unreadable date %r for %r; keeping the fact", value, fact_text
        )
        return None
    return datetime(day.year, day.month, day.day, tzinfo=UTC)
