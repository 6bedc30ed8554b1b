"""Which new facts only say that a known one stopped: the words the ended guard compares."""

from __future__ import annotations

import pytest

from memory.write.negation import ends


@pytest.mark.parametrize(
    ("new", "known"),
    [
        ("I no longer play chess", "I play chess every week"),
        ("I don't have a cat anymore", "I have a cat"),
        ("I'm not vegetarian any more", "I'm vegetarian"),
        ("Ya no fumo", "Fumo"),
        ("No fumo más", "Fumo"),
        ("Ich spiele nicht mehr Schach", "Ich spiele Schach"),
        ("Ich habe keinen Hund mehr", "Ich habe einen Hund"),
        ("Je ne joue plus au tennis", "Je joue au tennis"),
        ("Je n'ai plus de chat", "J'ai un chat"),
        ("Я больше не курю", "Я курю"),
    ],
)
def test_a_negation_of_the_known_fact_ends_it(new: str, known: str) -> None:
    assert ends(new, known)


@pytest.mark.parametrize(
    ("new", "known"),
    [
        # A dislike is a fact of its own, not the end of the liking.
        ("I don't like coffee", "I like coffee"),
        # Says what is true now as well.
        ("I no longer live in Paris, I live in Berlin", "I live in Paris"),
        ("I no longer prefer tea over coffee", "I prefer coffee over tea"),
        ("I don't play chess anymore", "I play tennis"),
        ("Ya no vivo en Sevilla", "Vivo en Valencia"),
        ("I stopped going to the gym", "I go to the gym"),
        ("I no longer smoke", "I no longer smoke"),
    ],
)
def test_other_changes_do_not_end_the_known_fact(new: str, known: str) -> None:
    assert not ends(new, known)
