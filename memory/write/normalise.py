"""Text normalisation for equality checks: the only way the code itself decides NONE.

Two fact texts are "the same" when they match after Unicode normalisation, case folding,
dropping punctuation and collapsing whitespace. Similarity never decides sameness: with
all-MiniLM-L6-v2 "I'm 34 years old" and "I'm 35 years old" score 0.94.
"""

from __future__ import annotations

import unicodedata

# Apostrophes and quotes vary between keyboards (straight or curly); they carry no meaning here.
_DROPPED_CATEGORIES = ("P", "S")


def normalise_text(text: str) -> str:
    """Lower-case, punctuation-free, single-spaced form of ``text`` (digits are kept)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(
        " " if unicodedata.category(character)[0] in _DROPPED_CATEGORIES else character
        for character in folded
    )
    return " ".join(kept.split())


def same_text(first: str, second: str) -> bool:
    return normalise_text(first) == normalise_text(second)
