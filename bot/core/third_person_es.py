"""Spanish facts said in the first person, rewritten about the person by name.

As :mod:`bot.core.third_person` does for English, and for the same reason: a quoted
"Toco el violonchelo" was repeated by the reply model in the person's voice. Spanish mostly
drops "yo", so a fact that begins with a first-person verb ("Vivo en Lima", "No fumo") has
it put in the third person after the name; an -er/-ir verb is told from an -ar one by a list
of the common ones. "Me llamo" becomes "se llama", "Me gusta" becomes "A Alice le gusta",
and "Mi perro se llama Toby" becomes "El perro de Alice se llama Toby" when the words say
the noun's gender. Any other first-person word gives ``None``, and the fact stays quoted.
"""

from __future__ import annotations

import re

IRREGULAR = {
    "soy": "es",
    "estoy": "está",
    "voy": "va",
    "doy": "da",
    "sé": "sabe",
    "he": "ha",
    "veo": "ve",
    "juego": "juega",
    "huelo": "huele",
    "quepo": "cabe",
}
# Endings of irregular first persons, prefixed verbs included: "mantengo", "supongo".
ENDINGS = (
    ("tengo", "tiene"),
    ("vengo", "viene"),
    ("pongo", "pone"),
    ("hago", "hace"),
    ("traigo", "trae"),
    ("digo", "dice"),
    ("sigo", "sigue"),
    ("salgo", "sale"),
    ("caigo", "cae"),
    ("oigo", "oye"),
    ("valgo", "vale"),
    ("distingo", "distingue"),
    ("cojo", "coge"),
    ("rijo", "rige"),
    ("elijo", "elige"),
    ("exijo", "exige"),
    ("protejo", "protege"),
    ("venzo", "vence"),
    ("ejerzo", "ejerce"),
    ("zco", "ce"),
    ("uyo", "uye"),
)
# The first person without its "-o" of common -er and -ir verbs; other verbs are taken for
# -ar ones, by far the most.
ER_IR = frozenset(
    """
    viv conviv sobreviv com beb le cre escrib describ inscrib corr recorr ocurr aprend comprend
    sorprend emprend entiend atiend enciend extiend defiend pierd vend depend respond romp
    corromp interrump met promet permit admit emit transmit recib percib sub abr cubr descubr
    compart part deb tem sufr asist resist insist exist persist decid coincid divid resid
    discut cumpl escond quier prefier sient mient consient diviert duerm muer muev vuelv
    devuelv resuelv envuelv pued suel muerd pid impid sirv repit vist mid compit añad invad
    reún prohíb imprim confund hund barr acud sacud aplaud consum asum conced proced
    """.split()  # noqa: SIM905
)
ADVERBS = frozenset(
    """
    no ya nunca también tampoco siempre todavía aún casi solo sólo normalmente ahora
    actualmente realmente generalmente apenas
    """.split()  # noqa: SIM905
)
OBJECTS = frozenset({"lo", "la", "los", "las", "le", "les"})
# "Me gusta el cine": the thing liked is the subject, the person an indirect object.
LIKED = frozenset(
    """
    gusta gustan encanta encantan interesa interesan fascina fascinan apasiona apasionan
    molesta molestan duele duelen importa importan preocupa preocupan aburre aburren cuesta
    """.split()  # noqa: SIM905
)
# Words that begin a sentence and end in -o like a first-person verb but are none.
NOT_VERBS = frozenset(
    """
    cuando pronto mucho poco luego claro esto eso aquello todo tanto cuanto mismo
    dentro primero pero lo ello algo medio nuestro vuestro
    """.split()  # noqa: SIM905
)
FIRST_PERSON = frozenset(
    """
    yo me mi mis mí conmigo mío mía míos mías nosotros nosotras nos nuestro nuestra nuestros
    nuestras te ti tú tu tus contigo usted
    """.split()  # noqa: SIM905
)
# Third persons that end the noun phrase of "Mi perro se llama Toby", or show that a
# sentence is about someone else ("Marco vive en Roma").
THIRD_PERSON = frozenset(
    """
    es está son están tiene tienen vive viven trabaja trabajan va van hace hacen juega
    juegan estudia estudian come comen habla hablan sabe puede quiere toca mide pesa cumple
    nació murió era fue se no ya le les lo
    """.split()  # noqa: SIM905
)
FEMININE = frozenset(
    """
    mano foto moto radio mujer clase calle gente noche madre leche
    """.split()  # noqa: SIM905
)
MASCULINE = frozenset(
    """
    día mapa problema programa idioma tema sistema clima planeta sofá papá padre jefe coche
    nombre hombre país color amor tren café cumpleaños poema drama dilema pijama tranvía
    """.split()  # noqa: SIM905
)
# Feminine nouns that take "el" in the singular, for their stressed first "a".
STRESSED_A = frozenset(
    """
    agua alma águila hambre aula área arma hacha hada ala arpa ancla asma haba habla alga
    """.split()  # noqa: SIM905
)
ARTICLES = {("m", False): "el", ("f", False): "la", ("m", True): "los", ("f", True): "las"}


def conjugate(verb: str) -> str | None:
    """The third person singular of a Spanish first-person present-tense verb, or None."""
    if verb in IRREGULAR:
        return IRREGULAR[verb]
    for ending, third in ENDINGS:
        if verb.endswith(ending):
            return verb.removesuffix(ending) + third
    if not re.fullmatch(r"[a-záéíóúñü]{2,}o", verb) or verb in NOT_VERBS:
        return None
    stem = verb[:-1]
    return stem + ("e" if stem in ER_IR else "a")


def first_person(words: list[str]) -> bool:
    """Whether ``words`` still say "I" ("mi", "me", "estoy")."""
    return any(
        (bare := word.lower().strip(",.;:!?¡¿")) in FIRST_PERSON
        or bare in IRREGULAR
        or bare.endswith(("tengo", "vengo", "pongo", "hago", "digo", "zco"))
        for word in words
    )


def gender(word: str) -> str | None:
    """``m``, ``f`` or None, from a noun's or adjective's ending."""
    word = word.lower()
    for form in (word, word.removesuffix("s"), word.removesuffix("es")):
        if form in FEMININE or re.search(r"(?:ción|sión|dad|tad|tud|umbre)$", form):
            return "f"
        if form in MASCULINE:
            return "m"
    return {"o": "m", "a": "f"}.get(word.removesuffix("s")[-1:])


def possessive(words: list[str], name: str) -> str | None:
    """ "Mi perro se llama Toby" about ``name``: "El perro de Alice se llama Toby"."""
    for end in range(2, min(len(words), 5)):
        if words[end].lower() in THIRD_PERSON:
            noun, rest = words[1:end], words[end:]
            break
    else:
        return None
    if first_person(rest) or any(word in ("de", "del", "y", "o", "con", "en") for word in noun):
        return None
    genders = {kind for word in noun if (kind := gender(word))}  # "verde" says neither
    if len(genders) != 1:
        return None
    [kind] = genders
    if kind == "f" and words[0] == "Mi" and noun[0].lower() in STRESSED_A:
        return None  # "el agua", "el hambre"
    article = ARTICLES[(kind, words[0] == "Mis")]
    return " ".join([article.capitalize(), *noun, "de", name, *rest])


def about(fact: str, name: str) -> str | None:
    """``fact`` (Spanish, first person) about ``name``, or None if it is not that simple."""
    words = " ".join(fact.split()).split(" ")
    if words[0] in ("Mi", "Mis"):
        return possessive(words, name)
    said_yo = words[0] in ("Yo", "yo")
    if said_yo or [w.lower() for w in words[:2]] == ["a", "mí"]:
        words = words[1 if said_yo else 2 :]
    if len(words) < 2:
        return None
    words = [words[0].lower(), *words[1:]]
    position = 0
    while position < len(words) and words[position] in ADVERBS:
        position += 1
    adverbs, words = words[:position], words[position:]
    if len(words) >= 2 and words[0] == "me" and words[1] in LIKED:
        if first_person(words[2:]):
            return None
        return " ".join(["A", name, *adverbs, "le", *words[1:]])
    clitics: list[str] = []
    if words and words[0] == "me":
        clitics, words = ["se"], words[1:]
    if words and words[0] in OBJECTS:
        clitics, words = [*clitics, words[0]], words[1:]
    if not words or (words[0] == "como" and not (said_yo or adverbs)):  # or "as", "like"
        return None
    verb = conjugate(words[0])
    rest = words[1:]
    if verb is None or first_person(rest):
        return None
    if not (said_yo or adverbs or clitics) and rest and rest[0].lower() in THIRD_PERSON:
        return None  # "Marco vive en Roma" is about Marco
    return " ".join([name, *adverbs, *clitics, verb, *rest])
