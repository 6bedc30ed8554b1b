"""Japanese facts said in the first person, rewritten about the person by name.

As :mod:`bot.core.third_person` does for English, and for the same reason: a quoted
"私はチェロを弾きます" was repeated by the reply model in the person's voice. A Japanese verb
does not change with its subject, so only the leading pronoun does: "私は" becomes "Aliceさんは",
"私の犬" becomes "Aliceさんの犬". A fact with another first-person word later on, or without
one at the start, gives ``None`` and stays quoted.
"""

from __future__ import annotations

PRONOUNS = ("わたし", "あたし", "ぼく", "おれ", "私", "僕", "俺")
# Topic, subject, possessive and "also": what may follow the pronoun at the start.
PARTICLES = ("は", "が", "の", "も")


def about(fact: str, name: str) -> str | None:
    """``fact`` (Japanese, first person) about ``name``, or None if it is not that simple."""
    text = fact.strip()
    for pronoun in PRONOUNS:
        particle = text[len(pronoun) : len(pronoun) + 1]
        if text.startswith(pronoun) and particle in PARTICLES:
            rest = text[len(pronoun) + 1 :]
            if any(other in rest for other in PRONOUNS):
                return None
            return f"{name}さん{particle}{rest}"
    return None
