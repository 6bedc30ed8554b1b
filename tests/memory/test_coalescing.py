"""One run for many callers: each caller gets a run that started after it asked."""

from __future__ import annotations

import asyncio

import pytest

from memory.coalescing import Coalesced


class Gated:
    """An action that waits for the test to let each run end (and records how many began)."""

    def __init__(self) -> None:
        self.started = 0
        self.failures: list[Exception] = []
        self._gates: list[asyncio.Event] = []
        self._gate_added = asyncio.Condition()

    async def __call__(self) -> None:
        self.started += 1
        gate = asyncio.Event()
        async with self._gate_added:
            self._gates.append(gate)
            self._gate_added.notify_all()
        await gate.wait()
        if self.failures:
            raise self.failures.pop(0)

    async def let_run_end(self, number: int) -> None:
        async with asyncio.timeout(5), self._gate_added:
            await self._gate_added.wait_for(lambda: len(self._gates) >= number)
        self._gates[number - 1].set()


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


async def test_callers_during_a_run_share_the_next_one() -> None:
    action = Gated()
    coalesced = Coalesced(action)
    first = asyncio.create_task(coalesced.run())
    await settle()
    # The run under way may have begun before their change: they wait for the next one.
    later = [asyncio.create_task(coalesced.run()) for _ in range(19)]
    await action.let_run_end(1)
    await first
    await settle()
    assert not any(task.done() for task in later)
    assert action.started == 2
    await action.let_run_end(2)
    await asyncio.gather(*later)
    assert action.started == 2


async def test_a_failed_run_covers_nobody() -> None:
    action = Gated()
    coalesced = Coalesced(action)
    first = asyncio.create_task(coalesced.run())
    await settle()
    second, third = (asyncio.create_task(coalesced.run()) for _ in range(2))
    await settle()
    await action.let_run_end(1)
    await first
    action.failures.append(RuntimeError("a reader kept the log"))
    await action.let_run_end(2)
    for caller in (second, third):
        with pytest.raises(RuntimeError, match="a reader kept the log"):
            await caller
    # The next caller gets a run of its own, which may succeed.
    fourth = asyncio.create_task(coalesced.run())
    await action.let_run_end(3)
    await fourth
    assert action.started == 3


async def test_a_cancelled_caller_leaves_the_run_to_the_others() -> None:
    action = Gated()
    coalesced = Coalesced(action)
    first = asyncio.create_task(coalesced.run())
    await settle()
    second, third = (asyncio.create_task(coalesced.run()) for _ in range(2))
    await settle()
    second.cancel()
    await action.let_run_end(1)
    await first
    await action.let_run_end(2)
    await third
    assert second.cancelled()
    assert action.started == 2
