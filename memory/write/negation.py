"""Whether a new fact only says that a known one stopped being true ("I don't play chess
anymore" of "I play chess every week"): the design's DELETE, whatever action a model chose.
"""

from __future__ import annotations

import re

from memory.write.grounding import plain
from memory.write.relations import about_other_people

# The words that say a fact held before and holds no more, next to each other; one of them
# (or of the split pairs below) must be in the new fact: a plain "I don't like coffee" is a
# fact of its own, not the end of "I like coffee".
ENDED = ("no longer", "any longer", "anymore", "any more", "ya no", "nicht mehr", "больше не")
# The same with words between the two halves ("je ne joue plus", "keinen Hund mehr").
ENDED_APART = (("ne", "plus"), ("kein", "mehr"), ("no", "mas"), ("non", "piu"))
# The words a negation adds to the sentence it negates, and the articles it changes.
NEGATION_WORDS = frozenset(
    """
    no not longer any anymore more don't doesn't do does a an the
    ya mas nicht mehr kein ne plus de du des non piu больше не
    """.split()  # noqa: SIM905
)
# French elides "je", "ne", "de" before a vowel: "j'ai" and "je n'ai plus" share "je ai".
ELIDED = {"j": "je", "n": "ne", "d": "de", "l": "le"}
WORD = re.compile(r"\w+(?:'t)?")


def words(text: str) -> list[str]:
    """Lower-case words without accents; an English "n't" stays on its verb, a French
    elided word is written out, German "keinen" is "kein"."""
    found = WORD.findall(plain(text).replace("\u2019", "'"))
    return ["kein" if w.startswith("kein") else ELIDED.get(w, w) for w in found]


def says_ended(text: str) -> bool:
    """Whether ``text`` says that something is no longer so."""
    found = words(text)
    joined = f" {' '.join(found)} "
    if any(f" {marker} " in joined for marker in ENDED):
        return True
    return any(
        first in found and second in found[found.index(first) + 1 :]
        for first, second in ENDED_APART
    )


def ends(new: str, known: str) -> bool:
    """Whether ``new`` says that ``known`` (or a part of it) is no longer true, and nothing
    else: without its negation, the words of ``new`` are words of ``known`` in their order
    (the order keeps "tea over coffee" apart from "coffee over tea")."""
    if not says_ended(new) or says_ended(known):
        return False
    rest = [word for word in words(new) if word not in NEGATION_WORDS]
    remaining = iter(words(known))
    return bool(rest) and all(word in remaining for word in rest)


def ends_for_the_same_people(new: str, known: str) -> bool:
    """:func:`ends`, and both are about the same people ("I no longer smoke" does not end "my
    brother smokes")."""
    return ends(new, known) and not about_other_people(new, known)
