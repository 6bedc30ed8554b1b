"""A code check on extraction: a fact must be said in the message, not only asked about.

Small models write "facts" out of questions, requests or what they know. Without its
question clauses, requests to the assistant, conditional sentences, what someone else says of
the person and anything in braces (JSON written to look like the extraction's answer), the
message must hold every number of the fact and a third of its content words (matched on
their first four letters; CJK characters one by one); half of them if the fact names no
author ("I", "my", "ich", "мой", 私 ...): asked for a poem, a small model wrote its lines as
facts that share one word with the request.
"""

from __future__ import annotations

import re
import unicodedata

from memory.recall.classifier import question_words

SENTENCE_END = re.compile("(?<=[.!?\u3002\uff01\uff1f])\\s+|\n+")
CLAUSE_BREAK = re.compile(
    r"[,;:]\s*|\s+-\s+|\s+(?:and|but|or|und|aber|oder|et|mais|ou|y|pero|o)\s+"
)
WORD = re.compile(r"\w+", re.UNICODE)
# Ideographs, kana, Hangul syllables: compared as single characters.
CHARACTER_SCRIPT = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
HIRAGANA = re.compile(r"[\u3040-\u309f]")
HYPOTHETICAL = re.compile(
    r"\b(?:would|wouldn't|if i were|if i had|if i won|imagine|suppose|pretend"
    r"|würde|würden|wäre|wären|hätte|hätten|stell dir vor"
    r"|je \w+rais|j'\w+rais|si j'avais|si j'étais"
    r"|gustaría|compraría|tendría|sería|haría|viviría|si tuviera|si fuera|si ganara|ojalá"
    r"|бы)\b",
    re.IGNORECASE,
)
# What someone else says or thinks about the person ("my boss says I'm lazy", "mi hermano
# dice que soy terco"): the words after the verb are their claim, not the person's statement.
# Third-person forms; where the first person has the same form, a pronoun before it keeps it.
REPORTED = re.compile(
    r"\b(?:says|said|thinks|claims|believes|insists|reckons|tells me|told me|telling me"
    r"|dice|dijo|cree|piensa|opina|asegura|sagt|sagte|meint|findet|glaubt|behauptet"
    r"|dit|pense|trouve|croit|affirme|prétend|pensa|crede"
    r"|говорит|сказал|сказала|считает|думает)\b",
    re.IGNORECASE,
)
COMPLEMENT = re.compile(r"\s*(?:that|que|qu'|dass|daß|что|che)\b", re.IGNORECASE)
FIRST_PERSON = frozenset("i we yo ich wir je j nous io я мы".split())  # noqa: SIM905
# The words by which a fact names its author, as :func:`plain` writes them (en, de, fr, es,
# it, pt, nl, ru, and the CJK characters); pro-drop facts ("Toco el violonchelo") have none.
AUTHOR_WORDS = frozenset(
    """
    i me my mine myself we us our ours
    ich mich mir mein meine meinen meinem meiner meines wir uns unser unsere unseren unserem
    je j m moi mon ma mes nous notre nos
    yo mi mis conmigo nosotros nosotras nuestro nuestra nuestros nuestras
    io mio mia miei mie noi nostro nostra nostri nostre
    eu meu minha meus minhas comigo nosso nossa
    ik mij mijn wij ons onze
    я меня мне мной мой мое моя мои моего моей моих мы нас нам наш наша наше наши
    私 僕 俺 我
    """.split()  # noqa: SIM905
)
# Braces hold code or JSON, never what a person says of themselves.
BRACED = re.compile(r"\{[^{}]*\}")
# A clause that asks the assistant for something starts with one of these imperatives (en, de,
# fr, es, it, pt, ru; after "please" and the like) or, in Japanese, ends in ください: what
# follows is the request, not something the person states ("Write me a haiku about autumn"
# became "Autumn leaves fall softly"). Only forms no statement starts with.
REQUEST_VERBS = frozenset(
    """
    write give tell show translate explain list suggest recommend find create draw summarize
    summarise describe send generate compose calculate convert help teach sing
    schreib schreibe gib sag sage zeig zeige erklär erkläre übersetz übersetze nenn nenne
    empfiehl hilf erzähl erzähle
    écris donne dis montre explique traduis raconte fais propose recommande trouve calcule
    résume décris
    escribe dame dime muestra muéstrame explica explícame traduce cuéntame haz recomienda
    recomiéndame ayúdame sugiere sugiéreme calcula resume enséñame
    scrivi dammi dimmi mostrami spiega spiegami traduci racconta raccontami consiglia
    consigliami aiutami trova suggerisci
    escreva escreve diga mostre explique traduza conte faça recomende ajude
    напиши дай скажи покажи объясни переведи расскажи сделай посоветуй помоги найди
    придумай составь опиши
    """.split()  # noqa: SIM905
)
POLITE = frozenset("please pls kindly bitte mal por favor per favore пожалуйста".split())  # noqa: SIM905
JAPANESE_REQUEST = ("ください", "下さい", "てくれ")
PREFIX = 4
# Short, common words that say nothing about what the fact is.
FUNCTION_WORDS = frozenset(
    """
    the and for with that this not now also are was were has have had been being very
    der die das und ist ein eine einen mit für von bei auch nicht jetzt sehr
    les des une est avec pour pas dans sur aussi très
    los las una con por para del muy también ahora
    """.split()  # noqa: SIM905
)


def plain(text: str) -> str:
    """Lower case without accents, so "Amélie" and "amelie" are the same word."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


REQUESTS = frozenset(plain(verb) for verb in REQUEST_VERBS)


def units(text: str) -> list[str]:
    """Words, with Chinese/Japanese/Korean text split into characters (kana particles out)."""
    found: list[str] = []
    for word in WORD.findall(plain(text)):
        if CHARACTER_SCRIPT.search(word):
            found.extend(c for c in word if CHARACTER_SCRIPT.match(c) and not HIRAGANA.match(c))
        else:
            found.append(word)
    return found


def is_question_clause(clause: str) -> bool:
    words = WORD.findall(clause.casefold())
    return bool(words) and words[0] in question_words()


def statement_part(message: str) -> str:
    """The message without its questions and hypotheticals: what the person states."""
    return " ".join(statement_clauses(message))


def statement_clauses(message: str) -> list[str]:
    """The clauses of :func:`statement_part`, one by one."""
    kept: list[str] = []
    for sentence in SENTENCE_END.split(without_braces(message).strip()):
        if HYPOTHETICAL.search(sentence):
            continue
        clauses = [c for c in CLAUSE_BREAK.split(sentence) if c and c.strip()]
        if sentence.rstrip().endswith(("?", "\uff1f")) or sentence.lstrip().startswith("¿"):
            clauses = [c for c in clauses[:-1] if not is_question_clause(c)]
        kept.extend(without_reported([c for c in clauses if not is_request_clause(c)]))
    return kept


def is_request_clause(clause: str) -> bool:
    """Whether ``clause`` asks the assistant for something (see ``REQUEST_VERBS``)."""
    if clause.strip().rstrip(".!\u3002\uff01").endswith(JAPANESE_REQUEST):
        return True
    words = [word for word in WORD.findall(plain(clause)) if word not in POLITE]
    return bool(words) and words[0] in REQUESTS


def without_braces(message: str) -> str:
    """``message`` without what is in braces, nested ones too."""
    while True:
        shorter = BRACED.sub(" ", message)
        if shorter == message:
            return message
        message = shorter


def without_reported(clauses: list[str]) -> list[str]:
    """The clauses up to the verb by which someone else reports on the person, if one has
    it: what follows in that clause, or in the next one after a comma ("говорит, что ..."),
    is that person's claim."""
    kept: list[str] = []
    reported = False
    for clause in clauses:
        if reported and COMPLEMENT.match(clause):
            continue
        cut = reporting_verb_end(clause)
        reported = cut is not None
        kept.append(clause[:cut].strip())
    return [clause for clause in kept if clause]


def reporting_verb_end(clause: str) -> int | None:
    """Where the reporting verb of ``clause`` ends, if someone else is its subject."""
    for verb in REPORTED.finditer(clause):
        before = WORD.findall(clause[: verb.start()].casefold())
        if not before or before[-1] not in FIRST_PERSON:
            return verb.end()
    return None


def is_number(word: str) -> bool:
    """A word with a digit ("2024", "10h30", "5km"): compared whole, never by its start."""
    return any(c.isdigit() for c in word)


def matches(word: str, said: set[str], prefixes: set[str]) -> bool:
    if word in said:
        return True
    return len(word) >= PREFIX and not is_number(word) and word[:PREFIX] in prefixes


def vocabulary(text: str) -> tuple[set[str], set[str]]:
    """The words of ``text``, and the first letters by which :func:`matches` finds a word."""
    said = set(units(text))
    return said, {word[:PREFIX] for word in said if len(word) >= PREFIX}


def content_words(words: list[str]) -> list[str]:
    """Of ``words`` (:func:`units`), those that say what a text is about: numbers, and words
    of three letters or more (CJK characters one by one) that are not function words."""
    return [
        word
        for word in words
        if is_number(word)
        or ((len(word) >= 3 or CHARACTER_SCRIPT.match(word)) and word not in FUNCTION_WORDS)
    ]


def says_all_of(text: str, other: str) -> bool:
    """Whether every content word of ``other`` is in ``text`` (numbers exactly, other words
    by their first four letters): ``text`` could stand for both."""
    said, prefixes = vocabulary(text)
    return all(matches(word, said, prefixes) for word in content_words(units(other)))


def shares_a_word(text: str, other: str) -> bool:
    """Whether ``text`` has a content word of ``other`` (numbers exactly, other words by
    their first four letters)."""
    said, prefixes = vocabulary(text)
    return any(matches(word, said, prefixes) for word in content_words(units(other)))


def is_grounded(fact: str, message: str) -> bool:
    """Whether ``fact`` is stated (not only asked about) in ``message``; a fact that is what
    someone else says of the person ("My brother says I'm stubborn") never is."""
    if any(reporting_verb_end(clause) is not None for clause in CLAUSE_BREAK.split(fact)):
        return False
    said, prefixes = vocabulary(statement_part(message))
    words = units(fact)
    if any(word not in said for word in words if is_number(word)):
        return False
    content = content_words(words)
    found = sum(matches(word, said, prefixes) for word in content)
    share = 3 if AUTHOR_WORDS.intersection(words) else 2
    return found >= 1 and found * share >= len(content)
