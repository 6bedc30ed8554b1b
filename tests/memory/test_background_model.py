"""The write queue's model calls: one at the server at a time, none while a reply is
prepared, and one already at the server gives way to a reply."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from memory.llm import CallKind, ChatMessage
from memory.priority import BackgroundModel, Replies


class HeldModel:
    """Test double of a model server (its judgement is not the point here): each call is
    held until released, and the most calls held at once are counted."""

    def __init__(self) -> None:
        self.held = 0
        self.most_held = 0
        self.calls = 0
        self.release = asyncio.Event()

    @property
    def model_name(self) -> str:
        return "held"

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        kind: CallKind = CallKind.REPLY,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float | None = None,
    ) -> str:
        self.calls += 1
        self.held += 1
        self.most_held = max(self.most_held, self.held)
        try:
            await self.release.wait()
        finally:
            self.held -= 1
        return '{"facts": []}'

    async def aclose(self) -> None:
        return None


def ask(model: BackgroundModel) -> asyncio.Task[str]:
    messages = [ChatMessage(role="user", content="I moved to Lyon.")]
    return asyncio.create_task(model.complete(messages, kind=CallKind.EXTRACTION))


async def test_at_most_max_calls_background_calls_reach_the_server_at_once() -> None:
    server = HeldModel()
    model = BackgroundModel(server, Replies(), max_calls=4)
    tasks = [ask(model) for _ in range(12)]
    await asyncio.sleep(0.05)
    assert server.held == 4
    server.release.set()
    answers = await asyncio.wait_for(asyncio.gather(*tasks), 2)
    assert answers == ['{"facts": []}'] * 12
    assert server.most_held == 4


async def test_one_call_at_a_time_by_default() -> None:
    server = HeldModel()
    model = BackgroundModel(server, Replies())
    tasks = [ask(model) for _ in range(3)]
    await asyncio.sleep(0.05)
    assert server.held == 1
    server.release.set()
    await asyncio.wait_for(asyncio.gather(*tasks), 2)
    assert server.most_held == 1


async def test_no_call_is_sent_while_a_reply_is_in_progress() -> None:
    server = HeldModel()
    server.release.set()
    replies = Replies()
    model = BackgroundModel(server, replies)
    with replies.reply():
        call = ask(model)
        await asyncio.sleep(0.05)
        assert server.calls == 0
    assert await asyncio.wait_for(call, 1) == '{"facts": []}'
    assert server.calls == 1


async def test_a_call_at_the_server_gives_way_to_a_reply_and_is_sent_again_after_it() -> None:
    server = HeldModel()
    replies = Replies()
    model = BackgroundModel(server, replies)
    call = ask(model)
    await asyncio.sleep(0.02)
    assert server.held == 1
    with replies.reply():
        await asyncio.sleep(0.02)
        assert server.held == 0  # cancelled: the server stops generating
        server.release.set()
        await asyncio.sleep(0.02)
        assert not call.done()  # not sent again while the reply is prepared
    assert await asyncio.wait_for(call, 1) == '{"facts": []}'
    assert server.calls == 2


async def test_after_max_wait_a_call_goes_beside_the_replies_and_is_not_cancelled() -> None:
    server = HeldModel()
    replies = Replies()
    model = BackgroundModel(server, replies, max_wait_seconds=0.05)
    with replies.reply():
        call = ask(model)
        await asyncio.sleep(0.1)
        assert server.held == 1
        with replies.reply():  # another reply starts meanwhile
            await asyncio.sleep(0.02)
            assert server.held == 1  # not cancelled
        server.release.set()
        assert await asyncio.wait_for(call, 1) == '{"facts": []}'
    assert server.calls == 1


def test_no_call_slot_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        BackgroundModel(HeldModel(), Replies(), max_calls=0)
