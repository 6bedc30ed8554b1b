"""The language guess that picks the prompt's labels and the rules of a fact's third person."""

from __future__ import annotations

import pytest

from bot.core.language import guess_language


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Ich wohne in Hamburg", "de"),  # "in" is English too: the first word decides
        ("Je chante du rock", "fr"),  # "du" is German too
        ("The Bier ist gut", "en"),
        ("Trinke Bier", "en"),  # nothing to go by
        ("Mi hermano es el mayor", "es"),
        ("Я читаю детективы", "ru"),
    ],
)
def test_a_tie_goes_to_the_first_word_that_tells_the_languages_apart(
    text: str, language: str
) -> None:
    assert guess_language(text) == language
