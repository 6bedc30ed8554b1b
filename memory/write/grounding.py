"""A code check on extraction: a fact must be said in the message, not only asked about.

Small models write "facts" out of questions or what they know. Without its question clauses
and conditional sentences, the message must hold every number of the fact and a third of its
content words (matched on their first four letters; CJK characters one by one).
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
    for sentence in SENTENCE_END.split(message.strip()):
        if HYPOTHETICAL.search(sentence):
            continue
        clauses = [c for c in CLAUSE_BREAK.split(sentence) if c and c.strip()]
        if sentence.rstrip().endswith(("?", "\uff1f")) or sentence.lstrip().startswith("¿"):
            clauses = [c for c in clauses[:-1] if not is_question_clause(c)]
        kept.extend(clause.strip() for clause in clauses)
    return kept


def matches(word: str, said: set[str], prefixes: set[str]) -> bool:
    if word in said:
        return True
    return len(word) >= PREFIX and not word.isdigit() and word[:PREFIX] in prefixes


def is_grounded(fact: str, message: str) -> bool:
    """Whether ``fact`` is stated (not only asked about) in ``message``."""
    said = set(units(statement_part(message)))
    prefixes = {word[:PREFIX] for word in said if len(word) >= PREFIX}
    words = units(fact)
    numbers = [word for word in words if any(c.isdigit() for c in word)]
    if any(number not in said for number in numbers):
        return False
    content = [
        word
        for word in words
        if word in numbers
        or ((len(word) >= 3 or CHARACTER_SCRIPT.match(word)) and word not in FUNCTION_WORDS)
    ]
    found = sum(matches(word, said, prefixes) for word in content)
    return found >= 1 and found * 3 >= len(content)
