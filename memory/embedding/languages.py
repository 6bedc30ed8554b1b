"""Which models are English-first, and whether a fact reads as English (a rough guess: it
only has to tell a mostly English store from a mostly other one).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MULTILINGUAL_MODEL = "google/embeddinggemma-300m"

_ENGLISH_FIRST = re.compile(
    r"all-minilm|all-mpnet|bge-(small|base|large)-en|nomic-embed-text|paraphrase-minilm"
)
# English words that the other languages Mnemo's users write in do not share ("is" and
# "of" are Dutch, "was" and "am" German, "me" and "no" Romance), and the pronoun "I".
_ENGLISH_WORDS = frozenset(
    {"i'm", "i've", "my", "mine", "the", "are", "were", "have", "has", "had", "and", "with"}
    | {"for", "to", "at", "don't", "doesn't", "not", "our", "we", "you", "she", "they", "it"}
    | {"this", "that", "like", "work", "live"}
)
_PRONOUN_I = re.compile(r"\bI\b")
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def english_first(model: str) -> bool:
    """A model Mnemo knows to be trained on English (multilingual ones say so by name)."""
    name = model.lower()
    return "multilingual" not in name and _ENGLISH_FIRST.search(name) is not None


def looks_english(text: str) -> bool:
    words = _WORD.findall(text.lower().replace("\u2019", "'"))
    return (
        bool(words)
        and all(word.isascii() for word in words)
        and (any(word in _ENGLISH_WORDS for word in words) or _PRONOUN_I.search(text) is not None)
    )


def share_not_english(texts: Iterable[str]) -> tuple[int, int]:
    """How many of ``texts`` do not read as English, and how many there are."""
    counted = [looks_english(text) for text in texts]
    return counted.count(False), len(counted)
