"""The language guess that picks the prompt's labels and the rules of a fact's third person."""

from __future__ import annotations

import pytest

from memory.language import guess_language, likely_languages


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Ich wohne in Hamburg", "de"),  # "in" is English too: the first word decides
        ("Je chante du rock", "fr"),  # "du" is German too
        ("The Bier ist gut", "en"),
        ("Trinke Bier", "en"),  # nothing to go by
        ("Mi hermano es el mayor", "es"),
        ("Я читаю детективы", "ru"),
        ("Corro en el parque", "es"),
        ("Nado en Bilbao", "es"),  # "en" is Spanish's alone
        ("J'étudie en France", "fr"),
        ("彼は京都に住んでいます", "ja"),
        ("我住在北京", "en"),  # Chinese: no kana, nothing to go by
    ],
)
def test_a_tie_goes_to_the_first_word_that_tells_the_languages_apart(
    text: str, language: str
) -> None:
    assert guess_language(text) == language


def test_a_tie_no_word_tells_apart_leaves_every_tied_language_to_try() -> None:
    assert likely_languages("Estudio de noche") == ["fr", "es"]
    assert likely_languages("the end") == ["en"]
    assert likely_languages("Quizás pronto") == []  # no common word at all
    assert guess_language("Quizás pronto") == "en"


@pytest.mark.parametrize("text", ["¿Dónde vivo?", "¡Qué frío!", "Quizás mañana"])
def test_spanish_marks_tell_spanish_where_no_common_word_does(text: str) -> None:
    assert likely_languages(text) == ["es"]
