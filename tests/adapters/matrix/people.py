"""Matrix users driven by the tests: real matrix-nio clients against the test Synapse.

Each syncs in the background and queues what it receives, so a test can say "send this, then
wait for the bot's answer in that room".
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nio import (
    AsyncClient,
    AsyncClientConfig,
    LoginResponse,
    MatrixRoom,
    MegolmEvent,
    MemoryDownloadResponse,
    ReactionEvent,
    RoomCreateResponse,
    RoomInviteResponse,
    RoomLeaveResponse,
    RoomMessage,
    RoomRedactResponse,
    RoomSendResponse,
    TypingNoticeEvent,
)
from nio.crypto import decrypt_attachment

from adapters.matrix.sync_loop import sync_forever_resumed
from tests.servers.synapse import RegisteredUser

WAIT_SECONDS = 30.0
ENCRYPTION_STATE = {
    "type": "m.room.encryption",
    "state_key": "",
    "content": {"algorithm": "m.megolm.v1.aes-sha2"},
}


@dataclass(frozen=True, slots=True)
class Received:
    room_id: str
    event_id: str
    sender: str
    body: str
    content: dict[str, Any]
    encrypted: bool
    server_time_ms: int = 0


class Person:
    def __init__(self, client: AsyncClient, account: RegisteredUser) -> None:
        self.client = client
        self.account = account
        self.user_id = account.user_id
        self.received: list[Received] = []
        self.undecryptable: list[str] = []
        self.typing_seen: set[tuple[str, str]] = set()
        # (room id, reacting user, event reacted to, key)
        self.reactions: list[tuple[str, str, str, str]] = []
        self._changed = asyncio.Condition()
        self._sync_task: asyncio.Task[None] | None = None

    @classmethod
    async def log_in(
        cls, homeserver: str, account: RegisteredUser, store: Path, *, encryption: bool = True
    ) -> Person:
        await asyncio.to_thread(store.mkdir, parents=True, exist_ok=True)
        config = AsyncClientConfig(encryption_enabled=encryption, store_sync_tokens=encryption)
        client = AsyncClient(
            homeserver, account.user_id, store_path=str(store) if encryption else "", config=config
        )
        response = await client.login(account.password, device_name="test")
        assert isinstance(response, LoginResponse), response
        person = cls(client, account)
        client.add_event_callback(person._on_message, RoomMessage)
        client.add_event_callback(person._on_undecryptable, MegolmEvent)
        client.add_event_callback(person._on_reaction, ReactionEvent)
        client.add_ephemeral_callback(person._on_typing, TypingNoticeEvent)
        await client.sync(timeout=0, full_state=True)
        person._sync_task = asyncio.create_task(sync_forever_resumed(client, timeout_ms=1000))
        return person

    async def close(self) -> None:
        if self._sync_task is not None:
            self._sync_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sync_task
        await self.client.close()

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def _on_message(self, room: MatrixRoom, event: RoomMessage) -> None:
        content = event.source.get("content", {})
        self.received.append(
            Received(
                room_id=room.room_id,
                event_id=event.event_id,
                sender=event.sender,
                body=content.get("body", ""),
                content=content,
                encrypted=event.decrypted,
                server_time_ms=event.server_timestamp,
            )
        )
        await self._notify()

    async def _on_undecryptable(self, room: MatrixRoom, event: MegolmEvent) -> None:
        self.undecryptable.append(event.event_id)
        await self._notify()

    async def _on_reaction(self, room: MatrixRoom, event: ReactionEvent) -> None:
        self.reactions.append((room.room_id, event.sender, event.reacts_to, event.key))
        await self._notify()

    async def wait_for_reaction(
        self, sender: str, room_id: str, event_id: str, seconds: float = WAIT_SECONDS
    ) -> str:
        """The key of ``sender``'s reaction to ``event_id``, waiting for it."""

        def key() -> str | None:
            for room, who, reacts_to, found in self.reactions:
                if (room, who, reacts_to) == (room_id, sender, event_id):
                    return found
            return None

        async with asyncio.timeout(seconds), self._changed:
            await self._changed.wait_for(lambda: key() is not None)
        found = key()
        assert found is not None
        return found

    async def _on_typing(self, room: MatrixRoom, event: TypingNoticeEvent) -> None:
        for user in event.users:
            self.typing_seen.add((room.room_id, user))
        await self._notify()

    async def wait_until(
        self, predicate: Callable[[], bool], seconds: float = WAIT_SECONDS
    ) -> None:
        """Until ``predicate`` holds of what this person received."""
        async with asyncio.timeout(seconds), self._changed:
            await self._changed.wait_for(predicate)

    def messages_from(self, sender: str, room_id: str) -> list[Received]:
        return [m for m in self.received if m.sender == sender and m.room_id == room_id]

    async def wait_for_messages(
        self, sender: str, room_id: str, count: int, seconds: float = WAIT_SECONDS
    ) -> list[Received]:
        """The first ``count`` messages ``sender`` sent in the room, waiting for them."""
        async with asyncio.timeout(seconds), self._changed:
            await self._changed.wait_for(lambda: len(self.messages_from(sender, room_id)) >= count)
        return self.messages_from(sender, room_id)[:count]

    async def wait_for_files(
        self, sender: str, room_id: str, count: int, seconds: float = WAIT_SECONDS
    ) -> list[Received]:
        def files() -> list[Received]:
            messages = self.messages_from(sender, room_id)
            return [m for m in messages if m.content.get("msgtype") == "m.file"]

        async with asyncio.timeout(seconds), self._changed:
            await self._changed.wait_for(lambda: len(files()) >= count)
        return files()[:count]

    async def wait_for_reply(
        self, sender: str, room_id: str, event_id: str, seconds: float = WAIT_SECONDS
    ) -> Received:
        """``sender``'s answer to the event ``event_id``, waiting for it."""

        def answer() -> Received | None:
            for message in self.messages_from(sender, room_id):
                relates_to = message.content.get("m.relates_to", {})
                if relates_to.get("m.in_reply_to", {}).get("event_id") == event_id:
                    return message
            return None

        async with asyncio.timeout(seconds), self._changed:
            await self._changed.wait_for(lambda: answer() is not None)
        found = answer()
        assert found is not None
        return found

    async def download_file(self, message: Received) -> bytes:
        """The bytes of an ``m.file`` message, decrypted if it came encrypted."""
        encrypted_file = message.content.get("file")
        url = encrypted_file["url"] if encrypted_file else message.content["url"]
        response = await self.client.download(mxc=url)
        assert isinstance(response, MemoryDownloadResponse), response
        if not encrypted_file:
            data: bytes = response.body
            return data
        plain: bytes = decrypt_attachment(
            response.body,
            encrypted_file["key"]["k"],
            encrypted_file["hashes"]["sha256"],
            encrypted_file["iv"],
        )
        return plain

    async def create_room(
        self, invite: list[str], *, direct: bool = False, encrypted: bool = False
    ) -> str:
        response = await self.client.room_create(
            is_direct=direct,
            invite=invite,
            initial_state=[ENCRYPTION_STATE] if encrypted else [],
        )
        assert isinstance(response, RoomCreateResponse), response
        room_id: str = response.room_id
        return room_id

    async def join(self, room_id: str) -> None:
        await self.client.join(room_id)

    async def leave(self, room_id: str) -> None:
        response = await self.client.room_leave(room_id)
        assert isinstance(response, RoomLeaveResponse), response

    async def invite(self, room_id: str, user_id: str) -> None:
        response = await self.client.room_invite(room_id, user_id)
        assert isinstance(response, RoomInviteResponse), response

    async def wait_for_members(self, room_id: str, members: set[str]) -> None:
        """Until everyone named has joined, as this person's client sees it."""
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            room = self.client.rooms.get(room_id)
            if room is not None and members <= set(room.users):
                return
            await asyncio.sleep(0.1)
        raise TimeoutError(f"{members} did not all join {room_id}")

    async def send(self, room_id: str, text: str, **extra: Any) -> str:
        content = {"msgtype": "m.text", "body": text, **extra}
        return await self.send_content(room_id, content)

    async def edit(self, room_id: str, event_id: str, text: str) -> str:
        """An ``m.replace`` edit of ``event_id``, as Element sends one."""
        return await self.send(
            room_id,
            f"* {text}",
            **{
                "m.new_content": {"msgtype": "m.text", "body": text},
                "m.relates_to": {"rel_type": "m.replace", "event_id": event_id},
            },
        )

    async def reply(self, room_id: str, event_id: str, text: str, **extra: Any) -> str:
        return await self.send(
            room_id, text, **{"m.relates_to": {"m.in_reply_to": {"event_id": event_id}}}, **extra
        )

    async def redact(self, room_id: str, event_id: str) -> None:
        response = await self.client.room_redact(room_id, event_id)
        assert isinstance(response, RoomRedactResponse), response

    async def send_content(
        self, room_id: str, content: dict[str, Any], event_type: str = "m.room.message"
    ) -> str:
        response = await self.client.room_send(
            room_id, event_type, content, ignore_unverified_devices=True
        )
        assert isinstance(response, RoomSendResponse), response
        event_id: str = response.event_id
        return event_id
