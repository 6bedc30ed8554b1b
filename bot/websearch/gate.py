"""A cheap rule, no model: could this message need a web search at all?

It lets the advisor skip the LLM decision call for plain statements ("I prefer tea over
coffee", "thanks!"), which are most of a personal chat and never need the web. Anything
that looks like a question or a request (a question mark, a question word, a search or
"tell me" verb, "tomorrow", "weather", "news") still goes to the model, so a mistake here
skips a search only for a message that reads like a statement; ``/search`` always searches.
"""

from __future__ import annotations

import re

RIGHT_QUOTE = "\u2019"
FULLWIDTH_QUESTION_MARK = "\uff1f"


def _words(*lines: str) -> frozenset[str]:
    return frozenset(word for line in lines for word in line.split())


# Whole words, in the languages the bot most likely meets. Kept broad on purpose: a word
# listed here costs one small LLM call, a word missing can cost a needed search.
_ASKING_WORDS = _words(
    "what what's whats who who's whom whose where where's when when's why how how's which",
    "search look lookup google find tell show explain define translate compare",
    "latest news current currently tomorrow forecast weather price prices score scores",
    "wer wen wem wo wann warum wie welche welcher welches suche zeig erkläre morgen wetter",
    "que quoi qui où quand pourquoi comment quel quelle quels quelles cherche demain météo",
    "qué quién dónde cuándo cómo cuál busca mañana chi dove quando perché cerca",
)
# Auxiliaries ask only when they open the message ("is it raining in Paris").
_ASKING_OPENERS = _words(
    "is are was were do does did can could will would should shall has have",
    "ist sind kann kannst gibt hat est-ce es hay",
)
_WORD = re.compile(r"[\w'" + RIGHT_QUOTE + r"-]+")


def may_need_search(text: str) -> bool:
    """False only for messages that neither ask nor request anything."""
    stripped = text.strip()
    if not stripped:
        return False
    if "?" in stripped or FULLWIDTH_QUESTION_MARK in stripped or stripped.startswith("¿"):
        return True
    words = [word.replace(RIGHT_QUOTE, "'") for word in _WORD.findall(stripped.casefold())]
    if words and words[0] in _ASKING_OPENERS:
        return True
    return not _ASKING_WORDS.isdisjoint(words)
