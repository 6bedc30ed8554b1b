"""The turn window moves in steps: its first turn stays until the turns since then no longer
fit, then it starts again with the newest half."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core.turn_window import TurnWindows
from memory.records import ConversationTurn, Role


def turns(first: int, last: int) -> list[ConversationTurn]:
    return [
        ConversationTurn(i, "console:dm", "console:a", Role.USER, f"t{i}", datetime.now(UTC), None)
        for i in range(first, last + 1)
    ]


def test_the_window_keeps_its_start_then_jumps_to_the_newest_half() -> None:
    windows = TurnWindows()
    starts = []
    for newest in range(1, 31):
        recent = turns(max(1, newest - 11), newest)  # the newest 12, as the store reads them
        shown = windows.window("dm", recent, 12)
        assert shown == recent[len(recent) - len(shown) :]
        assert 6 <= len(shown) <= 12 or newest < 6
        starts.append(shown[0].id)
    # The start moved only when the turns since it no longer fit: every six turns.
    assert sorted(set(starts)) == [1, 8, 15, 22]
    assert starts[12] == 8 and starts[11] == 1


def test_conversations_have_their_own_windows_and_a_bound() -> None:
    windows = TurnWindows(capacity=2)
    windows.window("a", turns(1, 12), 12)
    windows.window("b", turns(100, 111), 12)
    # A conversation first seen with a full window starts with its newest half.
    assert windows.window("c", turns(200, 211), 12)[0].id == 206
    # "a" was forgotten: its next window starts anew.
    assert windows.window("a", turns(3, 14), 12)[0].id == 9
    assert windows.window("c", turns(201, 212), 12)[0].id == 206


def test_a_start_that_was_erased_starts_a_new_window() -> None:
    windows = TurnWindows()
    windows.window("dm", turns(1, 5), 12)
    assert windows.window("dm", turns(2, 7), 12)[0].id == 2
