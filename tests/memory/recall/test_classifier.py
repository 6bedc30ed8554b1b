"""Which messages take the lookup path."""

from __future__ import annotations

import pytest

from memory.recall import wants_lookup, wants_overview


@pytest.mark.parametrize(
    "text",
    [
        "What's my sister's name?",
        "what is my sister's name",
        "Where do I work",
        "do you remember my cat's name",
        "What do you remember about my car?",
        "Tell me what you know about me.",
        "Remind me where I parked",
        "Is my dentist appointment on Friday?",
        "Wie heißt meine Schwester?",
        "Was weißt du über mich.",
        "Où est-ce que j'habite ?",
        "Tu te souviens de mon chien.",
        "¿Dónde trabajo",
        "¿Cómo se llama mi hermana?",
        "Come si chiama mia sorella?",
        "anything you remember about my job",
    ],
)
def test_questions_and_recall_requests_take_lookup(text: str) -> None:
    assert wants_lookup(text)


@pytest.mark.parametrize(
    "text",
    [
        "My sister is called Anna.",
        "I moved to Lyon last week",
        "When I was young I lived in Rome.",
        "What a day!",
        "How are you?",
        "hey, how's it going?",
        "Hi! What's up?",
        "Wie geht's dir?",
        "ça va ?",
        "Hola, ¿qué tal?",
        "",
        "   ",
        "thanks",
    ],
)
def test_statements_and_small_talk_take_the_passive_path(text: str) -> None:
    assert not wants_lookup(text)


@pytest.mark.parametrize(
    "text",
    [
        "What do you know about me?",
        "what do you remember about me",
        "Tell me everything you remember about me.",
        "What have I told you so far?",
        "show me what you know",
        "Was weißt du über mich?",
        "Qu'est-ce que tu sais de moi ?",
        "¿Qué sabes de mí?",
    ],
)
def test_requests_for_everything_about_me_take_the_overview(text: str) -> None:
    assert wants_overview(text)


@pytest.mark.parametrize(
    "text",
    [
        "What do you know about Paris?",
        "Do you remember my sister's name?",
        "I know you remember me",
        "Tell me about the weather",
    ],
)
def test_specific_questions_are_not_overviews(text: str) -> None:
    assert not wants_overview(text)
