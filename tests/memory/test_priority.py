"""Replies first: the writer's turns in priority order, and the replies in progress."""

from __future__ import annotations

import asyncio

from memory.priority import Priority, Replies, Turns


async def take(turns: Turns, priority: Priority, order: list[str], name: str) -> None:
    async with turns.hold(priority):
        order.append(name)
        await asyncio.sleep(0)


async def test_waiting_replies_go_before_waiting_background_work_each_in_arrival_order() -> None:
    turns = Turns()
    order: list[str] = []
    async with turns.hold(Priority.BACKGROUND):
        tasks = [
            asyncio.create_task(take(turns, Priority.BACKGROUND, order, "background 1")),
            asyncio.create_task(take(turns, Priority.REPLY, order, "reply 1")),
            asyncio.create_task(take(turns, Priority.BACKGROUND, order, "background 2")),
            asyncio.create_task(take(turns, Priority.REPLY, order, "reply 2")),
        ]
        await asyncio.sleep(0.01)
        assert order == []  # all wait for the holder
    await asyncio.gather(*tasks)
    assert order == ["reply 1", "reply 2", "background 1", "background 2"]
    assert not turns.held


async def test_a_waiter_cancelled_as_the_turn_reaches_it_passes_it_on() -> None:
    turns = Turns()
    order: list[str] = []
    holder = asyncio.Event()

    async def hold_until_released() -> None:
        async with turns.hold(Priority.REPLY):
            await holder.wait()

    first = asyncio.create_task(hold_until_released())
    await asyncio.sleep(0)
    cancelled = asyncio.create_task(take(turns, Priority.REPLY, order, "cancelled"))
    later = asyncio.create_task(take(turns, Priority.BACKGROUND, order, "later"))
    await asyncio.sleep(0)
    holder.set()
    await asyncio.sleep(0)  # the holder leaves and hands the turn on
    assert first.done() and not cancelled.done()
    cancelled.cancel()  # the turn was handed to it, but it never ran
    await asyncio.wait_for(later, 1)
    assert order == ["later"]
    assert not turns.held


async def test_replies_in_progress_are_counted_and_their_end_is_awaited() -> None:
    replies = Replies()
    await asyncio.wait_for(replies.none_in_progress(), 1)
    with replies.reply():
        with replies.reply():
            assert replies.in_progress == 2
        waiting = asyncio.create_task(replies.none_in_progress())
        await asyncio.sleep(0.01)
        assert not waiting.done()
    await asyncio.wait_for(waiting, 1)
    assert replies.in_progress == 0


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
