"""A code check on extraction: a fact that begins with "he", "she" or "they" is about what
the fact before it names ("I have a golden retriever called Biscuit, he's three"), so it is
joined to that fact: alone, "he's three" says nothing in `/memory list` a month later, and a
correction of Biscuit's age finds no fact that names him.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory.write.grounding import WORD, plain
from memory.write.prompts.extraction import ExtractedT

# Third-person pronouns and possessives that point back at someone or something named
# before them, as :func:`plain` writes them (en, de, fr, es, it, pt, nl, ru). Left out: words
# that also start sentences about nothing named ("it", "es": "it's my birthday") and Spanish
# "él", which without its accent is the article "el".
POINTING_WORDS = frozenset(
    """
    he she they his her their hers them
    er sie sein seine seinen seinem seiner ihr ihre ihren ihrem ihrer
    il elle ils elles son sa ses leur leurs
    ella ellos ellas su sus
    lui lei loro suo sua suoi sue
    ele ela eles elas seu seus suas
    hij zij ze zijn haar hun
    он она оно они его ее их
    """.split()  # noqa: SIM905, RUF001 (Russian words, in Cyrillic letters)
)


def points_back(text: str) -> bool:
    """The fact's first word is a pronoun that needs what came before it."""
    words = WORD.findall(plain(text))
    return bool(words) and words[0] in POINTING_WORDS


def joined_to_what_they_name(facts: Sequence[ExtractedT]) -> list[tuple[ExtractedT, bool]]:
    """The facts with each one that points back joined to the fact before it, and whether
    each was joined (a decision the model gave for either part is not one for the whole)."""
    joined: list[tuple[ExtractedT, bool]] = []
    for fact in facts:
        if not joined or not points_back(fact.text):
            joined.append((fact, False))
            continue
        before, _ = joined[-1]
        text = f"{before.text.strip().rstrip('.!')}, {lowered(fact.text.strip())}"
        when = before.when or fact.when
        joined[-1] = (before.model_copy(update={"text": text, "when": when}), True)
    return joined


def lowered(text: str) -> str:
    return text[:1].lower() + text[1:]
