"""Russian facts said in the first person, rewritten about the person by name.

As :mod:`bot.core.third_person` does for English, and for the same reason: a quoted
"Я играю на виолончели" was repeated by the reply model in the person's voice. "Я" becomes
the name and a present-tense verb after it (past a negation or an adverb) its third person
("Alice играет на виолончели"); a first-conjugation ending is regular (-аю, -яю, -ею, -ую),
the second conjugation and the irregular verbs are listed. A sentence without a verb ("Я
врач") or in the past tense, which agrees with the person and not the grammatical person,
keeps its words. "Моя собака", "меня", "мне" and the like would need the person's gender
or a case of the name, so they give ``None`` and the fact stays quoted.
"""

# Russian words, not look-alikes of Latin letters.
# ruff: noqa: RUF001, RUF002, RUF003

from __future__ import annotations

import re

IRREGULAR = {
    "буду": "будет",
    "живу": "живёт",
    "могу": "может",
    "хочу": "хочет",
    "иду": "идёт",
    "еду": "едет",
    "ем": "ест",
    "пью": "пьёт",
    "пою": "поёт",
    "мою": "моет",
    "пишу": "пишет",
    "беру": "берёт",
    "жду": "ждёт",
    "зову": "зовёт",
    "несу": "несёт",
    "веду": "ведёт",
    "плыву": "плывёт",
    "бегу": "бежит",
    "ищу": "ищет",
    "люблю": "любит",
    "сплю": "спит",
    "готовлю": "готовит",
    "ставлю": "ставит",
    "кормлю": "кормит",
    "терплю": "терпит",
    "хожу": "ходит",
    "сижу": "сидит",
    "вижу": "видит",
    "езжу": "ездит",
    "прошу": "просит",
    "ношу": "носит",
    "боюсь": "боится",
}
# Second-conjugation verbs whose first person is the third's stem and -ю or -у.
SECOND = frozenset(
    """
    говорю курю звоню смотрю стою строю верю помню варю дарю учу держу слышу дышу кричу
    молчу спешу служу лежу дружу
    """.split()  # noqa: SIM905
)
ADVERBS = frozenset(
    """
    не больше уже тоже также очень часто всегда никогда редко обычно ещё еще сейчас давно
    иногда много мало почти совсем так
    """.split()  # noqa: SIM905
)
FIRST_PERSON = frozenset(
    """
    я меня мне мной мною мой моя моё мое мою мои моего моей моему моим моих моими мы нас
    нам нами наш наша наше нашу наши ты тебя тебе тобой твой твоя твоё твою твои
    """.split()  # noqa: SIM905
)


def conjugate(verb: str) -> str | None:
    """The third person singular of a Russian first-person present-tense verb, or None."""
    if verb in IRREGULAR:
        return IRREGULAR[verb]
    if verb.endswith("сь"):
        third = conjugate(verb[:-2])
        return None if third is None else third + "ся"
    if verb in SECOND:
        return verb[:-1] + "ит"
    if re.search(r"[аяеу]ю$", verb):
        return verb[:-1] + "ет"
    return None


def about(fact: str, name: str) -> str | None:
    """``fact`` (Russian, first person) about ``name``, or None if it is not that simple."""
    words = " ".join(fact.split()).split(" ")
    if len(words) < 2 or words[0] not in ("Я", "я"):
        return None
    position = 1
    while position < len(words) and words[position] in ADVERBS:
        position += 1
    if position >= len(words):
        return None
    word, rest = words[position], words[position + 1 :]
    verb = conjugate(word)
    past = word.endswith(("лась", "лся"))  # "Я родилась в Омске"
    if verb is None and not past and re.search(r"(?:у|ю|сь|м)$", word):
        return None  # a first person these rules do not know
    if any(first_person(w.lower().strip(",.;:!?"), verb is None) for w in rest):
        return None
    return " ".join([name, *words[1:position], verb or word, *rest])


def first_person(word: str, verbless: bool) -> bool:
    """Whether ``word`` says "I": a pronoun, a first-person verb ("Я работаю и учусь"), or
    after a first word that is no verb ("Я с ним дружу") any word that may be one."""
    if word in FIRST_PERSON or conjugate(word) is not None or word.endswith(("юсь", "усь")):
        return True
    return verbless and re.search(r"(?:у|ю|ем|им)$", word) is not None
