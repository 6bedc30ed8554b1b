"""Stage 1: ask the model for the facts the user states about themselves in one message;
a fact not said in it is kept aside as ``ungrounded``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, TypeVar

from memory.language import likely_languages
from memory.llm import CallKind, ChatMessage, LanguageModel
from memory.records import Fact
from memory.write.dates import resolve, with_date
from memory.write.errors import UnusableModelOutput
from memory.write.grounding import is_grounded
from memory.write.normalise import normalise_text
from memory.write.parsing import ask, parse_answer
from memory.write.prompts import extraction as prompt
from memory.write.prompts.extraction import ExtractedT
from memory.write.referents import joined_to_the_fact_before

log = logging.getLogger(__name__)

ResponseT = TypeVar("ResponseT", bound=prompt.FactsResponse[Any])

DEFAULT_CATEGORY = "other"


@dataclass(frozen=True, slots=True)
class InlineDecision:
    """What the model decided for a fact in the same call that extracted it (the combined
    prompt), with the number it gave resolved among the known facts it was shown."""

    action: str
    number: int | None
    # The known fact listed under ``number``; None when no fact was listed under it.
    target: Fact | None
    # Every known fact listed in that call, by id.
    shown: frozenset[int]


@dataclass(frozen=True, slots=True)
class ProposedFact:
    """A fact taken from a message, before it is compared with what is already known."""

    text: str
    category: str = DEFAULT_CATEGORY
    valid_from: datetime | None = None
    decision: InlineDecision | None = None


@dataclass(frozen=True, slots=True)
class Extraction:
    """The facts to write, and those the model gave that the message does not state."""

    facts: list[ProposedFact]
    ungrounded: list[ProposedFact]


def no_decision(_: prompt.ExtractedFact) -> InlineDecision | None:
    return None


async def extract_facts(llm: LanguageModel, text: str, message_time: datetime) -> Extraction:
    """The user's own facts in ``text`` (only the user's message is sent); raises
    UnusableModelOutput on a broken or cut answer."""
    messages = prompt.build_messages(text)
    response = await ask_for_facts(
        llm, messages, prompt.json_schema(), prompt.ExtractionResponse, text
    )
    return await from_answer(response.facts, text, message_time)


async def ask_for_facts(
    llm: LanguageModel,
    messages: Sequence[ChatMessage],
    json_schema: Mapping[str, object],
    answer_type: type[ResponseT],
    text: str,
) -> ResponseT:
    """The model's facts of ``text``, asked for once more, naming them, when it wrote facts
    of a message in another language in English (a small model "normalises" them so)."""
    raw = await ask(llm, CallKind.EXTRACTION, messages, json_schema)
    answer = parse_answer("extraction", raw, answer_type)
    english = in_english([fact.text for fact in answer.facts], text)
    if not english:
        return answer
    log.info("extraction: %r translated into English; asked again", english)
    again = [
        *messages,
        ChatMessage("assistant", raw),
        ChatMessage("user", prompt.in_their_words(english)),
    ]
    try:
        retried = parse_answer(
            "extraction", await ask(llm, CallKind.EXTRACTION, again, json_schema), answer_type
        )
    except UnusableModelOutput as error:
        log.warning("extraction: the second answer is unusable; the first stands: %s", error)
        return answer
    # A small model's second answer may leave out a fact the first had in the person's
    # words: asking again must never lose one.
    given = {normalise_text(fact.text) for fact in retried.facts}
    left_out = [
        fact
        for fact in answer.facts
        if fact.text not in english and normalise_text(fact.text) not in given
    ]
    return retried.model_copy(update={"facts": [*retried.facts, *left_out]})


def in_english(facts: Sequence[str], message: str) -> list[str]:
    """Those of ``facts`` that read as English though ``message`` is in another language."""
    written_in = likely_languages(message)
    if not written_in or "en" in written_in:
        return []
    return [fact for fact in facts if likely_languages(fact)[:1] == ["en"]]


async def from_answer(
    answered: Sequence[ExtractedT],
    text: str,
    message_time: datetime,
    decide: Callable[[ExtractedT], InlineDecision | None] = no_decision,
) -> Extraction:
    """The model's facts checked against the message (grounding), each that cannot stand
    alone joined to the fact before it (:mod:`memory.write.referents`), and dated."""
    extracted = [fact for fact in answered if fact.text.strip()]
    grounded = [fact for fact in extracted if is_grounded(fact.text, text)]
    ungrounded = [fact for fact in extracted if fact not in grounded]
    for fact in ungrounded:
        log.info("extraction: %r is not stated in the message; not written", fact.text)
    joined = joined_to_the_fact_before(grounded, text)
    sources = [source for source, _ in joined]
    for source, was_joined in joined:
        if was_joined:
            log.info("extraction: a fact that cannot stand alone was joined: %r", source.text)
    facts = await asyncio.to_thread(
        lambda: [to_proposed(source, text, message_time) for source in sources]
    )
    facts = [
        replace(fact, decision=None if was_joined else decide(source))
        for fact, (source, was_joined) in zip(facts, joined, strict=True)
    ]
    return Extraction(facts, [ProposedFact(" ".join(f.text.split())) for f in ungrounded])


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
