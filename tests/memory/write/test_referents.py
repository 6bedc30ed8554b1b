"""A fact that cannot stand alone is joined to the fact before it from the same message: one
that begins with "he", "she" or "they", and one that is the message's next words after the
fact before it. Cases are what the 1.5B model wrote for "I have a golden retriever called
Biscuit, he's three." (two facts, the second "he's three") and "hi! I am Sam, I just moved to
Porto with my partner Jo." (the third "with my partner Jo"), and what must stay apart."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.embedding import FastEmbedEmbedder
from memory.index import LanceFactIndex
from memory.records import Action
from memory.store import Store
from memory.write.extraction import InlineDecision, from_answer
from memory.write.prompts.combined import CombinedFact
from memory.write.prompts.extraction import ExtractedFact
from memory.write.referents import points_back
from tests.memory.write.helpers import Case, check_case, combined, decided, extracted

NOW = datetime(2026, 12, 3, 17, tzinfo=UTC)
BISCUIT = "I have a golden retriever called Biscuit, he's three."
JOINED = "I have a golden retriever called Biscuit, he's three"


@pytest.mark.parametrize(
    "text",
    [
        "he's three",
        "She is a doctor",
        "They live in Leeds",
        "His name is Tom",
        "Er ist drei Jahre alt",
        "Elle habite à Nantes",
        "Ella tiene dos años",
        "Zijn naam is Rex",
        "Она живёт в Москве",
    ],
)
def test_a_pronoun_that_needs_what_came_before_points_back(text: str) -> None:
    assert points_back(text)


@pytest.mark.parametrize(
    "text",
    [
        "I have a dog",
        "It's my birthday on Friday",
        "Es ist mein Geburtstag",
        "El perro se llama Rex",
        "Heather is my sister",
        "",
    ],
)
def test_a_fact_that_names_its_subject_does_not_point_back(text: str) -> None:
    assert not points_back(text)


async def test_the_fact_that_points_back_is_joined_to_the_one_before() -> None:
    answered = [
        ExtractedFact(text="I'm Dana", category="identity"),
        ExtractedFact(text="I have a golden retriever called Biscuit", category="possession"),
        ExtractedFact(text="he's three", category="other"),
    ]
    extraction = await from_answer(answered, f"I'm Dana. {BISCUIT}", NOW)
    assert [fact.text for fact in extraction.facts] == ["I'm Dana", JOINED]
    assert extraction.facts[1].category == "possession"


@pytest.mark.parametrize(
    ("message", "facts", "expected"),
    [
        (
            "hi! I am Sam, I just moved to Porto with my partner Jo.",
            ["I am Sam", "I just moved to Porto", "with my partner Jo"],
            ["I am Sam", "I just moved to Porto with my partner Jo"],
        ),
        (
            "I work remotely as a data engineer, mostly Python and Spark.",
            ["I work remotely as a data engineer", "mostly Python and Spark"],
            ["I work remotely as a data engineer, mostly Python and Spark"],
        ),
        (
            "Me mudé a Valencia, ahora vivo en Valencia.",
            ["Me mudé a Valencia", "ahora vivo en Valencia"],
            ["Me mudé a Valencia, ahora vivo en Valencia"],
        ),
        (
            "Ich wohne seit 2019 in Köln mit meiner Frau.",
            ["Ich wohne seit 2019 in Köln.", "mit meiner Frau"],
            ["Ich wohne seit 2019 in Köln mit meiner Frau"],
        ),
    ],
)
async def test_the_next_words_of_the_message_are_joined_to_the_fact_before(
    message: str, facts: list[str], expected: list[str]
) -> None:
    answered = [ExtractedFact(text=text, category="other") for text in facts]
    extraction = await from_answer(answered, message, NOW)
    assert [fact.text for fact in extraction.facts] == expected


@pytest.mark.parametrize(
    ("message", "facts"),
    [
        # the speaker's own words begin a fact of their own
        ("I have a cat, my sister has a dog.", ["I have a cat", "my sister has a dog"]),
        # "and" between them: two facts that share a subject
        ("I live in Porto and work in Braga.", ["I live in Porto", "work in Braga"]),
        ("Ich heiße Jonas und wohne in Freiburg.", ["Ich heiße Jonas", "wohne in Freiburg"]),
        # a dash
        ("I live in Lyon - work in Paris.", ["I live in Lyon", "work in Paris"]),
        # a sentence ends between them
        (
            "I live in Porto. sometimes I visit Lisbon.",
            ["I live in Porto", "sometimes I visit Lisbon"],
        ),
        # not the message's next words
        (
            "I moved to Porto last year with my partner Jo.",
            ["I moved to Porto", "with my partner Jo"],
        ),
        ("I like teacakes and tea.", ["I like tea", "cakes and tea"]),
        # a capital letter: a name begins a fact of its own
        ("I live in Porto, Jo is my partner.", ["I live in Porto", "Jo is my partner"]),
    ],
)
async def test_a_fact_that_stands_alone_is_not_joined(message: str, facts: list[str]) -> None:
    answered = [ExtractedFact(text=text, category="other") for text in facts]
    extraction = await from_answer(answered, message, NOW)
    assert [fact.text for fact in extraction.facts] == [" ".join(t.split()) for t in facts]


async def test_a_joined_fact_has_no_decision_of_the_model_and_the_others_keep_theirs() -> None:
    answered = [
        CombinedFact(text="I live in Leeds", category="location", action="UPDATE", target=1),
        CombinedFact(text="I have a brother", category="family", action="ADD", target=None),
        CombinedFact(text="He is a doctor", category="family", action="UPDATE", target=1),
    ]

    def decide(fact: CombinedFact) -> InlineDecision:
        return InlineDecision(fact.action or "", fact.target, None, frozenset())

    message = "I live in Leeds now, I have a brother. He is a doctor."
    extraction = await from_answer(answered, message, NOW, decide)
    texts = [fact.text for fact in extraction.facts]
    assert texts == ["I live in Leeds", "I have a brother, he is a doctor"]
    decisions = [fact.decision for fact in extraction.facts]
    assert decisions == [InlineDecision("UPDATE", 1, None, frozenset()), None]


CASES = [
    Case(
        "extraction: the age of the dog named in the fact before is kept with it",
        (),
        BISCUIT,
        (extracted("I have a golden retriever called Biscuit", "he's three"),),
        frozenset({JOINED}),
        (Action.ADD,),
        ("no_candidates",),
        llm_calls=1,
    ),
    Case(
        "combined: the joined fact is decided by the decision prompt",
        ("I have a golden retriever",),
        "I have a golden retriever called Biscuit. He's three.",
        (
            combined(
                ("I have a golden retriever called Biscuit", "UPDATE", 1),
                ("He's three", "ADD", None),
            ),
            decided((1, "UPDATE", 1)),
        ),
        frozenset({JOINED}),
        (Action.UPDATE,),
        (None,),
        llm_calls=2,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
async def test_pronoun_branch(
    case: Case, store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    await check_case(case, store, index, embedder)
