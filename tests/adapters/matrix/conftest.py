"""Fixtures for the Matrix tests: one real Synapse per session, fresh accounts per test."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from adapters.matrix import ConversationCore, MatrixAdapter, log_in
from adapters.matrix.allowlist import AllowList
from adapters.matrix.settings import MatrixConnection, PasswordLogin
from bot.messages import (
    CatchUpBounds,
    IncomingMessage,
    MessageDeletion,
    MessageEdit,
    OutgoingMessage,
)
from memory.embedding import Embedder
from tests.adapters.matrix.people import Person
from tests.bot.core.harness import Harness, open_harness
from tests.servers.synapse import RegisteredUser, SynapseServer


def unique(name: str) -> str:
    return f"{name}{uuid.uuid4().hex[:8]}"


class RecordingCore:
    """Test double for the conversation core: records what the adapter hands it and answers
    like the core's addressing rules would (DM, mention, reply to the bot, or ``!`` prefix).
    Edits, deletions and caught-up messages are recorded and count as applied."""

    def __init__(
        self,
        answer: Callable[[IncomingMessage], str] | None = None,
        delay_seconds: float = 0.0,
        *,
        private: bool = False,
        error: Exception | None = None,
    ) -> None:
        self.seen: list[IncomingMessage] = []
        self.edits: list[MessageEdit] = []
        self.deletions: list[MessageDeletion] = []
        self.caught_up: list[IncomingMessage] = []
        self.departures: list[tuple[str, str]] = []
        self._changed = asyncio.Condition()
        self._private = private
        self._error = error
        self._answer = answer or (lambda message: f"echo: {message.text}")
        self._delay_seconds = delay_seconds

    async def handle(self, message: IncomingMessage) -> list[OutgoingMessage]:
        self.seen.append(message)
        addressed = (
            message.is_direct
            or message.mentions_bot
            or message.reply_to_bot
            or message.text.startswith("!")
        )
        if not addressed:
            return []
        await asyncio.sleep(self._delay_seconds)
        if self._error is not None:
            raise self._error
        return [
            OutgoingMessage(
                self._answer(message),
                message.room_key,
                reply_to_id=message.message_id,
                thread_id=message.thread_id,
                private=self._private,
            )
        ]

    async def handle_edit(self, edit: MessageEdit) -> bool:
        await self._record(self.edits, edit)
        return True

    async def handle_deletion(self, deletion: MessageDeletion) -> bool:
        await self._record(self.deletions, deletion)
        return True

    async def catch_up(self, message: IncomingMessage) -> bool:
        await self._record(self.caught_up, message)
        return True

    async def handle_departure(self, room_key: str, user_key: str) -> None:
        await self._record(self.departures, (room_key, user_key))

    async def _record(self, into: list[Any], item: Any) -> None:
        async with self._changed:
            into.append(item)
            self._changed.notify_all()

    async def wait_until(self, predicate: Callable[[], bool], seconds: float = 30.0) -> None:
        async with asyncio.timeout(seconds), self._changed:
            await self._changed.wait_for(predicate)


class RunningBot:
    def __init__(self, adapter: MatrixAdapter, task: asyncio.Task[None], device_id: str) -> None:
        self.adapter = adapter
        self.task = task
        self.device_id = device_id

    async def stop(self) -> None:
        if self.task.done():
            return
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


StartBot = Callable[..., Awaitable[RunningBot]]
MakePerson = Callable[..., Awaitable[Person]]


@pytest.fixture
def bot_account(synapse: SynapseServer) -> RegisteredUser:
    return synapse.register(unique("mnemo"))


@pytest.fixture
async def start_bot(
    synapse: SynapseServer, bot_account: RegisteredUser, tmp_path: Path
) -> AsyncIterator[StartBot]:
    """Starts the real adapter (password login, store in tmp_path) around a given core."""
    running: list[RunningBot] = []
    clients = []

    async def start(
        core: ConversationCore,
        *,
        allowed: tuple[str, ...] = ("@*:localhost",),
        max_message_chars: int = 4000,
        display_name: str | None = None,
        catch_up: CatchUpBounds | None = None,
        stream_interval: float | None = None,
    ) -> RunningBot:
        connection = MatrixConnection(
            homeserver=synapse.url,
            user_id=bot_account.user_id,
            login=PasswordLogin(bot_account.password),
            store_path=tmp_path / "bot-store",
            allowed_users=AllowList(allowed),
        )
        client = await log_in(connection)
        clients.append(client)
        adapter = MatrixAdapter(
            client,
            core,
            connection.allowed_users,
            max_message_chars=max_message_chars,
            display_name=display_name,
            catch_up=catch_up,
            stream_interval=stream_interval,
        )
        task = asyncio.create_task(adapter.run())
        async with asyncio.timeout(30):
            await adapter.ready.wait()
        bot = RunningBot(adapter, task, client.device_id)
        running.append(bot)
        return bot

    yield start
    for bot in running:
        await bot.stop()
    for client in clients:
        await client.close()


@pytest.fixture
async def make_person(synapse: SynapseServer, tmp_path: Path) -> AsyncIterator[MakePerson]:
    people: list[Person] = []

    async def make(name: str, *, encryption: bool = True) -> Person:
        account = synapse.register(unique(name))
        person = await Person.log_in(
            synapse.url, account, tmp_path / f"store-{account.localpart}", encryption=encryption
        )
        people.append(person)
        return person

    yield make
    for person in people:
        await person.close()


@pytest.fixture
async def mnemo(tmp_path: Path, embedder: Embedder) -> AsyncIterator[Harness]:
    """The real core on temp files, with the scripted LLM."""
    harness = await open_harness(tmp_path, embedder)
    yield harness
    await harness.app.aclose()
