"""The recalled facts as the reply model sees them: a labelled block about the person.

Listed as the person said them ("- I live in Paris"), a small model took the facts for its
own voice or for what the person just said, and answered as that person. So the block is
headed, in the person's language, as notes about them from earlier conversations, and each
fact is about the person by name: rewritten in the third person by its language's rules
("Alice lives in Paris", "Alice wohnt in Berlin"), or, where those rules do not cover it,
quoted with the name ("Alice said: ...").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.core import (
    third_person,
    third_person_de,
    third_person_es,
    third_person_fr,
    third_person_it,
    third_person_ja,
    third_person_ru,
)
from memory.language import guess_language, likely_languages


@dataclass(frozen=True, slots=True)
class Labels:
    heading: str
    said: str
    nothing: str
    answer: str


LABELS = {
    "en": Labels(
        "What you know about {name} from earlier conversations (notes, not part of this "
        "conversation):",
        '{name} said: "{fact}"',
        "You do not know anything about {name} yet.",
        'Answer in English, speaking to {name} as "you".',
    ),
    "de": Labels(
        "Was du über {name} aus früheren Gesprächen weißt (Notizen, nicht Teil dieses Gesprächs):",
        "{name} hat gesagt: \u201e{fact}\u201c",
        "Du weißt noch nichts über {name}.",
        "Antworte auf Deutsch und sprich {name} mit \u201edu\u201c an.",
    ),
    "fr": Labels(
        "Ce que tu sais de {name} grâce à des conversations précédentes (des notes, pas des "
        "messages de cette conversation) :",
        "{name} a dit : « {fact} »",
        "Tu ne sais encore rien de {name}.",
        "Réponds en français et tutoie {name}.",
    ),
    "es": Labels(
        "Lo que sabes de {name} por conversaciones anteriores (notas, no mensajes de esta "
        "conversación):",
        "{name} dijo: «{fact}»",
        "Todavía no sabes nada de {name}.",
        "Responde en español, hablándole a {name} de «tú».",
    ),
    "it": Labels(
        "Quello che sai di {name} da conversazioni precedenti (appunti, non messaggi di "
        "questa conversazione):",
        "{name} ha detto: «{fact}»",
        "Non sai ancora niente di {name}.",
        "Rispondi in italiano, dando del «tu» a {name}.",
    ),
    "ru": Labels(
        "Что ты знаешь о человеке {name} из прошлых разговоров (заметки, не сообщения этого "  # noqa: RUF001
        "разговора):",
        "{name} говорит о себе: «{fact}»",  # noqa: RUF001
        "Ты пока ничего не знаешь о человеке {name}.",  # noqa: RUF001
        "Отвечай по-русски, обращаясь к человеку {name} на «ты».",
    ),
    "ja": Labels(
        "以前の会話から{name}さんについて知っていること（メモであり、この会話の一部ではありません）：",  # noqa: RUF001
        "{name}さんの言葉：「{fact}」",  # noqa: RUF001
        "{name}さんについてはまだ何も知りません。",
        "日本語で、{name}さんに直接話しかけるように答えてください。",
    ),
}


# Each language's rewriting of a first-person fact about the person, None where it stops.
ABOUT: dict[str, Callable[[str, str], str | None]] = {
    "en": third_person.about,
    "de": third_person_de.about,
    "fr": third_person_fr.about,
    "es": third_person_es.about,
    "it": third_person_it.about,
    "ru": third_person_ru.about,
    "ja": third_person_ja.about,
}


def about(fact: str, name: str, message_language: str) -> str | None:
    """``fact`` in the third person about ``name``, or None where no language's rules apply
    (it is not in the first person, or not simply)."""
    # A short fact's few common words may fit two languages: the first whose rules apply.
    # One with none ("Tengo dos gatos") is likeliest in the language the person writes in.
    for language in likely_languages(fact) or [message_language]:
        if rewritten := ABOUT[language](fact, name):
            return rewritten
    return None


def fact_line(fact: str, name: str, labels: Labels, message_language: str) -> str:
    rewritten = about(fact, name, message_language)
    return "- " + (rewritten or labels.said.format(name=name, fact=fact))


def answer_line(name: str, message: str) -> list[str]:
    """Which language to answer in and how to address the person, in that language, where
    the message's words tell its language: small models otherwise answer a German or
    Japanese question in English, and in the person's voice ("I play the cello")."""
    languages = likely_languages(message)
    if len(languages) != 1:
        return []
    return [LABELS[languages[0]].answer.format(name=name)]


def fact_block(name: str, facts: Sequence[str], message: str) -> list[str]:
    """The block's lines, labelled in the language of ``message``."""
    language = guess_language(message)
    labels = LABELS.get(language, LABELS["en"])
    if not facts:
        return [labels.nothing.format(name=name)]
    return [
        labels.heading.format(name=name),
        *(fact_line(f, name, labels, language) for f in facts),
    ]
