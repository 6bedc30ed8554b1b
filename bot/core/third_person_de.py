"""German facts said in the first person, rewritten about the person by name.

As :mod:`bot.core.third_person` does for English, and for the same reason: a quoted
"Ich spiele Cello" was repeated by the reply model in the person's voice. "Ich" and the verb
right after it (German puts the verb second) become the name and the verb's third person
("Alice spielt Cello"); a reflexive "mich"/"mir" right after the verb becomes "sich"; a
leading "Mein Hund" becomes "Alices Hund". Anything else in the first person ("meinen",
"mir" later on) would need the person's gender or a guess, so the fact gives ``None`` and
stays quoted.
"""

from __future__ import annotations

import re

IRREGULAR = {
    "bin": "ist",
    "habe": "hat",
    "hab": "hat",
    "werde": "wird",
    "tue": "tut",
    "tu": "tut",
    "weiß": "weiß",
    "kann": "kann",
    "muss": "muss",
    "will": "will",
    "mag": "mag",
    "darf": "darf",
    "soll": "soll",
    "möchte": "möchte",
    "lese": "liest",
    "sehe": "sieht",
    "esse": "isst",
    "messe": "misst",
    "vergesse": "vergisst",
    "gebe": "gibt",
    "nehme": "nimmt",
    "spreche": "spricht",
    "breche": "bricht",
    "helfe": "hilft",
    "treffe": "trifft",
    "werfe": "wirft",
    "sterbe": "stirbt",
    "trete": "tritt",
    "gelte": "gilt",
    "empfehle": "empfiehlt",
    "stehle": "stiehlt",
    "fahre": "fährt",
    "schlafe": "schläft",
    "laufe": "läuft",
    "trage": "trägt",
    "schlage": "schlägt",
    "halte": "hält",
    "falle": "fällt",
    "lasse": "lässt",
    "fange": "fängt",
    "wasche": "wäscht",
    "wachse": "wächst",
    "lade": "lädt",
    "rate": "rät",
    "brate": "brät",
    "stoße": "stößt",
}
# Inseparable prefixes, so that "verspreche" is conjugated as "spreche" is.
PREFIXES = ("be", "emp", "ent", "er", "ge", "miss", "ver", "zer")
FIRST_PERSON = re.compile(
    r"\b(?:ich|mich|mir|mein|meine|meinen|meinem|meiner|meines|wir|uns|unser\w*)\b",
    re.IGNORECASE,
)
# "Mein Hund", "Meine kleine Schwester": a noun, maybe after one adjective.
POSSESSIVE = re.compile(r"^Mein(?:e|en|em)? (?=[A-ZÄÖÜ]|[a-zäöüß]+e[nmrs]? [A-ZÄÖÜ])")
REFLEXIVE = frozenset({"mich", "mir"})


def conjugate(verb: str) -> str | None:
    """The third person singular of a German first-person present-tense verb, or None."""
    if verb in IRREGULAR:
        return IRREGULAR[verb]
    for prefix in PREFIXES:
        rest = verb.removeprefix(prefix)
        if rest != verb and rest in IRREGULAR:
            return prefix + IRREGULAR[rest]
    if not re.fullmatch(r"[a-zäöüß]+e", verb):
        return None
    stem = verb[:-1]
    if re.search(r"(?:[^aeiouäöühlr]|ch)[lr]$", stem):  # sammle, lächle, wandre: -elt, -ert
        return stem[:-1] + "e" + stem[-1] + "t"
    if re.search(r"(?:[td]|(?:[bdfgkpstz]|ch)[mn])$", stem):  # arbeite, rechne: -et
        return stem + "et"
    return stem + "t"


def genitive(name: str) -> str:
    """``name`` as an owner: "Alices", "Hans'"."""
    return name + ("'" if re.search(r"(?:s|ß|x|z)$", name, re.IGNORECASE) else "s")


def about(fact: str, name: str) -> str | None:
    """``fact`` (German, first person) about ``name``, or None if it is not that simple."""
    text = " ".join(fact.split())
    if POSSESSIVE.match(text):
        owned = POSSESSIVE.sub("", text)
        return None if FIRST_PERSON.search(owned) else f"{genitive(name)} {owned}"
    words = text.split(" ")
    if len(words) < 2 or words[0] not in ("Ich", "ich"):
        return None
    verb = conjugate(words[1])
    if verb is None:
        return None
    rest = words[2:]
    if rest and rest[0] in REFLEXIVE:
        rest = ["sich", *rest[1:]]
    return None if FIRST_PERSON.search(" ".join(rest)) else " ".join([name, verb, *rest])
