"""Addressing, truncation, the rate limit and confirmations: the core's small rules."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.commands.confirmation import Confirmations
from bot.core.addressing import CommandText, is_for_bot, parse_command
from bot.core.rate_limit import RateLimiter
from bot.core.truncation import truncate
from bot.messages import IncomingMessage
from memory.scope import Scope


def group_message(
    text: str, *, is_direct: bool = False, mentions_bot: bool = False, reply_to_bot: bool = False
) -> IncomingMessage:
    return IncomingMessage(
        platform="matrix",
        user_key="matrix:@alice:example.org",
        display_name="Alice",
        room_key="matrix:!room:example.org",
        text=text,
        time=datetime(2026, 11, 29, tzinfo=UTC),
        is_direct=is_direct,
        mentions_bot=mentions_bot,
        reply_to_bot=reply_to_bot,
    )


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_parse_command_accepts_prefix_and_slash() -> None:
    assert parse_command("!memory forget 3", "!") == CommandText("!", "memory", "forget 3")
    assert parse_command("  /Memory list ", "!") == CommandText("/", "memory", "list")
    assert parse_command("hello !memory", "!") is None
    assert parse_command("! memory", "!") is None
    assert parse_command("!", "!") is None


def addressed(message: IncomingMessage) -> bool:
    command = parse_command(message.text, "!")
    return is_for_bot(message, command, lambda name: name == "memory")


def test_group_room_needs_mention_reply_or_known_command() -> None:
    assert not addressed(group_message("nice weather"))
    assert addressed(group_message("nice weather", mentions_bot=True))
    assert addressed(group_message("nice weather", reply_to_bot=True))
    assert addressed(group_message("!memory list"))
    assert not addressed(group_message("!roll d20"))
    assert addressed(group_message("!roll d20", mentions_bot=True))
    assert addressed(group_message("nice weather", is_direct=True))


def test_truncation_cuts_and_says_so() -> None:
    short = truncate("hello", 10)
    assert short.text == "hello" and short.note() is None
    long = truncate("x" * 250, 100)
    assert long.text == "x" * 100
    assert long.note() == "(Your message was 250 characters long; I only read the first 100.)"


def test_rate_limit_per_user_sliding_window() -> None:
    clock = Clock()
    limiter = RateLimiter(2, clock=clock)
    assert limiter.check("alice").allowed
    clock.now += 10
    assert limiter.check("alice").allowed
    refused = limiter.check("alice")
    assert not refused.allowed and refused.notify
    assert refused.retry_after_seconds == 50.0
    # Only the first refusal of a burst is announced.
    assert not limiter.check("alice").notify
    # Bob has his own budget.
    assert limiter.check("bob").allowed
    clock.now += 50
    assert limiter.check("alice").allowed


def test_confirmation_is_once_per_scope_within_window() -> None:
    clock = Clock()
    confirmations = Confirmations(60, clock=clock)
    alice = Scope("matrix:@alice:x", "matrix:!r:x")
    bob = Scope("matrix:@bob:x", "matrix:!r:x")
    confirmations.request("forget all", alice)
    assert not confirmations.confirm("forget all", bob)
    assert confirmations.confirm("forget all", alice)
    assert not confirmations.confirm("forget all", alice)
    confirmations.request("forget all", alice)
    clock.now += 61
    assert not confirmations.confirm("forget all", alice)
