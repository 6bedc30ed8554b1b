"""Normalised text: the only equality code may act on without asking a model."""

from __future__ import annotations

import re
import unicodedata

_NOT_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normalise_text(text: str) -> str:
    """Case, accents' composition, punctuation and spacing removed: ``"I like tea."`` ==
    ``"i like  TEA"``. Words themselves are kept, so "34" and "35" stay different."""
    composed = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_NOT_WORD.sub(" ", composed).split())
