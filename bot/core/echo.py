# ruff: noqa: RUF001  (first-person words in Cyrillic letters)
"""A code check on the reply: an answer that opens with the person's own words in the first
person speaks as them. To "hi! I'm Sam, I just moved to Porto" a small model answered
"Hello! I'm Sam, and I just moved to Porto", and to "What instrument do I play?" with the
note "Alice plays the cello", "I play the cello".

The check reads the answer's opening, after greetings ("Hello!", "Yes,"): it echoes when it
begins like one of the person's first-person texts (a clause of the message that begins with
"I", "my", "ich", ...; a recalled fact as they said it), over the first four words of that
text or all of a shorter one, or when it gives the person's name as the speaker's ("I'm Sam",
"Ich bin auch Jonas", "ゆきです"), or when its first sentence is in the first person, speaks
to nobody and names what a recalled fact is about ("Ich bin ein Bäcker" with the fact "Ich
arbeite als Bäcker"). While the opening streamed so far may still become such an
echo, it is held back (:meth:`EchoCheck.verdict`), so what the person sees never holds it.
An answer asked for again that echoes too loses its echoing sentences, and tells an echoed
fact about the person instead (:meth:`EchoCheck.without_echo`).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from enum import Enum

from bot.core.fact_block import about
from memory.language import COMMON_WORDS, guess_language
from memory.write.grounding import plain

# Each letter of a script written without spaces, and words of the others.
UNSPACED = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
UNSPACED_LETTER = re.compile(rf"[{UNSPACED}]")
TOKEN = re.compile(rf"[{UNSPACED}]|[^\W{UNSPACED}]+")
CLAUSE_END = re.compile(r"[.!?;:,\n。！？、]+")
SENTENCE = re.compile(r"[^.!?\n。！？]*(?:[.!?\n。！？]+\s*|$)")
SENTENCE_END = re.compile(r"[.!?\n。！？]\s*$")
# What an answer may open with before it says anything (as :func:`plain` writes them).
OPENERS = frozenset(
    """
    hi hello hey yes sure oh ok okay well great
    hallo servus moin ja gerne super
    bonjour salut coucou oui bien
    hola buenas si claro vale
    ciao certo
    ola oi sim
    привет здравствуите да конечно
    こんにちは はじめまして はい
    """.split()  # noqa: SIM905
) | {"how are you", "wie geht es dir", "ca va", "que tal", "как дела"}
# The first words of a clause in the first person (as :func:`plain` writes them).
SPEAKER = frozenset(
    """
    i my ich mein meine wir unser je j moi mon ma mes nous yo mi mis me soy io mio mia
    eu meu minha ik mijn я мой моя мою меня мне мы
    """.split()  # noqa: SIM905
)
# The first-person possessives among them: "Mia ist meine Tochter" speaks as the person too.
POSSESSIVE = frozenset(
    """
    my mein meine meinen meinem meiner mon ma mes mi mis mio meu minha mijn мой моя мою мои
    """.split()  # noqa: SIM905
)
# Words that speak to someone: a sentence with one is not in the person's voice.
ADDRESSEE_WORDS = """
    you your yours du dein deine deinen deinem deiner dir dich tu te toi ton ta tes vous votre
    vos tú ti tus usted tuo tua ты тебя тебе твой твоя твою вы вас вам ваш ваша
"""
# "I'm NAME" and its kin: the speaker's name, where NAME stands.
CALLED = (
    "i m NAME",
    "i am NAME",
    "i m also NAME",
    "my name is NAME",
    "ich bin NAME",
    "ich bin auch NAME",
    "ich heisse NAME",
    "ich heisse auch NAME",
    "je suis NAME",
    "je m appelle NAME",
    "moi c est NAME",
    "soy NAME",
    "me llamo NAME",
    "yo soy NAME",
    "меня зовут NAME",
    "я NAME",
)
CALLED_UNSPACED = ("NAME です",)  # "ゆきです"
# An opening this long that matches no text is clear.
COMPARED = 4


def tokens(text: str) -> list[str]:
    return TOKEN.findall(plain(text))


OPENING_TOKENS = [tokens(opener) for opener in OPENERS]
ADDRESSEE = frozenset(token for word in ADDRESSEE_WORDS.split() for token in tokens(word))
COMMON = frozenset(token for words in COMMON_WORDS.values() for token in tokens(" ".join(words)))
# A word of a recalled fact this long, not a common one, is what the fact is about.
FACT_WORD_LETTERS = 3


class Verdict(Enum):
    HOLD = "hold"  # the opening may still become an echo
    ECHO = "echo"
    CLEAR = "clear"


class EchoCheck:
    """The person's first-person texts, and whether an answer opens with one of them."""

    def __init__(self, person_name: str, message: str, facts: Sequence[str]) -> None:
        language = guess_language(message)
        told = [clause for fact in facts for clause in first_person(fact, language)]
        texts = [*first_person(message, language), *told]
        name = first_name(person_name)
        self._person = person_name
        self._language = language
        self._name = name
        unspaced = bool(name) and all(UNSPACED_LETTER.fullmatch(letter) for letter in name)
        if name:
            texts += [called_as(pattern, name) for pattern in CALLED]
        if unspaced:
            texts += [called_as(pattern, name) for pattern in CALLED_UNSPACED]
        self._texts = [text[:COMPARED] for text in texts]
        self._facts = [text[:COMPARED] for text in told]
        person = set(tokens(person_name))
        said = {*tokens(message), *SPEAKER, *COMMON, *person}
        self._fact_words = {
            word
            for fact in facts
            for word in tokens(fact)
            if len(word) >= FACT_WORD_LETTERS and word not in said
        } | {word for fact in facts for word in names(fact) if word not in person}

    def with_note(self, note: str) -> EchoCheck:
        """This check, where an answer that opens with a sentence of ``note`` (an instruction
        of the prompt) echoes too: a small model asked again with a note recited it."""
        check = copy.copy(self)
        recited = [tokens(sentence)[:COMPARED] for sentence in SENTENCE.findall(note)]
        check._texts = [*self._texts, *(text for text in recited if text)]
        return check

    def verdict(self, answer: str, *, complete: bool = False) -> Verdict:
        """ECHO or CLEAR; while the answer is still being written (not ``complete``), HOLD
        as long as its opening may still become an echo."""
        # With and without the person's name after a greeting: "Hallo Jonas! Ich bin auch
        # Jonas", and "ゆきです", which begins with the name.
        openings = self._openings(answer)
        if opens_with(openings, self._texts):
            return Verdict.ECHO
        told = self._fact_as_own(answer)
        if told is Verdict.ECHO:
            return told
        if complete:
            return Verdict.CLEAR
        if told is Verdict.HOLD:
            return told
        # The last word may be cut: "Hel" may become "Hello", "I'm Sa" "I'm Sam".
        cut = bool(answer) and (answer[-1].isalnum() or answer[-1] == "'")
        if any(self._may_become(opening, cut) for opening in openings):
            return Verdict.HOLD
        return Verdict.CLEAR

    def without_echo(self, answer: str) -> str:
        """``answer`` without the sentences at its start that echo (greetings kept):
        "Hallo! Ich bin Jonas und wohne in Freiburg. Wie kann ich helfen?" becomes
        "Hallo! Wie kann ich helfen?". One that echoes a recalled fact is the answer to a
        question about it, so it is told about the person instead, where the fact block's
        rules can: "私はチェロを弾きます。" becomes "Aliceさんはチェロを弾きます。"."""
        sentences = [sentence for sentence in SENTENCE.findall(answer) if sentence]
        kept: list[str] = []
        for at, sentence in enumerate(sentences):
            if self.verdict(sentence, complete=True) is Verdict.ECHO:
                kept.append(self._told_about(sentence))
                continue
            if without_openers(tokens(sentence), [self._name]):
                return "".join([*kept, *sentences[at:]]).strip()
            kept.append(sentence)
        return "".join(kept).strip()

    def _fact_as_own(self, answer: str) -> Verdict:
        """ECHO where the answer's first sentence that says something is in the first
        person (it begins so, or has "my"), neither speaks to nor names the person, and
        names what a recalled fact is about in other words ("Ich bin ein Bäcker" with the
        fact "Ich arbeite als Bäcker", "Ja, Mia ist meine Tochter");
        HOLD while that sentence is not yet written to its end."""
        sentences = [sentence for sentence in SENTENCE.findall(answer) if sentence]
        for at, sentence in enumerate(sentences):
            words = without_openers(tokens(sentence), [self._name])
            if not words:
                continue
            # Not the fact's own words: "Mia" is a name there, not Italian's "my".
            own = [word for word in words if word not in self._fact_words]
            opens_so = own[:1] == words[:1] and words[0] in SPEAKER
            first_person = opens_so or bool(POSSESSIVE.intersection(own))
            speaks_to = ADDRESSEE.union(self._name).intersection(words)
            if not self._fact_words or not first_person or speaks_to:
                return Verdict.CLEAR
            if self._fact_words.intersection(words):
                return Verdict.ECHO
            ended = at < len(sentences) - 1 or SENTENCE_END.search(sentence) is not None
            return Verdict.CLEAR if ended else Verdict.HOLD
        return Verdict.CLEAR

    def _told_about(self, sentence: str) -> str:
        """An echo of a recalled fact in the third person; "" for any other echo."""
        echoed = opens_with(self._openings(sentence), self._facts)
        if not echoed and self._fact_as_own(sentence) is not Verdict.ECHO:
            return ""
        # "Bonjour Alice, je suis infirmière": the greeting before a comma is left out.
        head, comma, tail = sentence.partition(",")
        if comma and not without_openers(tokens(head), [self._name]):
            sentence = tail.lstrip()
        rewritten = about(sentence.strip(), self._person, self._language)
        return rewritten + sentence[len(sentence.rstrip()) :] if rewritten else ""

    def _openings(self, answer: str) -> list[list[str]]:
        answered = tokens(answer)
        return [without_openers(answered, []), without_openers(answered, [self._name])]

    def _may_become(self, opening: list[str], cut: bool) -> bool:
        candidates = [*self._texts, *OPENING_TOKENS, self._name]
        return not opening or any(may_become(opening, text, cut) for text in candidates if text)


def first_person(text: str, language: str) -> list[list[str]]:
    """The clauses of ``text`` of three words or more in the first person: they begin with a
    first-person word, or the third-person rules of the fact block rewrite them (a verb of a
    language that drops the pronoun, "Tengo dos gatos"; "私は...")."""
    clauses = [(clause, tokens(clause)) for clause in CLAUSE_END.split(text)]
    return [
        words
        for clause, words in clauses
        if len(words) >= 3 and (words[0] in SPEAKER or about(clause, "X", language))
    ]


def opens_with(openings: list[list[str]], texts: list[list[str]]) -> bool:
    return any(opening[: len(text)] == text for opening in openings for text in texts)


def names(fact: str) -> list[str]:
    """The words of ``fact`` written with a capital inside a sentence: "Mia" (also a word of
    the first person in Italian) in "Meine Tochter heißt Mia"."""
    return [
        token
        for sentence in SENTENCE.findall(fact)
        for word in sentence.split()[1:]
        if word[:1].isupper()
        for token in tokens(word)
    ]


def first_name(person_name: str) -> list[str]:
    words = person_name.split()
    return tokens(words[0]) if words else []


def called_as(pattern: str, name: list[str]) -> list[str]:
    before, after = pattern.split("NAME")
    return [*tokens(before), *name, *tokens(after)]


def without_openers(opening: list[str], also: list[list[str]]) -> list[str]:
    start = 0
    while True:
        found = [o for o in [*OPENING_TOKENS, *also] if o and opening[start : start + len(o)] == o]
        if not found:
            return opening[start:]
        start += len(max(found, key=len))


def may_become(opening: list[str], text: list[str], cut: bool) -> bool:
    """``opening`` is the start of ``text`` (its last token the start of a word if ``cut``)."""
    if len(opening) > len(text):
        return False
    *whole, last = opening
    if text[: len(whole)] != whole:
        return False
    return text[len(whole)] == last or (cut and text[len(whole)].startswith(last))
