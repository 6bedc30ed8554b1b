"""Command routing, usage help for wrong arguments, paging, help, and forced web search."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import URL

from bot.commands import CommandError, CommandRegistry, CommandReply, CommandSpec, Invocation
from bot.messages import IncomingMessage
from bot.websearch import FixedWebSearchAdvisor, WebContext
from memory.embedding import Embedder
from memory.records import NewFact
from memory.scope import Scope
from memory.store import StoreTransaction
from tests.bot.core.harness import START, Harness, make_config, open_harness, reply_calls


@pytest.fixture
async def bot(
    tmp_path: Path, embedder: Embedder, database_location: Path | URL
) -> AsyncIterator[Harness]:
    config = make_config(tmp_path / "data", database=database_location)
    harness = await open_harness(tmp_path, embedder, config=config)
    yield harness
    await harness.app.aclose()


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("!memory forget", "Which fact? Give its number from the list. Usage: !memory forget <n>"),
        (
            "!memory forget three",
            "Which fact? Give its number from the list. Usage: !memory forget",
        ),
        (
            "/memory history x",
            "Which fact? Give its number from the list. Usage: /memory history <n>",
        ),
        ("!memory list 0", "The page must be a number from 1. Usage: !memory list [page]"),
        ("!memory search", "What should I look for? Usage: !memory search <words>"),
        ("!memory forget all now", "Usage: !memory forget <n> | !memory forget all"),
        (
            "!memory frobnicate",
            "I don't know the command !memory frobnicate. Commands: !memory list, !memory search",
        ),
        ("!remember", "What should I remember? Usage: !remember <fact>"),
        ("!search", "What should I search for? Usage: !search <question>"),
        ("!nonsense", "I don't know the command !nonsense. Commands: !memory, !search, !remember"),
    ],
)
async def test_wrong_arguments_give_usage_help(bot: Harness, command: str, expected: str) -> None:
    replies = await bot.send("alice", command)
    assert len(replies) == 1 and replies[0].private
    assert replies[0].text.startswith(expected)
    assert bot.llm.calls == []


async def test_help_and_aliases(bot: Harness) -> None:
    help_text = await bot.say("alice", "!memory")
    assert "I only use it in the room you told me" in help_text
    assert help_text == await bot.say("alice", "!memory help")
    assert "/memory list [page]" in await bot.say("alice", "/memory help")
    for usage in ("!memory list [page]", "!memory forget <n>", "!memory export", "!memory pause"):
        assert usage in help_text
    assert "!memory history <n>" in help_text and "!memory undo" in help_text
    top = await bot.say("alice", "/help")
    assert "/memory <list|search|forget" in top and "/search <question>" in top
    assert await bot.say("alice", "!mem ls") == await bot.say("alice", "!memory list")


async def test_list_is_paged(bot: Harness) -> None:
    scope = Scope("matrix:alice", "matrix:dm")

    def add_facts(tx: StoreTransaction) -> None:
        for number in range(1, 13):
            tx.facts.add(scope, NewFact(f"fact number {number}"))

    await bot.app.store.write(add_facts)
    first = await bot.say("alice", "!memory list")
    assert "(12 facts, page 1 of 2)" in first
    assert "#10 fact number 10" in first and "#11" not in first
    assert first.endswith("Next page: !memory list 2")
    second = await bot.say("alice", "!memory list 2")
    assert "#11 fact number 11" in second and "#12 fact number 12" in second
    assert "Next page" not in second
    assert await bot.say("alice", "!memory list 3") == "There are only 2 page(s) of facts."


async def test_search_without_web_search_says_how_to_enable_it(bot: Harness) -> None:
    reply = await bot.say("alice", "/search weather in Paris")
    assert reply == (
        "Web search is not set up on this bot (the operator can set search.searxng_url)."
    )


async def test_forced_search_puts_results_in_the_prompt(tmp_path: Path, embedder: Embedder) -> None:
    advisor = FixedWebSearchAdvisor(
        WebContext(
            queries=("weather Paris",),
            prompt_section="[1] Paris forecast - https://meteo.example/paris - 14 degrees",
            notice="(searched the web for: weather Paris)",
        )
    )
    # A model without tools: every ordinary message asks the advisor for web context.
    bot = await open_harness(tmp_path, embedder, web_search=advisor, supports_tools=False)
    bot.mind.replies.append("It will be 14 degrees [1].")
    try:
        replies = await bot.send("alice", "!search weather in Paris", room="!r:x", mention=False)
        assert len(replies) == 1 and not replies[0].private
        assert (
            replies[0].text == "It will be 14 degrees [1].\n\n(searched the web for: weather Paris)"
        )
        assert advisor.calls[0].forced_query == "weather in Paris"
        system = reply_calls(bot.llm)[0].system_text
        assert "https://meteo.example/paris" in system
        # A search is conversation, but web results and commands are never learned from.
        assert [c for c in bot.llm.calls if c.json_schema is not None] == []
        # An ordinary message asks the advisor too, unforced.
        await bot.say("alice", "thanks!", room="!r:x")
        assert advisor.calls[-1].forced_query is None
        assert [t.text for t in advisor.calls[-1].turns][-2:] == [
            "weather in Paris",
            "It will be 14 degrees [1].",
        ]
    finally:
        await bot.app.aclose()


class Exploding:
    spec = CommandSpec("boom", "boom", "raises")

    async def run(self, invocation: Invocation) -> CommandReply:
        raise CommandError("deep inside: nope")


async def test_command_error_from_anywhere_becomes_the_reply() -> None:
    registry = CommandRegistry((Exploding(),))
    message = IncomingMessage("console", "console:a", "A", "console:dm", "!boom", START, True)
    invocation = Invocation(message, message.scope(), "!", "")
    assert await registry.dispatch("boom", invocation) == CommandReply("deep inside: nope")
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(Exploding())
