"""The write queue's model calls: few at the server at once, and none while a reply waits."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from memory.llm import CallKind, ChatMessage
from memory.priority import ReplyPriority
from memory.write.background_model import BackgroundModel


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
    model = BackgroundModel(server, ReplyPriority(), max_calls=4)
    tasks = [ask(model) for _ in range(12)]
    await asyncio.sleep(0.05)
    assert server.held == 4
    server.release.set()
    answers = await asyncio.wait_for(asyncio.gather(*tasks), 2)
    assert answers == ['{"facts": []}'] * 12
    assert server.most_held == 4


async def test_a_call_that_waited_for_a_slot_still_gives_way_to_a_reply() -> None:
    """A slot freed while a reply is in progress does not send the next call meanwhile."""
    server = HeldModel()
    priority = ReplyPriority(max_wait_seconds=10)
    model = BackgroundModel(server, priority, max_calls=1)
    first = ask(model)
    await asyncio.sleep(0.02)
    second = ask(model)  # waits for the slot
    await asyncio.sleep(0.02)
    with priority.reply():
        server.release.set()
        await asyncio.wait_for(first, 1)
        await asyncio.sleep(0.05)
        assert server.calls == 1  # the second call waits for the reply, not at the server
    await asyncio.wait_for(second, 1)
    assert server.calls == 2


def test_no_call_slot_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one call"):
        BackgroundModel(HeldModel(), ReplyPriority(), max_calls=0)
