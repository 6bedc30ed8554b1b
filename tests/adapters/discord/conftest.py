"""Fixtures: a fake Discord on 127.0.0.1 and Mnemo's real discord.py client connected to it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import discord
import pytest
import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route

from adapters.discord.access import AccessPolicy
from adapters.discord.client import MnemoDiscordClient, run_client
from adapters.discord.ports import ConversationCore
from bot.messages import (
    CatchUpBounds,
    IncomingMessage,
    MessageDeletion,
    MessageEdit,
    OutgoingMessage,
)
from tests.adapters.discord import payloads
from tests.adapters.discord.fake_discord import FakeDiscord


def echo(message: IncomingMessage) -> list[OutgoingMessage]:
    """Says back what it got (without the command slash, which usage hints would rewrite)."""
    private = message.text.startswith("/memory")
    text = message.text.removeprefix("/")
    return [OutgoingMessage(f"echo: {text}", message.room_key, private=private)]


@dataclass
class RecordingCore:
    """Test double for the conversation core: records what the adapter hands it.

    ``respond`` decides the replies; ``facts`` maps a user key to that person's numbered
    facts, filtered by user key as the real core filters by scope. Edits count as applied;
    ``direct_users`` are the people it knows DMs with.
    """

    respond: Callable[[IncomingMessage], list[OutgoingMessage]] = echo
    facts: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    handled: list[IncomingMessage] = field(default_factory=list)
    asked_choices: list[tuple[IncomingMessage, str]] = field(default_factory=list)
    edits: list[MessageEdit] = field(default_factory=list)
    deletions: list[MessageDeletion] = field(default_factory=list)
    caught_up: list[IncomingMessage] = field(default_factory=list)
    direct_users: list[str] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def handle(self, message: IncomingMessage) -> list[OutgoingMessage]:
        self.handled.append(message)
        return self.respond(message)

    async def handle_edit(self, edit: MessageEdit) -> bool:
        self.edits.append(edit)
        self.changed.set()
        return True

    async def handle_deletion(self, deletion: MessageDeletion) -> bool:
        self.deletions.append(deletion)
        self.changed.set()
        return True

    async def catch_up(self, message: IncomingMessage) -> bool:
        self.caught_up.append(message)
        self.changed.set()
        return True

    async def known_direct_users(self, platform: str) -> list[str]:
        return [key for key in self.direct_users if key.startswith(f"{platform}:")]

    async def wait_until(self, predicate: Callable[[], bool]) -> None:
        """Until ``predicate`` holds (at most 10 s, then fail)."""
        async with asyncio.timeout(10):
            while not predicate():
                self.changed.clear()
                await self.changed.wait()

    async def fact_choices(self, message: IncomingMessage, typed: str) -> list[tuple[int, str]]:
        self.asked_choices.append((message, typed))
        return [
            (number, text)
            for number, text in self.facts.get(message.user_key, [])
            if typed in str(number) or typed.lower() in text.lower()
        ]


@pytest.fixture
async def fake_discord(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscord]:
    fake = FakeDiscord()
    await fake.start()
    fake.ready_guilds = [payloads.guild()]
    monkeypatch.setattr(Route, "BASE", fake.base_url)
    monkeypatch.setattr(DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(fake.gateway_url))
    yield fake
    await fake.aclose()


@pytest.fixture
def core() -> RecordingCore:
    return RecordingCore()


@pytest.fixture
def policy() -> AccessPolicy:
    return AccessPolicy()


async def connect(client: discord.Client, token: str | None = payloads.TOKEN) -> asyncio.Task[None]:
    task = asyncio.create_task(run_client(client, token))
    ready = asyncio.create_task(client.wait_until_ready())
    done, _ = await asyncio.wait({task, ready}, timeout=15, return_when=asyncio.FIRST_COMPLETED)
    if ready not in done:
        ready.cancel()
        if task in done:
            task.result()  # raises the start-up error
        raise TimeoutError("the client did not become ready against the fake Discord")
    return task


@asynccontextmanager
async def running(
    core: ConversationCore,
    policy: AccessPolicy,
    *,
    autocomplete_budget_seconds: float = 2.5,
    catch_up: CatchUpBounds | None = None,
    stream_interval: float | None = None,
) -> AsyncIterator[MnemoDiscordClient]:
    """Mnemo's client logged in and connected to the fake Discord (which must be started)."""
    connected = MnemoDiscordClient(
        core,
        policy,
        guild_ready_timeout=0.05,
        autocomplete_budget_seconds=autocomplete_budget_seconds,
        catch_up=catch_up,
        stream_interval=stream_interval,
    )
    task = await connect(connected)
    try:
        yield connected
    finally:
        await connected.close()
        await task


@pytest.fixture
async def client(
    fake_discord: FakeDiscord, core: RecordingCore, policy: AccessPolicy
) -> AsyncIterator[MnemoDiscordClient]:
    async with running(core, policy) as connected:
        yield connected
