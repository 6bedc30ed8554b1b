"""English facts said in the first person, rewritten about the person by name.

Facts are stored as the person said them ("I live in Paris"). Listed like that in the reply
prompt, a small model answered as if it were that person. So an English fact becomes
"Alice lives in Paris": the subject "I" becomes the name and its verb is conjugated, "my"
becomes "Alice's" (later ones "their"), "me" becomes "them". A fact these rules do not
cover gives ``None``, and the caller quotes it with the name instead.
"""

from __future__ import annotations

import re

# Words between "I" and its verb ("I no longer play"), split into single words.
ADVERBS = frozenset(
    """
    no longer never always usually often also really still just now sometimes rarely
    currently recently already mostly only even actually finally mainly generally
    """.split()  # noqa: SIM905
)
UNCHANGED = frozenset(
    """
    can could will would should must might may shall did had was used
    can't couldn't won't wouldn't shouldn't mustn't didn't wasn't hadn't
    went got made took came saw knew thought told said bought brought began became ate
    drank drove flew fell felt found gave grew held kept left lost met paid ran sat sold
    sent slept spent stood swam taught won wrote broke chose forgot heard hurt built put
    quit read set cut let hit moved
    """.split()  # noqa: SIM905
)
IRREGULAR = {
    "am": "is",
    "'m": "is",
    "have": "has",
    "'ve": "has",
    "do": "does",
    "don't": "doesn't",
    "go": "goes",
    "'ll": "will",
    "'d": "would",
    "were": "was",
}
FIRST_PERSON = re.compile(r"^(?:I(?:'m|'ve|'ll|'d)?|My)\b")
ME_OR_MY = re.compile(r"\b(my|me|mine|myself)\b", re.IGNORECASE)


def conjugate(verb: str) -> str:
    """The third person singular of an English present-tense verb."""
    lowered = verb.lower()
    if lowered in IRREGULAR:
        return IRREGULAR[lowered]
    if lowered in UNCHANGED or lowered.endswith("ed"):
        return verb
    if re.search(r"(s|sh|ch|x|z|o)$", lowered):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lowered):
        return verb[:-1] + "ies"
    return verb + "s"


def about(fact: str, name: str) -> str | None:
    """``fact`` (English, first person) about ``name``, or None if it is not that simple."""
    text = " ".join(fact.replace("\u2019", "'").split())
    if not FIRST_PERSON.match(text):
        return None
    if text.startswith("My "):
        return others(f"{name}'s {text[3:]}", name)
    words = text.split(" ")
    first = words[0]
    if first != "I":  # I'm, I've, I'll, I'd
        rest = [conjugate(first[1:]), *words[1:]]
        return others(f"{name} {' '.join(rest)}", name)
    position = 1
    while position < len(words) and words[position].lower() in ADVERBS:
        position += 1
    if position >= len(words):
        return None
    words[position] = conjugate(words[position])
    return others(" ".join([name, *words[1:]]), name)


def others(text: str, name: str) -> str:
    """The remaining my/me/mine/myself, about the same person."""
    replacements = {"my": "their", "me": "them", "mine": "theirs", "myself": "themself"}
    return ME_OR_MY.sub(lambda match: replacements[match.group(1).lower()], text)
