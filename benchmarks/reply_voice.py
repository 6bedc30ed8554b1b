# ruff: noqa: RUF001  (questions and pronouns in five scripts)
"""Replies that speak to the person, against a REAL model: with a recalled fact in the prompt,
does the answer address the person ("You play the cello") or speak as them ("I play the
cello")?

    MNEMO_DEV_LLM=1.5b ../shared/llm/serve.sh 18436
    .venv/bin/python -m benchmarks.reply_voice --base-url http://127.0.0.1:18436/v1 \
        --model qwen2.5-coder-1.5b-instruct [--held-out | --introductions] [--repeat N]

Everything is real but the write path: each question's fact is stored as the write path
stores it (the person's own words, in their language) in SQLite and LanceDB with
all-MiniLM-L6-v2, then the question goes through the core in a DM, so the answer comes from
the real recall and the real reply prompt. The check is deterministic: an answer speaks in
the person's voice when a sentence names the fact's subject with a first-person pronoun and
no second-person one (:func:`voice`); Spanish also by the verbs of its questions, as it
drops the pronoun. An answer that names the fact without a pronoun counts as neither.
``--introductions``: the person's first message, nothing stored; an answer that repeats the
introduction ("Hello! I'm Sam, and I just moved to Porto") speaks as them.
"""

from __future__ import annotations

import asyncio
import logging
import re
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.real_model import config, server_arguments
from bot.app import Application, build_application
from bot.core.core import EMPTY_ANSWER
from bot.messages import IncomingMessage
from memory.indexing import to_indexed
from memory.language import COMMON_WORDS, WORD, likely_languages
from memory.records import NewFact
from memory.scope import Scope
from memory.store import StoreTransaction
from tests.conftest import real_embedder


@dataclass(frozen=True, slots=True)
class Question:
    language: str
    fact: str  # empty: nothing stored, the question is the person's first message
    question: str
    # Words of the fact an answer about it names (lower case), also in English: small models
    # fall back to it ("I am in Kyoto" to a question in Japanese).
    subject: tuple[str, ...]
    name: str = "Alice"


QUESTIONS = (
    Question("en", "I play the cello", "What instrument do I play?", ("cello",)),
    Question("en", "I live in Lyon", "Where do I live?", ("lyon",)),
    Question("en", "My dog is called Pepper", "What is my dog's name?", ("pepper",)),
    Question("en", "I work as a nurse", "What do I do for a living?", ("nurse",)),
    Question("de", "Ich spiele Cello", "Welches Instrument spiele ich?", ("cello",)),
    Question("de", "Ich wohne in Leipzig", "Wo wohne ich?", ("leipzig",)),
    Question("de", "Mein Hund heißt Bello", "Wie heißt mein Hund?", ("bello",)),
    Question("de", "Ich arbeite als Bäcker", "Was ist mein Beruf?", ("bäcker", "baker")),
    Question(
        "fr",
        "Je joue du violoncelle",
        "De quel instrument est-ce que je joue ?",
        ("violoncelle", "cello"),
    ),
    Question("fr", "J'habite à Nantes", "Où est-ce que j'habite ?", ("nantes",)),
    Question("fr", "Mon chat s'appelle Minou", "Comment s'appelle mon chat ?", ("minou",)),
    Question("fr", "Je suis infirmière", "Quel est mon métier ?", ("infirmi", "nurse")),
    Question("es", "Toco el violonchelo", "¿Qué instrumento toco?", ("violonchelo", "cello")),
    Question("es", "Vivo en Sevilla", "¿Dónde vivo?", ("sevilla", "seville")),
    Question("es", "Mi perro se llama Toby", "¿Cómo se llama mi perro?", ("toby",)),
    Question("es", "Trabajo de enfermera", "¿En qué trabajo?", ("enfermer", "nurse")),
    Question(
        "ru", "Я играю на виолончели", "На каком инструменте я играю?", ("виолончел", "cello")
    ),
    Question("ru", "Я живу в Казани", "Где я живу?", ("казан", "kazan")),
    Question("ru", "Мою собаку зовут Шарик", "Как зовут мою собаку?", ("шарик", "sharik")),
    Question("ru", "Я работаю врачом", "Кем я работаю?", ("врач", "doctor")),
    Question("ja", "私はチェロを弾きます", "私は何の楽器を弾きますか？", ("チェロ", "cello")),
    Question("ja", "私は京都に住んでいます", "私はどこに住んでいますか？", ("京都", "kyoto")),
    Question("ja", "私の犬の名前はポチです", "私の犬の名前は何ですか？", ("ポチ", "pochi")),
    Question("ja", "私は看護師として働いています", "私の仕事は何ですか？", ("看護師", "nurse")),
)
# Facts and questions worded as people write them, not tuned against: `--held-out`.
HELD_OUT = (
    Question("en", "I'm allergic to peanuts", "Do you remember what I'm allergic to?", ("peanut",)),
    Question("en", "My sister lives in Boston", "where does my sister live again?", ("boston",)),
    Question("de", "Ich fahre einen roten Golf", "Was für ein Auto fahre ich?", ("golf",)),
    Question("de", "Meine Tochter heißt Mia", "Weißt du noch, wie meine Tochter heißt?", ("mia",)),
    Question("fr", "Je travaille chez Airbus", "Tu te souviens où je travaille ?", ("airbus",)),
    Question("fr", "Ma sœur s'appelle Léa", "Comment s'appelle ma sœur déjà ?", ("léa",)),
    Question("es", "Mi hija se llama Lucía", "¿Te acuerdas de cómo se llama mi hija?", ("lucía",)),
    Question("es", "Tengo dos gatos", "¿Cuántos gatos tengo?", ("gato", "cat")),
    Question("ru", "Я учусь в МГУ", "Где я учусь?", ("мгу", "msu", "moscow state")),
    Question("ru", "Я люблю джаз", "Какую музыку я люблю?", ("джаз", "jazz")),
    Question(
        "ja", "私は毎朝コーヒーを飲みます", "私は毎朝何を飲みますか？", ("コーヒー", "coffee")
    ),
    Question("ja", "私の趣味は釣りです", "私の趣味を覚えていますか？", ("釣り", "fishing")),
)

# First messages that introduce the person (nothing stored yet): `--introductions`. An
# answer that repeats the introduction ("Hello! I'm Sam, and I just moved to Porto")
# speaks as them.
INTRODUCTIONS = (
    Question("en", "", "hi! I'm Sam, I just moved to Porto with my partner Jo.", ("porto",), "Sam"),
    Question(
        "en", "", "Hello, I'm Priya. I teach maths at a school in Leeds.", ("leeds",), "Priya"
    ),
    Question("de", "", "Hallo! Ich bin Jonas und wohne in Freiburg.", ("freiburg",), "Jonas"),
    Question(
        "de", "", "Hi, ich heiße Lena und arbeite als Tischlerin in Kassel.", ("kassel",), "Lena"
    ),
    Question(
        "fr", "", "Bonjour ! Je m'appelle Camille, j'habite à Rennes.", ("rennes",), "Camille"
    ),
    Question(
        "fr", "", "Salut, moi c'est Hugo, je suis étudiant en médecine à Lille.", ("lille",), "Hugo"
    ),
    Question(
        "es", "", "¡Hola! Soy Lucía y vivo en Granada con mis dos gatos.", ("granada",), "Lucía"
    ),
    Question(
        "es", "", "Hola, me llamo Mateo, trabajo como cocinero en Bilbao.", ("bilbao",), "Mateo"
    ),
    Question("ru", "", "Привет! Меня зовут Олег, я живу в Самаре.", ("самар",), "Олег"),
    Question("ru", "", "Здравствуйте, я Анна, работаю учительницей в Твери.", ("твер",), "Анна"),
    Question("ja", "", "こんにちは、ゆきです。大阪に住んでいます。", ("大阪", "ゆきです"), "ゆき"),
    Question(
        "ja",
        "",
        "はじめまして、ケンです。東京でエンジニアをしています。",
        ("東京", "ケンです"),
        "ケン",
    ),
)

# First and second person singular (and the polite second person) of each language.
FIRST = {
    "en": r"\bI\b|\bI'm\b|\b(?i:my|me|mine)\b",
    "de": r"(?i)\b(ich|mein|meine|meinen|meinem|meiner|mir|mich)\b",
    "fr": r"(?i)\b(je|mon|ma|mes|moi)\b|(?i:\bj['’])",
    "es": r"(?i)\b(yo|mi|mis|me|soy|toco|vivo|trabajo|tengo)\b",
    "ru": r"(?i)\b(я|мой|моя|моё|мою|мои|мне|меня|мной)\b",
    "ja": r"私|僕|俺|ゆきです|ケンです",
}
SECOND = {
    "en": r"(?i)\b(you|your|yours|you're)\b",
    "de": r"(?i)\b(du|dein|deine|deinen|deinem|deiner|dir|dich)\b",
    "fr": r"(?i)\b(tu|ton|ta|tes|toi|vous|votre|vos)\b|(?i:\bt['’])",
    "es": r"(?i)\b(tú|tu|tus|te|ti|usted|vos|eres|tocas|vives|trabajas|tienes)\b",
    "ru": r"(?i)\b(ты|твой|твоя|твоё|твою|твои|тебе|тебя|вы|ваш|ваша|вашу|ваши|вам|вас)\b",
    "ja": r"あなた|君|さん",
}
SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*|\n+")
# The assistant speaking of itself ("Yes, I remember that ..."), not as the person.
ASSISTANT_SAYS = re.compile(
    r"(?i)\bI (?:remember|recall|know|believe|think|see|can tell you)\b(?: that)?"
)


def voice(answer: str, question: Question) -> str:
    """``"person"`` when a sentence about the fact speaks as the person, ``"addressed"`` when
    one speaks to them, else ``"neither"`` (the answer does not name the fact). Pronouns of
    the question's language count, and those of the answer's when the model answered in
    another language ("I play the cello" to "Welches Instrument spiele ich?")."""
    languages = {question.language, *likely_languages(answer)[:1]}
    about = [
        ASSISTANT_SAYS.sub("", sentence)
        for sentence in SENTENCE_END.split(answer)
        if any(word in sentence.lower() for word in question.subject)
    ]
    for heard, pronouns in (("addressed", SECOND), ("person", FIRST)):
        patterns = [pronouns[language] for language in languages if language in pronouns]
        if any(re.search(pattern, sentence) for pattern in patterns for sentence in about):
            return heard
    return "neither"


def other_language(answer: str, question: Question) -> bool:
    """Whether the answer is plainly in another language than the question: Latin letters
    for Russian or Japanese, or two common words of another language and none of its own."""
    guessed = likely_languages(answer)
    if not guessed or question.language in guessed:
        return False
    if question.language in ("ru", "ja"):
        return True
    words = [word.casefold() for word in WORD.findall(answer)]
    return sum(word in COMMON_WORDS[guessed[0]] for word in words) >= 2


async def store_fact(app: Application, scope: Scope, text: str) -> None:
    """``text`` as a fact of ``scope``, indexed with it (embedded first: a job awaits nothing)."""
    vectors = await app.embedder.embed([text], "document")
    model = app.embedder.model_name

    def add(transaction: StoreTransaction) -> None:
        fact = transaction.facts.add(scope, NewFact(text))
        transaction.index.upsert(to_indexed([fact], vectors, model))

    await app.store.write(add, index=app.index)


async def ask(app: Application, number: int, question: Question) -> str:
    """Store the fact as the person's (a person of their own per question), then ask."""
    user = f"matrix:person{number}"
    if question.fact:
        await store_fact(app, Scope(user, "matrix:dm"), question.fact)
    asked = IncomingMessage(
        platform="matrix",
        user_key=user,
        display_name=question.name,
        room_key="matrix:dm",
        text=question.question,
        time=datetime.now(UTC),
        is_direct=True,
        mentions_bot=True,
        message_id=f"$voice{number}",
    )
    [answer] = await app.core.handle(asked)
    return answer.text


async def run(base_url: str, model: str, questions: tuple[Question, ...], repeat: int) -> None:
    counts: dict[str, Counter[str]] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as directory:
        app = await build_application(
            config(Path(directory), base_url, model), embedder=real_embedder()
        )
        try:
            for number, question in enumerate(questions * repeat):
                answer = await ask(app, number, question)
                heard = "empty" if answer == EMPTY_ANSWER else voice(answer, question)
                tally = counts.setdefault(question.language, Counter())
                tally[heard] += 1
                tally["other language"] += heard != "empty" and other_language(answer, question)
                print(f"  {question.language} {heard:9} {question.question!r} -> {answer!r}")
        finally:
            await app.aclose()
    total = sum(counts.values(), Counter())
    seconds = time.perf_counter() - started
    asked = len(questions) * repeat
    print(f"model {model} at {base_url}, {asked} questions, {seconds:.0f} s")
    heads = ["in the person's voice", "addressed to them", "neither", "other language", "empty"]
    print("| language | " + " | ".join(heads) + " |")
    print("|---" * (len(heads) + 1) + "|")
    for language, tally in [*counts.items(), ("all", total)]:
        row = [tally[key] for key in ("person", "addressed", "neither", "other language", "empty")]
        print(f"| {language} | " + " | ".join(str(n) for n in row) + " |")


def main() -> None:
    parser = server_arguments(__doc__ or "")
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--held-out", action="store_true", help="the held-out questions instead")
    chosen.add_argument("--introductions", action="store_true", help="first messages instead")
    parser.add_argument("--repeat", type=int, default=1, help="ask each this many times")
    arguments = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    questions: tuple[Question, ...] = QUESTIONS
    if arguments.held_out or arguments.introductions:
        questions = HELD_OUT if arguments.held_out else INTRODUCTIONS
    asyncio.run(run(arguments.base_url, arguments.model, questions, arguments.repeat))


if __name__ == "__main__":
    main()
