"""Which messages take the explicit lookup path: questions and requests to recall.

A cheap rule, no model; a mistake only costs a little speed or ranking either way.
"""

from __future__ import annotations

import re
from functools import cache

# Question openers in the languages the bot is most likely to meet; matched as whole words.
_QUESTION_OPENERS = (
    "what what's whats who who's whom whose where where's when when's why how how's which",
    "do does did is are was were can could will would should shall have has had may might",
    "wer wen wem wessen wo woher wohin wann warum wieso weshalb wie welche welcher welches",
    "welchen hast hat habe bist ist sind kannst weißt weisst erinnerst",
    "que quoi qui où quand pourquoi comment quel quelle quels quelles combien est-ce",
    "qué quién quiénes dónde cuándo cómo cuál cuáles cuánto cuántos sabes recuerdas",
    "cosa chi dove quando perché quale quanto ricordi",
)

_RECALL_REQUESTS = re.compile(
    r"\b("
    r"(what|anything)\b.{0,30}\b(you|u)\b.{0,15}\b(remember|know|recall)"
    r"|do you (still )?(remember|recall|know)"
    r"|remind me"
    r"|tell me what you (know|remember)"
    r"|was weißt du|woran erinnerst du|erinnerst du dich"
    r"|qu'est-ce que tu sais|tu te souviens|te souviens-tu"
    r"|qué sabes|te acuerdas|recuerdas"
    r")\b"
)

_SMALL_TALK = re.compile(
    r"^(hi|hey|hello|yo|hallo|salut|hola|ciao)?[\s,!¿]*("
    r"how are (you|u|things)|how's it going|how is it going|what's up|whats up|sup"
    r"|how do you do|wie geht'?s( dir)?|wie geht es dir|ça va|ca va|comment vas-tu"
    r"|qué tal|como estás|cómo estás|come stai"
    r")[\s\w,]*[?!.]*$"
)


# Requests for everything about the speaker: no query to rank by, so similarity would drop
# every fact ("what do you know about me?" is barely similar to "I live in Lyon").
_OVERVIEW_REQUESTS = re.compile(
    r"\b("
    r"(what|everything|anything)\b.{0,20}\b(you|u)\b.{0,15}\b(know|remember|recall)"
    r"\b.{0,10}\b(about|of) (me|myself)\b"
    r"|what have i (told|said to) you"
    r"|(list|show)( me)? (everything|all|what) you (know|remember)"
    r"|was weißt du (alles )?über mich|woran erinnerst du dich über mich"
    r"|qu'est-ce que tu sais (de|sur) moi|que sais-tu (de|sur) moi"
    r"|qué sabes (de|sobre) mí|cosa sai di me"
    r")"
)


def wants_overview(text: str) -> bool:
    """True for "what do you know about me?" and other requests for all of one's facts."""
    return bool(_OVERVIEW_REQUESTS.search(_normalise(text)))


@cache
def question_words() -> frozenset[str]:
    """Words that open a question, in English, German, French, Spanish and Italian."""
    return frozenset(word for line in _QUESTION_OPENERS for word in line.split())


def _normalise(text: str) -> str:
    return " ".join(text.lower().replace("\u2019", "'").split())


def wants_lookup(text: str) -> bool:
    """True for questions and recall requests, False for statements and small talk."""
    normalised = _normalise(text)
    if not normalised or _SMALL_TALK.match(normalised):
        return False
    if _RECALL_REQUESTS.search(normalised):
        return True
    if normalised.endswith(("?", "\uff1f")) or normalised.startswith("¿"):
        return True
    first_word = re.split(r"[\s,]", normalised, maxsplit=1)[0]
    return first_word in question_words() and not normalised.endswith((".", "!"))
