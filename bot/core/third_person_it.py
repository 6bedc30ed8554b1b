"""Italian facts said in the first person, rewritten about the person by name.

As :mod:`bot.core.third_person` does for English, and for the same reason: a fact quoted in
the person's words was repeated by the reply model in the person's voice. Italian mostly
drops "io", so a fact that begins with a first-person verb ("Vivo a Roma", "Non fumo più")
has it put in the third person after the name (an adverb but "non" after the verb, where
Italian wants it); an -ere/-ire verb is told from an -are one by
a list of the common ones. "Mi chiamo" becomes "si chiama", "Mi piace" becomes "A Alice
piace", and "Il mio cane si chiama Fido" becomes "Il cane di Alice si chiama Fido". Any
other first-person word gives ``None``, and the fact stays quoted.
"""

from __future__ import annotations

import re

IRREGULAR = {
    "sono": "è",
    "ho": "ha",
    "vado": "va",
    "faccio": "fa",
    "posso": "può",
    "voglio": "vuole",
    "devo": "deve",
    "so": "sa",
    "sto": "sta",
    "do": "dà",
    "esco": "esce",
    "bevo": "beve",
    "dico": "dice",
    "rimango": "rimane",
    "salgo": "sale",
    "scelgo": "sceglie",
    "tolgo": "toglie",
    "raccolgo": "raccoglie",
    "spengo": "spegne",
    "muoio": "muore",
    "siedo": "siede",
}
# Endings of irregular first persons, prefixed verbs included: "mantengo", "divengo".
ENDINGS = (("tengo", "tiene"), ("vengo", "viene"), ("isco", "isce"))
# The first person without its "-o" of common -ere and -ire verbs; other verbs are taken
# for -are ones, by far the most.
ERE_IRE = frozenset(
    """
    viv scriv iscriv descriv legg prend apprend comprend sorprend ved mett permett
    smett promett cred chied rispond corr perd vend ricev spend chiud apr dorm part sent
    offr segu serv vest soffr scopr copr conosc riconosc cresc decid divid discut accend
    scend attend dipend vinc convinc piang diping batt ripet cad fugg succed rid sorrid muov
    insist assist esist resist risied diffond cuoc cuc nasc
    """.split()  # noqa: SIM905
)
ADVERBS = frozenset(
    """
    non anche ancora sempre spesso mai già ora adesso solo ormai quasi davvero
    """.split()  # noqa: SIM905
)
OBJECTS = frozenset({"lo", "la", "li", "le", "ne", "ci"})
# "Mi piace il cinema": the thing liked is the subject, the person an indirect object.
LIKED = frozenset(
    """
    piace piacciono interessa interessano manca mancano serve servono dispiace basta bastano
    """.split()  # noqa: SIM905
)
# Words that begin a sentence and end in -o like a first-person verb but are none.
NOT_VERBS = frozenset(
    """
    quando dopo molto poco tanto troppo questo quello certo presto lo io però perciò ciao
    inoltre mio tuo suo nostro vostro
    """.split()  # noqa: SIM905
)
FIRST_PERSON = frozenset(
    """
    io mi me mio mia miei mie noi ci ce nostro nostra nostri nostre ti te tu tuo tua tuoi
    tue
    """.split()  # noqa: SIM905
)
# Third persons that end the noun phrase of "Il mio cane si chiama Fido", or show that a
# sentence is about someone else ("Marco vive a Roma").
THIRD_PERSON = frozenset(
    """
    è ha si non vive abita lavora fa va studia gioca ama mangia dorme costa sono hanno
    vivono abitano lavorano fanno vanno studiano giocano amano ne ci
    """.split()  # noqa: SIM905
)
POSSESSIVES = {"mio": ("m", False), "mia": ("f", False), "miei": ("m", True), "mie": ("f", True)}
VOWEL = re.compile(r"^[aeiouàèéìòù]", re.IGNORECASE)
# "lo zio", "gli studenti": s and a consonant, z, gn, ps, x, y.
IMPURE = re.compile(r"^(?:s[^aeiouàèéìòù]|z|gn|ps|pn|x|y)", re.IGNORECASE)


def conjugate(verb: str) -> str | None:
    """The third person singular of an Italian first-person present-tense verb, or None."""
    if verb in IRREGULAR:
        return IRREGULAR[verb]
    if not re.fullmatch(r"[a-zàèéìòù]{2,}o", verb) or verb in NOT_VERBS:
        return None
    if verb.endswith("iamo") and not verb.endswith("chiamo"):
        return None  # "viviamo": we, not I
    for ending, third in ENDINGS:
        if verb.endswith(ending):
            return verb.removesuffix(ending) + third
    stem = verb[:-1]
    return stem + ("e" if stem in ERE_IRE else "a")


def first_person(words: list[str]) -> bool:
    """Whether ``words`` still say "I" ("mi", "mio", "sono")."""
    return any(
        (bare := word.lower().strip(",.;:!?")) in FIRST_PERSON
        or (bare in IRREGULAR and bare != "sono")  # "sono" is "they are" too
        for word in words
    )


def article(noun: str, kind: str, plural: bool) -> str:
    """The definite article of ``noun``: "il", "lo", "l'", "la", "i", "gli", "le"."""
    if kind == "f":
        return "le" if plural else ("l'" if VOWEL.match(noun) else "la")
    if plural:
        return "gli" if VOWEL.match(noun) or IMPURE.match(noun) else "i"
    return "l'" if VOWEL.match(noun) else ("lo" if IMPURE.match(noun) else "il")


def possessive(words: list[str], name: str) -> str | None:
    """ "Il mio cane si chiama Fido" (or "Mio fratello ...") about ``name``:
    "Il cane di Alice si chiama Fido"."""
    start = 1 if words[0].lower() in POSSESSIVES else 2
    kind, plural = POSSESSIVES[words[start - 1].lower()]
    for end in range(start + 1, min(len(words), start + 4)):
        if words[end].lower() in THIRD_PERSON:
            noun, rest = words[start:end], words[end:]
            break
    else:
        return None
    if first_person(rest) or any(w in ("di", "del", "della", "e", "o", "con") for w in noun):
        return None
    the = article(noun[0], kind, plural).capitalize()
    head = the + noun[0] if the.endswith("'") else f"{the} {noun[0]}"
    return " ".join([head, *noun[1:], "di", name, *rest])


def about(fact: str, name: str) -> str | None:
    """``fact`` (Italian, first person) about ``name``, or None if it is not that simple."""
    words = " ".join(fact.replace("\u2019", "'").split()).split(" ")
    if words[0] in ("Mio", "Mia") or (
        len(words) > 1 and words[0] in ("Il", "La", "I", "Le") and words[1] in POSSESSIVES
    ):
        return possessive(words, name)
    to_me = [w.lower() for w in words[:2]] == ["a", "me"]
    words = [words[0].lower(), *words[1:]][2 if to_me else 0 :]
    position = 0
    while position < len(words) and words[position] in ADVERBS | {"io"}:
        position += 1
    said_io = "io" in words[:position]
    adverbs, words = [w for w in words[:position] if w != "io"], words[position:]
    # "non" stays before the verb, other adverbs go after it: "Alice suona anche la chitarra".
    negation = ["non"] if "non" in adverbs else []
    adverbs = [w for w in adverbs if w != "non"]
    if negation and adverbs:
        return None
    liked = words if to_me else words[1:] if words[:1] == ["mi"] else []
    if liked and liked[0] in LIKED:
        if first_person(liked[1:]):
            return None
        to = "Ad" if name[:1].lower() == "a" else "A"
        return " ".join([to, name, *negation, liked[0], *adverbs, *liked[1:]])
    if to_me:
        return None
    clitics: list[str] = []
    if words and words[0] == "mi":
        clitics, words = ["si"], words[1:]
    if words and words[0] in OBJECTS:
        clitics, words = [*clitics, words[0]], words[1:]
    if not words:
        return None
    verb = conjugate(words[0])
    rest = words[1:]
    if verb is None or first_person(rest):
        return None
    if not (said_io or adverbs or negation or clitics) and rest[:1] and rest[0] in THIRD_PERSON:
        return None  # "Marco vive a Roma" is about Marco
    return " ".join([name, *negation, *clitics, verb, *adverbs, *rest])
