"""The stages on their own: prompts, extraction parsing, the guards, normalisation, pre-check."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

import numpy as np
import pytest

from memory.llm import AnswerCut, CallKind, ScriptedLanguageModel
from memory.records import Action, Fact, FactSource, FactStatus
from memory.write.candidates import Candidate
from memory.write.decision import DecisionOutcome, decide
from memory.write.errors import UnusableModelOutput
from memory.write.extraction import ProposedFact, extract_facts
from memory.write.guards import Guard, PlannedWrite, Subject, from_outcome, limit_batch
from memory.write.normalise import normalise_text
from memory.write.precheck import may_hold_fact
from memory.write.prompts.decision import Decision, DecisionItem
from tests.memory.write.helpers import MESSAGE_TIME, decided, extracted


def stored(fact_id: int, text: str) -> Fact:
    return Fact(
        fact_id, "console:alice", "console:room1", text, "other", FactStatus.ACTIVE,
        FactSource.STATED, MESSAGE_TIME, None, None, None, None, "m",
    )  # fmt: skip


def subject(text: str, *candidates: Fact) -> Subject:
    return Subject(
        ProposedFact(text), np.zeros(3, dtype=np.float32), [Candidate(c, 0.9) for c in candidates]
    )


async def test_extraction_prompt_is_the_same_for_every_message_and_sends_only_it() -> None:
    llm = ScriptedLanguageModel([extracted(), extracted()])
    await extract_facts(llm, "I started at Acme yesterday", MESSAGE_TIME)
    await extract_facts(llm, "I have a cat", MESSAGE_TIME.replace(year=2030))
    first, second = llm.calls
    assert [message.role for message in first.messages] == ["system", "user"]
    assert first.messages[1].content == "I started at Acme yesterday"
    # No date in the prompt: the model copies words, code resolves them (and servers can
    # reuse the processing of a system prompt that never changes).
    assert first.messages[0].content == second.messages[0].content
    assert "questions, also questions about the author themselves" in first.messages[0].content
    assert first.kind is CallKind.EXTRACTION
    assert first.json_schema is not None and "when" in json.dumps(first.json_schema)


async def test_extraction_resolves_the_copied_date_words_against_the_message_time() -> None:
    llm = ScriptedLanguageModel(
        [extracted("I started working at Acme yesterday", category="Work", when="yesterday")]
    )
    (fact,) = (await extract_facts(llm, "I started at Acme yesterday", MESSAGE_TIME)).facts
    assert fact.valid_from == datetime(2026, 11, 26, tzinfo=UTC)
    assert fact.text == "I started working at Acme yesterday (2026-11-26)"
    assert fact.category == "work"


async def test_a_date_the_message_does_not_contain_is_dropped_but_the_fact_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The tiny model put today's date on every fact: words not in the message give none."""
    llm = ScriptedLanguageModel(
        [extracted("I got married", category="feelings", when="2026-11-27")]
    )
    with caplog.at_level(logging.INFO):
        (fact,) = (await extract_facts(llm, "I got married", MESSAGE_TIME)).facts
    assert (fact.text, fact.valid_from, fact.category) == ("I got married", None, "other")
    assert "is not a date of the message" in caplog.text


async def test_a_fact_only_asked_about_is_not_written() -> None:
    """ "Where do I live?" became "I live in Berlin" with the tiny model."""
    llm = ScriptedLanguageModel([extracted("I live in Berlin")])
    extraction = await extract_facts(llm, "Where do I live?", MESSAGE_TIME)
    assert extraction.facts == []
    assert [fact.text for fact in extraction.ungrounded] == ["I live in Berlin"]


async def test_a_cut_extraction_is_unusable_not_an_outage() -> None:
    llm = ScriptedLanguageModel(
        [AnswerCut(CallKind.EXTRACTION, 512, '{"facts": [{"text": "I have a ca')]
    )
    with pytest.raises(UnusableModelOutput, match="budget of 512 tokens"):
        await extract_facts(llm, "I have a cat", MESSAGE_TIME)


@pytest.mark.parametrize(
    ("answer", "detail"),
    [
        ("not json at all", "Invalid JSON"),
        ('{"facts": [{"category": "work"}]}', "facts.0.text"),
        ('{"items": []}', "facts"),
    ],
)
async def test_unusable_extraction_says_why(answer: str, detail: str) -> None:
    llm = ScriptedLanguageModel([answer])
    with pytest.raises(UnusableModelOutput, match=detail):
        await extract_facts(llm, "I live in Paris", MESSAGE_TIME)


async def test_fenced_json_is_accepted() -> None:
    llm = ScriptedLanguageModel(["```json\n" + extracted("I have a cat") + "\n```"])
    extraction = await extract_facts(llm, "I have a cat", MESSAGE_TIME)
    assert [f.text for f in extraction.facts] == ["I have a cat"]


async def test_a_fact_translated_into_english_is_asked_for_again_in_the_message_words() -> None:
    """The 1.5B model wrote "I am 30 years old now." for "J'ai 30 ans maintenant."."""
    first = extracted("I am 30 years old now.")
    llm = ScriptedLanguageModel([first, extracted("J'ai 30 ans maintenant.")])
    extraction = await extract_facts(llm, "J'ai 30 ans maintenant.", MESSAGE_TIME)
    assert [fact.text for fact in extraction.facts] == ["J'ai 30 ans maintenant."]
    again = llm.calls[1].messages
    assert [message.role for message in again] == ["system", "user", "assistant", "user"]
    assert again[2].content == first
    assert "- I am 30 years old now.\n" in again[3].content


@pytest.mark.parametrize(
    ("message", "fact"),
    [
        ("I am 30 now.", "I am 30 years old now."),
        ("Ich wohne in Leipzig.", "Ich wohne in Leipzig."),
        # Nothing tells the language (a name alone), or it is not one of those it tells.
        ("Claire!", "My name is Claire."),
        ("Ik woon in Utrecht.", "I live in Utrecht."),
    ],
)
async def test_a_fact_in_the_language_of_its_message_is_not_asked_for_again(
    message: str, fact: str
) -> None:
    llm = ScriptedLanguageModel([extracted(fact)])
    await extract_facts(llm, message, MESSAGE_TIME)
    assert len(llm.calls) == 1


async def test_a_second_answer_never_loses_a_fact_the_first_had_in_the_message_words() -> None:
    """Asked again, the 0.5B model repeated the English fact and left out the French one."""
    message = "J'ai déménagé, j'habite à Nantes maintenant."
    llm = ScriptedLanguageModel(
        [
            extracted("I live in Lille.", "J'habite à Nantes maintenant."),
            extracted("I live in Lille."),
        ]
    )
    extraction = await extract_facts(llm, message, MESSAGE_TIME)
    assert [fact.text for fact in extraction.facts] == ["J'habite à Nantes maintenant."]
    assert [fact.text for fact in extraction.ungrounded] == ["I live in Lille."]


async def test_an_unusable_second_answer_leaves_the_first_standing() -> None:
    llm = ScriptedLanguageModel([extracted("I live in Nantes."), '{"facts": [{"te'])
    extraction = await extract_facts(llm, "J'habite à Nantes.", MESSAGE_TIME)
    assert [fact.text for fact in extraction.facts] == ["I live in Nantes."]
    assert len(llm.calls) == 2


async def test_decision_prompt_numbers_candidates_per_fact() -> None:
    items = [
        DecisionItem(1, "I live in Berlin", ("I live in Paris", "I work in Paris")),
        DecisionItem(2, "I love chess", ("I like chess",)),
    ]
    llm = ScriptedLanguageModel([decided((1, "UPDATE", 1), (2, "NONE", 1))])
    await decide(llm, items)
    prompt = llm.calls[0].messages[1].content
    assert prompt.splitlines() == [
        "New fact 1: I live in Berlin",
        "  Existing facts:",
        "    1: I live in Paris",
        "    2: I work in Paris",
        "New fact 2: I love chess",
        "  Existing facts:",
        "    1: I like chess",
    ]
    assert len(llm.calls) == 1


async def test_decision_retry_states_the_error() -> None:
    items = [DecisionItem(1, "I live in Berlin", ("I live in Paris",))]
    llm = ScriptedLanguageModel([decided((1, "UPDATE", 3)), decided((1, "UPDATE", 1))])
    outcomes = await decide(llm, items)
    retry = llm.calls[1].messages
    assert retry[-2].role == "assistant" and retry[-2].content == decided((1, "UPDATE", 3))
    assert "target 3 was not shown for it; the existing facts shown for it are 1..1" in (
        retry[-1].content
    )
    assert outcomes[0].final == Decision(fact=1, action="UPDATE", target=1)
    assert len(llm.calls) == 2


def test_identical_update_becomes_none() -> None:
    target = stored(40, "I'm 34 years old")
    item = DecisionItem(1, "I'm 34 years old!", (target.text,))
    update = Decision(fact=1, action="UPDATE", target=1)
    plan = from_outcome(
        subject("i'm 34 years old!", target), DecisionOutcome(item, update, update, False)
    )
    assert (plan.action, plan.guard, plan.target) == (Action.NONE, Guard.IDENTICAL_UPDATE, target)
    assert (plan.proposed_action, plan.proposed_target) == ("UPDATE", "1")


def test_similar_but_different_update_stays_an_update() -> None:
    target = stored(40, "I'm 34 years old")
    item = DecisionItem(1, "I'm 35 years old", (target.text,))
    update = Decision(fact=1, action="update", target=1)
    plan = from_outcome(
        subject("I'm 35 years old", target), DecisionOutcome(item, update, update, False)
    )
    assert (plan.action, plan.guard, plan.target) == (Action.UPDATE, None, target)


def test_cap_and_duplicate_target_keep_corrections_as_adds() -> None:
    facts = [stored(i, f"fact {i}") for i in range(1, 6)]
    plans = [
        PlannedWrite(subject("a", facts[0]), Action.UPDATE, facts[0]),
        PlannedWrite(subject("b", facts[0]), Action.DELETE, facts[0]),
        PlannedWrite(subject("c", facts[1]), Action.DELETE, facts[1]),
        PlannedWrite(subject("d", facts[2]), Action.UPDATE, facts[2]),
        PlannedWrite(subject("e", facts[3]), Action.UPDATE, facts[3]),
        PlannedWrite(subject("f", facts[4]), Action.DELETE, facts[4]),
    ]
    limited = limit_batch(plans, max_destructive=3)
    assert [(p.action, p.guard) for p in limited] == [
        (Action.UPDATE, None),
        (Action.NONE, Guard.DUPLICATE_TARGET),
        (Action.DELETE, None),
        (Action.UPDATE, None),
        (Action.ADD, Guard.DESTRUCTIVE_CAP),
        (Action.NONE, Guard.DESTRUCTIVE_CAP),
    ]


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        ("I like chess.", "i like CHESS", True),
        ("I\u2019m 34 years old", "I'm 34 years old", True),  # curly apostrophe
        ("  I live   in Paris ", "I live in Paris!", True),
        ("I'm 34 years old", "I'm 35 years old", False),
        ("I prefer tea over coffee", "I prefer coffee over tea", False),
    ],
)
def test_normalise(first: str, second: str, same: bool) -> None:
    assert (normalise_text(first) == normalise_text(second)) is same


@pytest.mark.parametrize(
    ("message", "may_hold"),
    [
        ("ok", False),
        ("Thanks a lot!", False),
        ("👍👍", False),
        ("haha nice", False),
        ("merci beaucoup", True),  # "beaucoup" is not in the list: sent to the model
        ("", False),
        ("ok, I live in Paris now", True),
        ("no, I'm vegetarian", True),
        ("I'm 34", True),
        # Only questions or hypotheticals: grounding would keep out any fact, so no call.
        ("what's the weather in Paris?", False),
        ("Where do I live?", False),
        ("If I won the lottery I would buy a boat.", False),
        ("I moved to Lyon, what's the weather there?", True),
        ("good night, I start my new job tomorrow", True),
        # Only a request to the assistant: no call either.
        ("Please write a short poem about the sea.", False),
        ("Tell me a joke, I'm bored.", True),
    ],
)
def test_precheck(message: str, may_hold: bool) -> None:
    assert may_hold_fact(message) is may_hold
