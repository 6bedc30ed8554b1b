"""PacedAnswer: first text at once, then at most one update an interval, latest text only,
one update at a time, the whole answer last."""

from __future__ import annotations

import asyncio
import itertools

from bot.streaming import PacedAnswer


class SlowDisplay:
    """Test double for a platform: each update takes ``seconds``; records (time, text)."""

    def __init__(self, seconds: float = 0.0, fail_on: int | None = None) -> None:
        self.seconds = seconds
        self.fail_on = fail_on
        self.shown: list[tuple[float, str]] = []
        self.running = 0
        self.most_at_once = 0

    async def show(self, text: str) -> None:
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        try:
            if self.fail_on == len(self.shown):
                raise RuntimeError("the platform refused")
            await asyncio.sleep(self.seconds)
            self.shown.append((asyncio.get_running_loop().time(), text))
        finally:
            self.running -= 1


async def test_first_text_at_once_then_paced_and_joined() -> None:
    display = SlowDisplay()
    paced = PacedAnswer(display, 0.2)
    words = [f"word{number}" for number in range(40)]
    for count in range(1, len(words) + 1):
        paced.grow(" ".join(words[:count]))
        await asyncio.sleep(0.02)
    assert await paced.finish("the whole answer")
    times = [at for at, _ in display.shown]
    # The first text is shown before the next one comes, not joined with later ones.
    assert display.shown[0][1] == "word0"
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert min(gaps) >= 0.19
    # 40 texts over 0.8 s, about one update per 0.2 s: the others were joined.
    assert len(display.shown) <= 7
    assert display.shown[-1][1] == "the whole answer"


async def test_a_slow_platform_gets_one_update_at_a_time() -> None:
    display = SlowDisplay(seconds=0.15)
    paced = PacedAnswer(display, 0.01)
    for number in range(30):
        paced.grow(f"text {number}")
        await asyncio.sleep(0.01)
    assert await paced.finish("done")
    assert display.most_at_once == 1
    assert len(display.shown) < 10 and display.shown[-1][1] == "done"


async def test_a_refused_update_stops_the_stream_and_finish_says_so() -> None:
    display = SlowDisplay(fail_on=1)
    paced = PacedAnswer(display, 0.0)
    paced.grow("first")
    await asyncio.sleep(0.01)
    paced.grow("first and second")
    await asyncio.sleep(0.01)
    assert not await paced.finish("first and second and last")
    assert [text for _, text in display.shown] == ["first"]


async def test_nothing_given_is_not_started() -> None:
    paced = PacedAnswer(SlowDisplay(), 1.0)
    assert not paced.started
    paced.grow("x")
    assert paced.started
    await paced.finish("x")
