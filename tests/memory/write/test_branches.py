"""Every branch of the write path, table-driven: real embedding model, real SQLite and LanceDB,
and a scripted model that answers exactly what a real one would (mistakes included)."""

from __future__ import annotations

import pytest

from memory.embedding import FastEmbedEmbedder
from memory.index import LanceFactIndex
from memory.llm import LanguageModelUnavailable, ScriptedLanguageModel
from memory.records import Action
from memory.store import Store
from memory.write import WriteSettings
from tests.memory.write.helpers import (
    ALICE,
    CHESS,
    PARIS,
    Case,
    check_case,
    decided,
    extracted,
    make_writer,
    pipeline_events,
    say,
    seed,
)

CASES = [
    Case(
        "a DELETE of the person's fact by one about their sister: added, both stay",
        ("I live in Lyon",),
        "My sister no longer lives in Lyon",
        (extracted("My sister no longer lives in Lyon"), decided((1, "DELETE", 1))),
        frozenset({"I live in Lyon", "My sister no longer lives in Lyon"}),
        (Action.ADD,),
        ("other_person",),
        llm_calls=2,
    ),
    Case(
        "no candidates: ADD without a decision call",
        (PARIS,),
        "I have a cat named Miso",
        (extracted("I have a cat named Miso"),),
        frozenset({PARIS, "I have a cat named Miso"}),
        (Action.ADD,),
        ("no_candidates",),
        llm_calls=1,
    ),
    Case(
        "normalised duplicate: NONE without a decision call",
        (CHESS,),
        "i like chess!!",
        (extracted("I like Chess!"),),
        frozenset({CHESS}),
        (Action.NONE,),
        ("normalised_duplicate",),
        llm_calls=1,
    ),
    Case(
        "correct UPDATE supersedes",
        (PARIS,),
        "I moved to Berlin",
        (extracted("I live in Berlin"), decided((1, "UPDATE", 1))),
        frozenset({"I live in Berlin"}),
        (Action.UPDATE,),
        (None,),
        llm_calls=2,
    ),
    Case(
        "34 -> 35 stays an UPDATE although cosine is 0.94",
        ("I'm 34 years old",),
        "I turned 35 today",
        (extracted("I'm 35 years old"), decided((1, "UPDATE", 1))),
        frozenset({"I'm 35 years old"}),
        (Action.UPDATE,),
        (None,),
        llm_calls=2,
    ),
    Case(
        "DELETE soft-deletes",
        (CHESS,),
        "I no longer like chess",
        (extracted("I no longer like chess"), decided((1, "DELETE", 1))),
        frozenset(),
        (Action.DELETE,),
        (None,),
        llm_calls=2,
    ),
    Case(
        "an UPDATE that only says the known fact stopped: a DELETE",
        ("I play chess every week",),
        "I don't play chess anymore",
        (extracted("I no longer play chess"), decided((1, "UPDATE", 1))),
        frozenset(),
        (Action.DELETE,),
        ("ended",),
        llm_calls=2,
    ),
    Case(
        "an ADD of a fact that only says a known one stopped: a DELETE of that one",
        ("I have a cat",),
        "Sadly I don't have a cat anymore",
        (extracted("I don't have a cat anymore"), decided((1, "ADD", None))),
        frozenset(),
        (Action.DELETE,),
        ("ended",),
        llm_calls=2,
    ),
    Case(
        "an ADD of a dated end: an UPDATE of the fact that stopped, with its date",
        ("I smoke",),
        "I no longer smoke, since last year",
        (extracted("I no longer smoke", when="last year"), decided((1, "ADD", None))),
        frozenset({"I no longer smoke"}),
        (Action.UPDATE,),
        ("ended",),
        llm_calls=2,
    ),
    Case(
        "an end with its date stays an UPDATE: the date is kept",
        ("I smoke",),
        "I quit smoking last year",
        (extracted("I no longer smoke", when="last year"), decided((1, "UPDATE", 1))),
        frozenset({"I no longer smoke"}),
        (Action.UPDATE,),
        (None,),
        llm_calls=2,
    ),
    Case(
        "paraphrase judged NONE by the model",
        (CHESS,),
        "I really enjoy playing chess",
        (extracted("I really enjoy playing chess"), decided((1, "NONE", 1))),
        frozenset({CHESS}),
        (Action.NONE,),
        (None,),
        llm_calls=2,
    ),
    Case(
        "hallucinated UPDATE target: one retry, then ADD",
        (PARIS,),
        "I moved to Berlin",
        (extracted("I live in Berlin"), decided((1, "UPDATE", 7)), decided((1, "UPDATE", 9))),
        frozenset({PARIS, "I live in Berlin"}),
        (Action.ADD,),
        ("invalid_target",),
        llm_calls=3,
    ),
    Case(
        "hallucinated DELETE target: one retry, then NONE",
        (CHESS,),
        "I no longer like chess",
        (
            extracted("I no longer like chess"),
            decided((1, "DELETE", 4)),
            decided((1, "DELETE", None)),
        ),
        frozenset({CHESS}),
        (Action.NONE,),
        ("invalid_target",),
        llm_calls=3,
    ),
    Case(
        "missing target fixed by the retry",
        (PARIS,),
        "I moved to Berlin",
        (extracted("I live in Berlin"), decided((1, "UPDATE", None)), decided((1, "UPDATE", 1))),
        frozenset({"I live in Berlin"}),
        (Action.UPDATE,),
        ("invalid_target_retried",),
        llm_calls=3,
    ),
    Case(
        "broken retry answer counts as still invalid",
        (PARIS,),
        "I moved to Berlin",
        (extracted("I live in Berlin"), decided((1, "UPDATE", 5)), '{"decisions": [{"fact": 1,'),
        frozenset({PARIS, "I live in Berlin"}),
        (Action.ADD,),
        ("invalid_target",),
        llm_calls=3,
    ),
    Case(
        "same target twice in a batch: only the first applies",
        (PARIS,),
        "I live in Berlin, yes I live in Berlin now",
        (
            extracted("I live in Berlin", "I live in Berlin now"),
            decided((1, "UPDATE", 1), (2, "UPDATE", 1)),
        ),
        frozenset({"I live in Berlin", "I live in Berlin now"}),
        (Action.UPDATE, Action.ADD),
        (None, "duplicate_target"),
        llm_calls=2,
    ),
    Case(
        "a fact repeated within the message is written once",
        (),
        "I have a cat. Did I say I have a cat?",
        (extracted("I have a cat", "I have a cat."),),
        frozenset({"I have a cat"}),
        (Action.ADD, Action.NONE),
        ("no_candidates", "repeated_in_message"),
        llm_calls=1,
    ),
    Case(
        "a fact the model forgot to decide: retried, then kept as ADD",
        (PARIS, CHESS),
        "I live in Lyon and I love chess",
        (
            extracted("I live in Lyon", "I love chess"),
            decided((1, "UPDATE", 1)),
            decided((1, "UPDATE", 1)),
        ),
        frozenset({"I live in Lyon", CHESS, "I love chess"}),
        (Action.UPDATE, Action.ADD),
        (None, "missing_decision"),
        llm_calls=3,
    ),
    Case(
        "small talk: the pre-check skips the model",
        (PARIS,),
        "thanks a lot 👍",
        (),
        frozenset({PARIS}),
        (),
        (),
        llm_calls=0,
    ),
    Case(
        "a question yields no facts, and costs no call",
        (PARIS,),
        "what's the weather like in Paris tomorrow?",
        (),
        frozenset({PARIS}),
        (),
        (),
        llm_calls=0,
    ),
    Case(
        "broken extraction JSON: queued, store unchanged",
        (PARIS,),
        "I moved to Berlin",
        ('{"facts": [{"text": "I live in Berl',),
        frozenset({PARIS}),
        (Action.NONE,),
        ("unusable_output",),
        llm_calls=1,
        queued_after=1,
    ),
    Case(
        "broken decision JSON: queued, store unchanged",
        (PARIS,),
        "I moved to Berlin",
        (extracted("I live in Berlin"), "Sure! I would update fact 1."),
        frozenset({PARIS}),
        (Action.NONE,),
        ("unusable_output",),
        llm_calls=2,
        queued_after=1,
    ),
    Case(
        "unknown action: queued, never applied",
        (PARIS,),
        "I moved to Berlin",
        (extracted("I live in Berlin"), decided((1, "REPLACE", 1))),
        frozenset({PARIS}),
        (Action.NONE,),
        ("unusable_output",),
        llm_calls=2,
        queued_after=1,
    ),
    Case(
        "LLM outage: queued, store unchanged",
        (PARIS,),
        "I moved to Berlin",
        (LanguageModelUnavailable("connection refused"),),
        frozenset({PARIS}),
        (),
        (),
        llm_calls=1,
        queued_after=1,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
async def test_branch(
    case: Case, store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    await check_case(case, store, index, embedder)


async def test_events_keep_the_raw_proposal(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    await seed(store, index, embedder, ALICE, PARIS)
    llm = ScriptedLanguageModel(
        [
            extracted("I live in Berlin"),
            decided((1, "REPLACE", 1)),  # unknown action: queued
            extracted("I live in Berlin"),
            decided((1, "update", 7)),  # bad target, as returned
            decided((1, "UPDATE", 9)),
        ]
    )
    writer = make_writer(store, index, embedder, llm, WriteSettings(retry_base_seconds=0))
    await say(writer, ALICE, "I moved to Berlin")
    await writer.drain()

    events = await pipeline_events(store, ALICE)
    assert [(e.proposed_action, e.proposed_target, e.final_action, e.guard) for e in events] == [
        ("REPLACE", "1", Action.NONE, "unusable_output"),
        ("update", "7", Action.ADD, "invalid_target"),
    ]
