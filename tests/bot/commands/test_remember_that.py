"""Which messages are "remember that ...", in each language the write path is measured in."""

from __future__ import annotations

import pytest

from bot.commands import remember_that

SAID = [
    ("Remember that my sister's name is Inès.", "my sister's name is Inès"),
    ("please remember that: I park on level 3", "I park on level 3"),
    ("Merk dir: ich bin allergisch gegen Nüsse", "ich bin allergisch gegen Nüsse"),
    ("Bitte merke dir, dass Lena sechs ist.", "Lena sechs ist"),
    ("merk dir dass ich Tee mag", "ich Tee mag"),
    ("Souviens-toi que je suis végétarienne.", "je suis végétarienne"),
    ("Retiens qu'Anna est ma sœur", "Anna est ma sœur"),
    ("Rappelle-toi qu\u2019il pleut souvent ici", "il pleut souvent ici"),
    ("Recuerda que soy alérgico a las nueces.", "soy alérgico a las nueces"),
    ("Por favor, acuérdate de que vivo en Sevilla", "vivo en Sevilla"),
    ("Запомни: я люблю чай.", "я люблю чай"),
    ("запомни, что мою собаку зовут Шарик", "мою собаку зовут Шарик"),
]

NOT_SAID = [
    "I remember that film",
    "Remember the milk",
    "Do you remember that I have a cat?",
    "Merkst du dir das?",
    "Ich merke mir das schon.",
    "Je me souviens que tu aimes le thé",
    "¿Recuerdas que tengo un gato?",
    "Я запомнил, что ты любишь чай",
    "remember that",
    "私はナッツアレルギーだと覚えておいて",
]


@pytest.mark.parametrize(("message", "fact"), SAID)
def test_the_fact_is_what_follows_the_words_that_ask_to_remember(message: str, fact: str) -> None:
    assert remember_that(message) == fact


@pytest.mark.parametrize("message", NOT_SAID)
def test_a_message_that_does_not_ask_to_remember_is_not_a_command(message: str) -> None:
    assert remember_that(message) is None
