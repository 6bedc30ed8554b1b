"""A code check on extraction: a fact that cannot stand alone is joined to the fact before it.

Two kinds: one that begins with "he", "she" or "they" is about what the fact before it names
("I have a golden retriever called Biscuit, he's three"), and one the model cut out of the
middle of a sentence, the message's next words after the fact before it ("I just moved to
Porto" and "with my partner Jo"). Alone, "he's three" or "with my partner Jo" says nothing in
`/memory list` a month later, and a correction finds no fact that names what it corrects.
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


# The speaker's own words, which begin a fact of its own even mid-sentence ("I have a cat,
# my sister has a dog"), as :func:`plain` writes them.
SPEAKER_WORDS = frozenset(
    """
    i me my mine we our us
    ich mein meine meinen meinem meiner mir mich wir unser unsere
    je j moi mon ma mes nous notre nos
    yo me mi mis nosotros nosotras nuestro nuestra
    io mio mia miei noi
    eu meu minha nos
    ik mijn wij we
    я мой моя мое мои мы наш наша
    """.split()  # noqa: SIM905
)


def points_back(text: str) -> bool:
    """The fact's first word is a pronoun that needs what came before it."""
    words = WORD.findall(plain(text))
    return bool(words) and words[0] in POINTING_WORDS


def continuation(before: str, text: str, message: str) -> str | None:
    """``before`` and ``text`` as the message writes them together, when ``text`` is the
    message's next words after ``before``, and starts no fact of its own (its first letter is
    lower case and not the speaker's word): "I just moved to Porto with my partner Jo".
    Spanish and Italian drop the pronoun, so "Me mudé a Valencia, ahora vivo en Valencia"
    becomes one fact of two clauses: true, where its parts alone say little."""
    words = WORD.findall(plain(text))
    if not text[:1].islower() or not words or words[0] in SPEAKER_WORDS:
        return None
    flat = " ".join(message.split())
    lowered_message = flat.lower()
    if len(lowered_message) != len(flat):
        return None  # a letter whose lower case is longer: positions would not match
    first = " ".join(before.split()).rstrip(".!").lower()
    second = " ".join(text.split()).rstrip(".!").lower()
    start = lowered_message.find(first)
    end = start + len(first)
    if not first or start < 0:
        return None
    # A space or a comma between them; no word, no sentence's end, no dash.
    gap = next((gap for gap in (" ", ", ") if lowered_message.startswith(gap + second, end)), None)
    return None if gap is None else flat[start : end + len(gap) + len(second)]


def joined_to_the_fact_before(
    facts: Sequence[ExtractedT], message: str
) -> list[tuple[ExtractedT, bool]]:
    """The facts with each one that cannot stand alone joined to the fact before it, and
    whether each was joined (a decision the model gave for either part is not one for the
    whole)."""
    joined: list[tuple[ExtractedT, bool]] = []
    for fact in facts:
        before = joined[-1][0] if joined else None
        text = None if before is None else joined_text(before.text, fact.text, message)
        if before is None or text is None:
            joined.append((fact, False))
            continue
        when = before.when or fact.when
        joined[-1] = (before.model_copy(update={"text": text, "when": when}), True)
    return joined


def joined_text(before: str, text: str, message: str) -> str | None:
    if points_back(text):
        return f"{before.strip().rstrip('.!')}, {lowered(text.strip())}"
    return continuation(before, text, message)


def lowered(text: str) -> str:
    return text[:1].lower() + text[1:]
