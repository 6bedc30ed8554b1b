"""Replies first: background steps wait while replies are in progress, and still progress."""

from __future__ import annotations

import asyncio

import pytest

from memory.priority import ReplyPriority


async def test_without_replies_background_steps_run_at_once() -> None:
    priority = ReplyPriority(max_wait_seconds=10)
    entered = 0

    async def step() -> None:
        nonlocal entered
        async with priority.background():
            entered += 1
            await asyncio.sleep(0.01)

    await asyncio.wait_for(asyncio.gather(*(step() for _ in range(5))), 1)
    assert entered == 5
    assert priority.waited_steps == 0


async def test_a_background_step_waits_until_the_replies_are_done() -> None:
    priority = ReplyPriority(max_wait_seconds=10)
    order: list[str] = []

    async def background_step() -> None:
        async with priority.background():
            order.append("background")

    with priority.reply():
        task = asyncio.create_task(background_step())
        await asyncio.sleep(0.05)
        assert order == []
        order.append("reply done")
    await asyncio.wait_for(task, 1)
    assert order == ["reply done", "background"]
    assert priority.waited_steps == 1


async def test_under_endless_replies_one_step_at_a_time_goes_after_the_wait() -> None:
    priority = ReplyPriority(max_wait_seconds=0.05, busy_steps=1)
    inside = 0
    most_inside = 0

    async def background_step() -> None:
        nonlocal inside, most_inside
        async with priority.background():
            inside += 1
            most_inside = max(most_inside, inside)
            await asyncio.sleep(0.03)
            inside -= 1

    with priority.reply():  # replies never stop during this test
        await asyncio.wait_for(asyncio.gather(*(background_step() for _ in range(4))), 2)
    assert most_inside == 1


async def test_a_failing_step_frees_its_slot() -> None:
    priority = ReplyPriority(max_wait_seconds=0.01, busy_steps=1)
    with priority.reply():
        with pytest.raises(RuntimeError):
            async with priority.background():
                raise RuntimeError("the step failed")
        async with asyncio.timeout(1):
            async with priority.background():
                pass


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError):
        ReplyPriority(busy_steps=0)
    with pytest.raises(ValueError):
        ReplyPriority(max_wait_seconds=-1)
