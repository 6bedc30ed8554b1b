"""French facts said in the first person, rewritten about the person by name.

As :mod:`bot.core.third_person` does for English, and for the same reason: a quoted
"Je joue du violoncelle" was repeated by the reply model in the person's voice. "Je"/"J'"
becomes the name and its verb the third person ("Alice joue du violoncelle"), through a
negation "ne"/"n'", a reflexive "me"/"m'" (made "se"/"s'") and object pronouns; a leading
"Mon chien s'appelle Rex" becomes "Le chien d'Alice s'appelle Rex". Any other first-person
word ("moi", "ma" later on) gives ``None``, and the fact stays quoted.
"""

from __future__ import annotations

import re

IRREGULAR = {"suis": "est", "ai": "a", "vais": "va"}
# Object pronouns that may stand between the subject (or "ne") and the verb.
OBJECTS = frozenset({"le", "la", "les", "l'", "lui", "leur", "y", "en"})
FIRST_PERSON = frozenset(
    """
    je j' me m' moi mon ma mes mien mienne miens miennes nous notre nos te t' vous
    """.split()  # noqa: SIM905
)
VOWEL = re.compile(r"^[aeiouyâàéèêëîïôûù]", re.IGNORECASE)
# Words after "Mon chien ..." that end the noun phrase: verbs, negation, pronouns.
VERB_AFTER_NOUN = frozenset(
    """
    est a va fait vit habite travaille aime adore déteste mange joue parle dort étudie
    sont ont vont font vivent habitent travaillent aiment adorent mangent jouent parlent
    dorment étudient s' se n' ne y
    """.split()  # noqa: SIM905
)
ARTICLES = {"mon": "le", "ma": "la", "mes": "les"}


def conjugate(verb: str) -> str | None:
    """The third person singular of a French first-person verb (present, imperfect,
    conditional or future), or None."""
    if verb in IRREGULAR:
        return IRREGULAR[verb]
    if verb in FIRST_PERSON or not re.fullmatch(r"[a-zâàçéèêëîïôûù]+", verb):
        return None
    if re.search(r"(?:conn|par|pl)ais$", verb):
        return verb[:-3] + "aît"
    if verb.endswith("e"):
        return verb
    if verb.endswith("rai"):
        return verb[:-1]
    if verb.endswith(("ds", "ts")):
        return verb[:-1]
    if verb.endswith(("s", "x")):
        return verb[:-1] + "t"
    return None


def elide(words: list[str]) -> list[str]:
    """ "ne est" as French writes it: "n'est"."""
    joined: list[str] = []
    for word in words:
        if joined and joined[-1] in ("ne", "se", "le", "la") and VOWEL.match(word):
            joined[-1] = joined[-1][0] + "'"
        joined.append(word)
    return joined


def split(text: str) -> list[str]:
    """Words, with an elided "j'", "m'", "n'" ... as a word of its own."""
    return re.sub(r"\b([cdjlmnst])'", r"\1' ", text, flags=re.IGNORECASE).split()


def join(words: list[str]) -> str:
    """The words as a sentence, an elided "s'" or "d'" joined to the next word."""
    text = ""
    for word in words:
        text += word if re.search(r"(?:^|\s)[cdjlmnst]'$", text, re.IGNORECASE) else f" {word}"
    return text.strip()


def in_first_person(words: list[str]) -> bool:
    return any(word.lower().strip(",.;:!?") in FIRST_PERSON for word in words)


def with_owner(name: str) -> str:
    return ("d'" if VOWEL.match(name) else "de ") + name


def possessive(words: list[str], name: str) -> str | None:
    """ "Mon chien s'appelle Rex" about ``name``: "Le chien de Paul s'appelle Rex"."""
    article = ARTICLES[words[0].lower()]
    for end in range(2, min(len(words), 5)):
        if words[end] in VERB_AFTER_NOUN:
            noun, rest = words[1:end], words[end:]
            break
    else:
        return None
    if in_first_person(rest) or any(w in ("de", "d'", "du", "des", "et", "ou") for w in noun):
        return None
    if noun[0][0].lower() == "h":
        return None  # "le héros" but "l'histoire": the spelling does not say which
    if article == "le" and VOWEL.match(noun[0]) and noun[0][0].lower() != "y":  # "le yacht"
        article = "l'"
    return join([article.capitalize(), *noun, with_owner(name), *rest])


def about(fact: str, name: str) -> str | None:
    """``fact`` (French, first person) about ``name``, or None if it is not that simple."""
    words = split(" ".join(fact.replace("\u2019", "'").split()))
    if len(words) < 2:
        return None
    if words[0].lower() in ARTICLES:
        return possessive(words, name)
    if words[0].lower() not in ("je", "j'"):
        return None
    position = 1
    clitics: list[str] = []
    if words[position] in ("ne", "n'"):
        clitics.append("ne")
        position += 1
    if position < len(words) and words[position] in ("me", "m'"):
        clitics.append("se")
        position += 1
    while position < len(words) and words[position] in OBJECTS:
        clitics.append(words[position])
        position += 1
    if position >= len(words):
        return None
    verb = conjugate(words[position])
    rest = words[position + 1 :]
    if verb is None or in_first_person(rest):
        return None
    return join([name, *elide([*clitics, verb]), *rest])
