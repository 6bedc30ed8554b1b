"""Stage 1: ask the model for the facts the user states about themselves in one message.

The model proposes; code then checks each fact against the message: a fact that is not said
in it (only asked about, or invented) is kept aside as ``ungrounded``, and the words the
model copied for "when" are resolved to a date against the message's time.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from memory.llm import AnswerCut, CallKind, LanguageModel
from memory.write.dates import resolve, with_date
from memory.write.errors import UnusableModelOutput
from memory.write.grounding import is_grounded
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


@dataclass(frozen=True, slots=True)
class Extraction:
    """The facts to write, and those the model gave that the message does not state."""

    facts: list[ProposedFact]
    ungrounded: list[ProposedFact]


async def extract_facts(llm: LanguageModel, text: str, message_time: datetime) -> Extraction:
    """The user's own facts in ``text``; raises UnusableModelOutput on a broken or cut answer.

    Only the user's message is sent: bot replies and web results never become facts.
    """
    try:
        raw = await llm.complete(
            prompt.build_messages(text),
            kind=CallKind.EXTRACTION,
            json_schema=prompt.json_schema(),
            temperature=0,
        )
    except AnswerCut as error:
        raise UnusableModelOutput("extraction", str(error), error.text) from error
    response = parse_answer("extraction", raw, prompt.ExtractionResponse)
    extracted = [fact for fact in response.facts if fact.text.strip()]
    grounded = [fact for fact in extracted if is_grounded(fact.text, text)]
    ungrounded = [fact for fact in extracted if fact not in grounded]
    for fact in ungrounded:
        log.info("extraction: %r is not stated in the message; not written", fact.text)
    facts = await asyncio.to_thread(to_proposed_all, grounded, text, message_time)
    return Extraction(facts, [ProposedFact(" ".join(f.text.split())) for f in ungrounded])


def to_proposed_all(
    extracted: Sequence[prompt.ExtractedFact], message: str, message_time: datetime
) -> list[ProposedFact]:
    return [to_proposed(fact, message, message_time) for fact in extracted]


def to_proposed(
    extracted: prompt.ExtractedFact, message: str, message_time: datetime
) -> ProposedFact:
    category = extracted.category.strip().lower()
    text = " ".join(extracted.text.split())
    resolved = resolve(extracted.when, message, message_time)
    if extracted.when and resolved is None:
        log.info("extraction: %r is not a date of the message; %r gets none", extracted.when, text)
    if resolved is not None and extracted.when is not None:
        text = with_date(text, extracted.when, resolved)
    return ProposedFact(
        text=text,
        category=category if category in prompt.CATEGORIES else DEFAULT_CATEGORY,
        valid_from=None if resolved is None else resolved.day,
    )
