"""The deterministic check of benchmarks/reply_voice.py: whose voice an answer speaks in."""

from __future__ import annotations

import pytest

from benchmarks.reply_voice import QUESTIONS, Question, voice

CELLO = Question("en", "I play the cello", "What instrument do I play?", ("cello",))


@pytest.mark.parametrize(
    ("answer", "heard"),
    [
        ("You play the cello.", "addressed"),
        ("I play the cello.", "person"),
        ("I remember that you play the cello!", "addressed"),
        ("Sure! I play the cello in an orchestra. What else?", "person"),
        ("My instrument is the cello.", "person"),
        ("I am not sure what you play.", "neither"),
        ("Alice plays the cello.", "neither"),
    ],
)
def test_an_english_answer_is_heard_in_the_right_voice(answer: str, heard: str) -> None:
    assert voice(answer, CELLO) == heard


@pytest.mark.parametrize(
    ("language", "answer", "heard"),
    [
        ("de", "Du spielst Cello.", "addressed"),
        ("de", "Ich spiele Cello.", "person"),
        ("fr", "Tu joues du violoncelle.", "addressed"),
        ("fr", "Je joue du violoncelle.", "person"),
        ("es", "Tocas el violonchelo, ¿verdad?", "addressed"),
        ("es", "Toco el violonchelo.", "person"),
        ("es", "Alicia toca el violonchelo.", "neither"),
        ("ru", "Ты играешь на виолончели.", "addressed"),
        ("ru", "Я играю на виолончели.", "person"),
        ("ja", "あなたはチェロを弾きます。", "addressed"),
        ("ja", "私はチェロを弾きます。", "person"),
    ],
)
def test_each_language_is_heard_in_the_right_voice(language: str, answer: str, heard: str) -> None:
    [question] = [
        q
        for q in QUESTIONS
        if q.language == language
        and q.fact.endswith(("Cello", "violoncelle", "violonchelo", "виолончели", "弾きます"))
    ]
    assert voice(answer, question) == heard


def test_every_language_of_the_dataset_is_asked_in() -> None:
    assert {q.language for q in QUESTIONS} == {"en", "de", "fr", "es", "ru", "ja"}
