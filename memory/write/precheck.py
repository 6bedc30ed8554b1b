"""A cheap pre-check that skips extraction for messages that cannot hold a fact.

Conservative on purpose (a skipped fact is lost silently): only messages without letters,
made of acknowledgements and greetings, or stating nothing once questions, hypotheticals and
requests to the assistant are set aside (grounding would keep out every fact anyway).
"""

from __future__ import annotations

from memory.write.grounding import statement_part
from memory.write.normalise import normalise_text

# Words that, alone or together, make a message an acknowledgement, greeting or laugh.
FILLER_WORDS = frozenset(
    # A word list reads better as text than as a 100-line literal.
    """
    ok okay okey k kk oki okie alright allright fine sure yes yeah yep yup ya no nope nah
    thanks thank thx ty tysm you u very much so a lot lots cheers
    cool nice great awesome perfect good lovely neat sweet wow oh ah ahh ooh hmm hm mhm uh um
    lol lmao rofl haha hahaha hehe heh xd
    hi hello hey hiya yo morning evening night gn gm good bye goodbye cya see later ttyl
    np problem welcome sorry oops got it gotcha understood agreed indeed right true exactly
    merci danke gracias grazie obrigado obrigada oui non ja nein si bien bon bonjour salut
    hallo tschüss ciao hola vale dale
    """.split()  # noqa: SIM905
)


def may_hold_fact(text: str) -> bool:
    """False only for messages that certainly state nothing about the person."""
    if not any(character.isalpha() for character in text):
        return False
    words = normalise_text(text).split()
    if all(word in FILLER_WORDS for word in words):
        return False
    return any(character.isalpha() for character in statement_part(text))
