# ruff: noqa: RUF001  (answers in Cyrillic letters)
"""An answer that opens with the person's own words as its own is asked for once more, and
streamed, its opening is never shown. The echoes are what the real 1.5B and 0.5B models
answered (docs/benchmarks.md, "Replies in the person's voice"); the scripted model in the
core's tests stands for their judgement."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from bot.core.echo import EchoCheck, Verdict
from bot.core.reply_prompt import ReplyContext
from bot.core.replying import Replier
from bot.messages import IncomingMessage
from bot.websearch.base import WebContext
from bot.websearch.fixed import FixedWebSearchAdvisor
from memory.embedding import Embedder
from memory.llm import ScriptedLanguageModel
from memory.records import ConversationTurn, Role
from tests.bot.core.harness import Harness, open_harness, reply_calls

SAM = "hi! I'm Sam, I just moved to Porto with my partner Jo."
SAM_ECHO = "Hello! I'm Sam, and I just moved to Porto with my partner Jo. How can I help?"
WELCOME = "Welcome to Porto, Sam! How are you and Jo settling in?"


@pytest.mark.parametrize(
    ("name", "message", "facts", "answer"),
    [
        ("sam", SAM, [], SAM_ECHO),
        ("Sam Jones", SAM, [], "Hi! I just moved to Porto with my partner Jo."),
        ("Jonas", "Hallo! Ich bin Jonas und wohne in Freiburg.", [], "Hallo! Ich bin auch Jonas."),
        ("Jonas", "Hallo! Ich bin Jonas.", [], "Hallo Jonas! Ich bin auch Jonas und wohne hier."),
        (
            "Олег",
            "Меня зовут Олег, я живу в Самаре.",
            [],
            "Привет! Как дела? Я Олег, живу в Самаре.",
        ),
        ("Olga", "Привет! Меня зовут Ольга.", [], "Привет! Меня зовут Ольга, я живу в Самаре."),
        ("ゆき", "こんにちは、ゆきです。", [], "こんにちは、ゆきです。大阪に住んでいます。"),
        ("Alice", "What instrument do I play?", ["I play the cello"], "I play the cello."),
        ("Alice", "Wo wohne ich?", ["Ich wohne in Leipzig"], "Ja, ich wohne in Leipzig."),
        # Spanish drops the pronoun: the verb alone says who speaks.
        ("Lucía", "¡Hola! Toco el violonchelo.", [], "¡Hola! Toco el violonchelo en una orquesta."),
        ("Lucía", "¿Dónde vivo?", ["Vivo en Valencia"], "Vivo en Valencia, con tu gato."),
        # A fact in the person's voice, in other words than theirs (the real 1.5B model).
        ("Alice", "Was ist mein Beruf?", ["Ich arbeite als Bäcker"], "Ich bin ein Bäcker."),
        ("Alice", "Где я учусь?", ["Я учусь в МГУ"], "Я участвую в МГУ."),
        ("Alice", "Comment s'appelle ma sœur ?", ["Ma sœur s'appelle Léa"], "Ma sœur est Léa."),
        (
            "Alice",
            "Wie heißt meine Tochter?",
            ["Meine Tochter heißt Mia"],
            "Ja, Mia ist meine Tochter.",
        ),
    ],
)
def test_an_answer_that_opens_with_the_persons_words_echoes(
    name: str, message: str, facts: list[str], answer: str
) -> None:
    assert EchoCheck(name, message, facts).verdict(answer, complete=True) is Verdict.ECHO


@pytest.mark.parametrize(
    ("name", "message", "facts", "answer"),
    [
        ("sam", SAM, [], WELCOME),
        ("sam", SAM, [], "Hi Sam! I'm Mnemo. How can I help?"),
        ("sam", "I think it might rain today.", [], "I think so too: take an umbrella."),
        ("Alice", "What instrument do I play?", ["I play the cello"], "You play the cello."),
        ("Alice", "What do I play?", ["I play the cello"], "I remember you play the cello."),
        ("Lucía", "¿Dónde vivo?", ["Vivo en Valencia"], "Vives en Valencia, con tu gato."),
        (
            "Alice",
            "What do I play?",
            ["I play the cello"],
            "Yes, I remember Alice plays the cello.",
        ),
        ("Alice", "Was ist mein Beruf?", ["Ich arbeite als Bäcker"], "Ich weiß: du bist Bäcker."),
        ("Alice", "Was ist mein Beruf?", ["Ich arbeite als Bäcker"], "Ich bin Mnemo."),
        ("Alice", "Wie heißt meine Tochter?", ["Meine Tochter heißt Mia"], "Mia ist ihr Name."),
        ("Lucía", "Creo que va a llover hoy.", [], "Creo que sí: lleva un paraguas."),
        ("ゆき", "こんにちは、ゆきです。", [], "こんにちは、ゆきさん！"),
        ("sam", "", [], ""),
    ],
)
def test_an_answer_in_its_own_voice_is_clear(
    name: str, message: str, facts: list[str], answer: str
) -> None:
    assert EchoCheck(name, message, facts).verdict(answer, complete=True) is Verdict.CLEAR


def test_while_it_streams_an_echo_is_held_until_it_is_one() -> None:
    check = EchoCheck("sam", SAM, [])
    verdicts = [check.verdict(SAM_ECHO[:end]) for end in range(1, len(SAM_ECHO) + 1)]
    assert Verdict.CLEAR not in verdicts
    assert check.verdict("Hello! I'm Sa") is Verdict.HOLD
    assert check.verdict("Hello! I'm Sam,") is Verdict.ECHO


def test_while_it_streams_a_first_person_sentence_is_held_until_its_end() -> None:
    check = EchoCheck("Alice", "Was ist mein Beruf?", ["Ich arbeite als Bäcker"])
    assert check.verdict("Ich bin ein") is Verdict.HOLD
    assert check.verdict("Ich bin ein Bäcker") is Verdict.ECHO
    assert check.verdict("Ich bin Mnemo.") is Verdict.CLEAR
    assert check.verdict("Du bist") is Verdict.CLEAR


def test_while_it_streams_a_good_answer_is_clear_after_its_first_words() -> None:
    check = EchoCheck("sam", SAM, [])
    assert check.verdict("Hel") is Verdict.HOLD  # may still be "Hello", an opener
    assert check.verdict("Welcome to") is Verdict.CLEAR
    assert check.verdict("I") is Verdict.HOLD
    assert check.verdict("I'm Mnemo") is Verdict.CLEAR


class RecordingStream:
    """Test double for an adapter's answer stream: records every text it was given."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def grow(self, text: str) -> None:
        self.texts.append(text)


@pytest.fixture
async def harness(tmp_path: Path, embedder: Embedder) -> AsyncIterator[Harness]:
    opened = await open_harness(tmp_path, embedder)
    yield opened
    await opened.app.aclose()


async def say_as_sam(harness: Harness, stream: RecordingStream | None) -> str:
    message = IncomingMessage(
        platform="matrix",
        user_key="matrix:sam",
        display_name="Sam",
        room_key="matrix:dm",
        text=SAM,
        time=harness.clock.tick(),
        is_direct=True,
        mentions_bot=False,
        stream=stream,
    )
    [reply] = await harness.app.core.handle(message)
    await harness.app.writer.drain()
    return reply.text


@pytest.mark.parametrize("streamed", [False, True])
async def test_the_echo_is_asked_for_again_with_a_note_and_never_shown(
    harness: Harness, streamed: bool
) -> None:
    harness.mind.replies += [SAM_ECHO, WELCOME]
    stream = RecordingStream() if streamed else None
    assert await say_as_sam(harness, stream) == WELCOME
    first, second = reply_calls(harness.llm)
    assert second.messages[:-1] == first.messages
    assert second.messages[-1].role == "system"
    assert "not Sam" in second.messages[-1].content
    if stream is not None:
        assert stream.texts and all(WELCOME.startswith(text) for text in stream.texts)
    turns = await harness.app.store.read(lambda tx: tx.turns.recent("matrix:dm", limit=10))
    assert [turn.text for turn in turns if turn.role is Role.ASSISTANT] == [WELCOME]


@pytest.mark.parametrize("streamed", [False, True])
async def test_an_answer_that_echoes_twice_loses_its_echo(harness: Harness, streamed: bool) -> None:
    again = "Hi! I'm Sam, and I moved to Porto. How can I help you today?"
    harness.mind.replies += [SAM_ECHO, again]
    stream = RecordingStream() if streamed else None
    assert await say_as_sam(harness, stream) == "Hi! How can I help you today?"
    assert len(reply_calls(harness.llm)) == 2
    if stream is not None:
        assert not any("Sam" in text for text in stream.texts)


@pytest.mark.parametrize(
    ("answer", "left"),
    [
        (
            "Hallo! Ich bin Jonas und wohne in Freiburg. Wie kann ich Ihnen helfen?",
            "Hallo! Wie kann ich Ihnen helfen?",
        ),
        ("Hallo! Ich bin Jonas und wohne in Freiburg.", "Hallo!"),
        ("Hallo Jonas! Wie geht's? Ich bin Jonas.", "Hallo Jonas! Wie geht's? Ich bin Jonas."),
    ],
)
def test_without_echo_leaves_out_the_echoing_sentences_at_the_start(answer: str, left: str) -> None:
    check = EchoCheck("Jonas", "Hallo! Ich bin Jonas und wohne in Freiburg.", [])
    assert check.without_echo(answer) == left


@pytest.mark.parametrize(
    ("message", "fact", "answer", "told"),
    [
        (
            "私は何の楽器を弾きますか？",
            "私はチェロを弾きます",
            "はい！私はチェロを弾きます。",
            "はい！Aliceさんはチェロを弾きます。",
        ),
        (
            "Welches Instrument spiele ich?",
            "Ich spiele Cello",
            "Ich spiele Cello.",
            "Alice spielt Cello.",
        ),
    ],
)
def test_without_echo_tells_an_echoed_fact_about_the_person(
    message: str, fact: str, answer: str, told: str
) -> None:
    # The 1.5B model answered questions about a fact with the fact in the person's words;
    # left out, nothing but an apology for an empty answer was left.
    assert EchoCheck("Alice", message, [fact]).without_echo(answer) == told


def reply_context(message: str, facts: list[str]) -> ReplyContext:
    return ReplyContext(
        bot_name="Mnemo",
        person_name="Alice",
        today=date(2026, 12, 4),
        facts=facts,
        turns=[],
        message=message,
    )


async def test_an_answer_asked_for_again_that_recites_the_note_gives_way_to_the_first() -> None:
    # What the real 0.5B model answered when asked again with the note.
    recited = (
        "You are Mnemo, not Alice: do not repeat Alice's words as your own. Answer Alice, "
        'speaking to them as "you".'
    )
    llm = ScriptedLanguageModel(["Ich spiele Cello.", recited])
    context = reply_context("Welches Instrument spiele ich?", ["Ich spiele Cello"])
    reply = await Replier(llm, None).reply(context, forced_query=None)
    assert reply.text == "Alice spielt Cello."
    assert "not Alice" in llm.calls[1].messages[-1].content


async def test_the_note_ends_with_the_language_to_answer_in() -> None:
    llm = ScriptedLanguageModel(["私はチェロを弾きます。", "チェロです。"])
    context = reply_context("私は何の楽器を弾きますか？", ["私はチェロを弾きます"])
    reply = await Replier(llm, None).reply(context, forced_query=None)
    assert reply.text == "チェロです。"
    note = llm.calls[1].messages[-1].content
    assert note.splitlines()[-1] == "日本語で、Aliceさんに直接話しかけるように答えてください。"


async def test_in_a_dm_an_answer_that_echoes_an_earlier_message_is_asked_for_again() -> None:
    # Tried in the console with the 1.5B model: "Welches Instrument spiele ich?" after
    # "Hallo! Ich spiele Cello in einem Orchester." was answered "Ich spiele Cello."
    said = "Hallo! Ich spiele Cello in einem Orchester."
    when = datetime(2026, 12, 7, tzinfo=UTC)
    earlier = ConversationTurn(1, "console:dm", "console:you", Role.USER, said, when, None)
    llm = ScriptedLanguageModel(["Ich spiele Cello.", "Du spielst Cello."])
    context = replace(reply_context("Welches Instrument spiele ich?", []), turns=[earlier])
    reply = await Replier(llm, None).reply(context, forced_query=None)
    assert reply.text == "Du spielst Cello."


async def test_with_web_search_an_echo_is_asked_for_again_without_tools() -> None:
    context = ReplyContext(
        bot_name="Mnemo",
        person_name="Sam",
        today=date(2026, 12, 4),
        facts=[],
        turns=[],
        message=SAM,
    )
    llm = ScriptedLanguageModel([SAM_ECHO, WELCOME])
    web = FixedWebSearchAdvisor(WebContext(("Porto",), "[1] Porto - https://porto.example"))
    reply = await Replier(llm, web).reply(context, forced_query=None)
    assert reply.text == WELCOME
    assert llm.calls[0].tools and not llm.calls[1].tools
    assert "not Sam" in llm.calls[1].messages[-1].content
    assert web.searches == []
