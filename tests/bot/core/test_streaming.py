"""Streamed replies through the real core (SQLite, LanceDB, the real embedder, the writer):
the answer grows on the stream, is stored once and whole, a tool call written as text never
reaches the stream, and a stream that breaks midway keeps what was shown, with a note."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from bot.core.replying import BROKEN_NOTE
from bot.messages import IncomingMessage, OutgoingMessage
from memory.embedding import Embedder
from memory.llm import ChatMessage, LanguageModelUnavailable
from memory.llm.scripted import BrokenStream
from memory.records import Role
from tests.bot.core.harness import START, Harness, ScriptedMind, open_harness

LONG_ANSWER = (
    "Tea it is, then. A green tea such as sencha wants water at about 70 to 80 degrees and "
    "a short steep of one or two minutes; a black tea wants boiling water and four minutes."
)


class RecordingStream:
    """Test double for an adapter's answer stream: records every text it was given."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def grow(self, text: str) -> None:
        self.texts.append(text)


class BreakingMind(ScriptedMind):
    """Breaks the next reply's stream after ``broken_after``."""

    broken_after: str | None = None

    def answer(self, messages: Sequence[ChatMessage]) -> str | BrokenStream:  # type: ignore[override]
        if (
            self.broken_after is not None
            and messages[0].role == "system"
            and "notes" in str(messages[0].content)
        ):
            text, self.broken_after = self.broken_after, None
            return BrokenStream(text, LanguageModelUnavailable("the server went away"))
        return super().answer(messages)  # type: ignore[return-value]


@pytest.fixture
async def harness(tmp_path: Path, embedder: Embedder) -> AsyncIterator[Harness]:
    opened = await open_harness(tmp_path, embedder, mind=BreakingMind())
    yield opened
    await opened.app.aclose()


async def streamed(
    harness: Harness, text: str, *, room: str | None = None
) -> tuple[list[OutgoingMessage], RecordingStream]:
    stream = RecordingStream()
    message = IncomingMessage(
        platform="matrix",
        user_key="matrix:alice",
        display_name="Alice",
        room_key="matrix:dm" if room is None else f"matrix:{room}",
        text=text,
        time=harness.clock.tick(),
        is_direct=room is None,
        mentions_bot=room is not None,
        stream=stream,
    )
    replies = await harness.app.core.handle(message)
    await harness.app.writer.drain()
    return replies, stream


async def bot_turns(harness: Harness, room: str = "matrix:dm") -> list[str]:
    turns = await harness.app.store.read(lambda tx: tx.turns.recent(room, limit=50))
    return [turn.text for turn in turns if turn.role is Role.ASSISTANT]


@pytest.mark.parametrize("room", [None, "kitchen"])
async def test_the_answer_grows_on_the_stream_and_is_stored_once_whole(
    harness: Harness, room: str | None
) -> None:
    harness.mind.replies.append(LONG_ANSWER)
    replies, stream = await streamed(harness, "Should I have tea or coffee?", room=room)
    assert [reply.text for reply in replies] == [LONG_ANSWER]
    # Word by word: many texts, each a beginning of the answer, growing.
    assert len(stream.texts) > 10
    assert all(LONG_ANSWER.startswith(text) for text in stream.texts)
    assert [len(text) for text in stream.texts] == sorted(len(text) for text in stream.texts)
    assert await bot_turns(harness, "matrix:dm" if room is None else "matrix:kitchen") == [
        LONG_ANSWER
    ]


async def test_without_a_stream_nothing_streams(harness: Harness) -> None:
    harness.mind.replies.append(LONG_ANSWER)
    assert await harness.say("alice", "Tea or coffee?") == LONG_ANSWER
    assert await bot_turns(harness) == [LONG_ANSWER]


async def test_a_stream_broken_midway_keeps_what_was_shown_with_a_note(harness: Harness) -> None:
    mind = harness.mind
    assert isinstance(mind, BreakingMind)
    mind.broken_after = "Green tea wants water at about 70 degrees and a sh"
    replies, stream = await streamed(harness, "How do I make tea?")
    shown = "Green tea wants water at about 70 degrees and a"
    assert stream.texts[-1] == shown
    assert [reply.text for reply in replies] == [f"{shown}\n\n{BROKEN_NOTE}"]
    # What the person saw is the bot's turn, kept once, without the note.
    assert await bot_turns(harness) == [shown]


async def test_a_stream_broken_before_any_text_is_the_apology(harness: Harness) -> None:
    mind = harness.mind
    assert isinstance(mind, BreakingMind)
    mind.broken_after = ""
    replies, stream = await streamed(harness, "How do I make tea?")
    assert stream.texts == []
    assert "language model is not available" in replies[0].text
    assert await bot_turns(harness) == []


def test_a_stream_is_not_part_of_the_message_value() -> None:
    base = IncomingMessage("console", "console:a", "A", "console:dm", "hi", START, True)
    assert dataclasses.replace(base, stream=RecordingStream()) == base
