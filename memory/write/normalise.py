"""Text normalisation for equality checks: the only way the code itself decides NONE
(similarity never does: "I'm 34 years old" and "I'm 35 years old" score 0.94).
"""

from __future__ import annotations

import string
import unicodedata

# Apostrophes and quotes vary between keyboards (straight or curly); they carry no meaning here.
_DROPPED_CATEGORIES = ("P", "S")


# ASCII's punctuation and symbols (its only characters of those categories) become spaces.
_ASCII_DROPPED = str.maketrans(string.punctuation, " " * len(string.punctuation))


def normalise_text(text: str) -> str:
    """Lower-case, punctuation-free, single-spaced form of ``text`` (digits are kept)."""
    if text.isascii():
        # The same result without a Unicode lookup per character: NFKC leaves ASCII as it
        # is and casefold is lower (the write path compares thousands of texts a message).
        return " ".join(text.lower().translate(_ASCII_DROPPED).split())
    return normalised_by_unicode(text)


def normalised_by_unicode(text: str) -> str:
    """:func:`normalise_text` for any text, by Unicode's own tables."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(
        " " if unicodedata.category(character)[0] in _DROPPED_CATEGORIES else character
        for character in folded
    )
    return " ".join(kept.split())


def same_text(first: str, second: str) -> bool:
    return normalise_text(first) == normalise_text(second)
