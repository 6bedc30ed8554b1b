"""Which people a fact names: the words the other-person guard compares."""

from __future__ import annotations

import pytest

from memory.write.relations import about_other_people, relations


@pytest.mark.parametrize(
    ("new", "known", "apart"),
    [
        ("My wife drives a Toyota Corolla", "I drive a Toyota Corolla", True),
        ("My sister Anna is a lawyer", "I have a sister", False),
        ("I live in Berlin", "I live in Paris", False),
        ("My best friend Tom is 31 years old", "I'm 30 years old", True),
        ("Meine Mutter wohnt in Bonn", "Ich wohne in Köln", True),
        ("Ma sœur habite à Lyon", "J'habite à Lyon", True),
        ("Mi hermano es enfermero", "Soy enfermero", True),
        ("Моя сестра живёт в Казани", "Я живу в Казани", True),
        ("Я больше не курю", "Я курю", False),
        ("私の妹は東京に住んでいます", "私は京都に住んでいます", True),
        ("My new manager is Priya", "My manager is called Tom", False),
        ("Meu tio é médico", "Meu pai é médico", True),
        ("Mijn dochter heet Eva", "Mijn zus heet Eva", True),
        ("Ik rook niet meer", "Ik rook", False),
        ("Ich rauche nicht mehr", "Ich rauche", False),
        ("我儿子叫小明", "我哥哥叫小明", True),
        ("我不再喝咖啡了", "我喝咖啡", False),
        ("Je suis père de deux enfants", "J'ai deux enfants", False),
        ("I'm a mother of three kids", "I have three kids", False),
        ("Ich bin Vater", "Ich habe eine Tochter", True),
        ("My father is a nurse", "I'm a nurse", True),
    ],
)
def test_facts_about_different_people_are_told_apart(new: str, known: str, apart: bool) -> None:
    assert about_other_people(new, known) is apart


def test_a_possessive_names_the_relation() -> None:
    assert relations("My sister's dog is called Rex") == {"sister"}
