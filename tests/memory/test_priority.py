"""Replies first: the replies in progress (the writer's order: tests/memory/test_index_batch.py)."""

from __future__ import annotations

import asyncio

from memory.priority import Replies


async def test_replies_in_progress_are_counted_and_their_end_is_awaited() -> None:
    replies = Replies()
    assert await replies.quiet(0)
    with replies.reply():
        with replies.reply():
            assert not await replies.quiet(0)
        assert not await replies.quiet(0)  # one is still in progress
        waiting = asyncio.create_task(replies.quiet(5))
        await asyncio.sleep(0.01)
        assert not waiting.done()
    assert await asyncio.wait_for(waiting, 1)
    assert await replies.quiet(0)


async def test_the_next_reply_is_announced_to_those_waiting_for_it() -> None:
    replies = Replies()
    announced = asyncio.create_task(replies.next_reply())
    await asyncio.sleep(0.01)
    assert not announced.done()
    with replies.reply():
        await asyncio.wait_for(announced, 1)
        later = asyncio.create_task(replies.next_reply())
        await asyncio.sleep(0.01)
        assert not later.done()  # only a reply that starts after the call counts
    later.cancel()
