"""A guess at the language a message is written in, from its most common words.

For choosing which wording of the prompt's own labels to use, where a wrong guess gives
English labels, never a wrong answer, since the reply model answers in the person's language
anyway; which language's rules put a recalled fact in the third person, where a wrong
guess leaves the fact quoted, since each language's rules start from its own first-person
words; and whether an extracted fact was translated into English, where a wrong guess costs
one more question to the model. Languages: English, German, French, Spanish, Italian, and
Russian and Japanese by their scripts.
"""

from __future__ import annotations

import re

WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
CYRILLIC = re.compile(r"[\u0400-\u04ff]")
KANA = re.compile(r"[\u3040-\u30ff]")  # hiragana and katakana: Japanese, not Chinese
# Spanish alone of these languages writes them: "¿Dónde vivo?" has no common word.
SPANISH_MARKS = re.compile("[\u00bf\u00a1\u00f1\u00d1]")  # ¿ ¡ ñ Ñ

COMMON_WORDS: dict[str, frozenset[str]] = {
    language: frozenset(words.split())
    for language, words in {
        "en": "i my me the and is are to you a of in it that what do have with was not",
        "de": "ich mein meine bin ist und der die das nicht du mit ein eine zu wie was hast",
        "fr": "je j mon ma mes suis est et le la les de un une tu pas que qui avec pour",
        "es": "yo mi mis soy es y el la los las de un una tu no que con para por estoy en al del",
        "it": "io il lo gli sono è e di che non un una mio mia per con ho sei ti al del",
    }.items()
}
DEFAULT = "en"


def likely_languages(text: str) -> list[str]:
    """The languages ``text`` may be written in, likeliest first; none when nothing tells.

    More than one when the common words tie, as in the short "Estudio de noche", whose one
    common word is French and Spanish alike: the caller can try each one's rules.
    """
    if len(CYRILLIC.findall(text)) * 2 > len(text.replace(" ", "")):
        return ["ru"]
    if KANA.search(text):
        return ["ja"]
    words = [word.casefold() for word in WORD.findall(text)]
    scores = {
        language: sum(word in common for word in words) for language, common in COMMON_WORDS.items()
    }
    scores["es"] += len(SPANISH_MARKS.findall(text))
    top = max(scores.values())
    tied = [language for language, score in scores.items() if score == top and top > 0]
    if not tied:
        return []
    # A tie goes to the language of the first word that tells them apart: a short fact such
    # as "Ich wohne in Leipzig" has one common word of German and one of English.
    for word in words:
        having = [language for language in tied if word in COMMON_WORDS[language]]
        if having and len(having) < len(tied):
            return [*having, *(language for language in tied if language not in having)]
    return sorted(tied, key=lambda language: language != DEFAULT)


def guess_language(text: str) -> str:
    """``en``, ``de``, ``fr``, ``es``, ``it``, ``ru`` or ``ja``; English when unsure."""
    return next(iter(likely_languages(text)), DEFAULT)
