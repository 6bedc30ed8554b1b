"""The Matrix adapter: a sync loop whose callbacks only filter and normalise events.

Pipeline per message: accept (own, not allowed -> dropped) -> normalise to an
:class:`IncomingMessage` (with the messages it replies to, and how much of the room's history
everyone can read) -> the core answers under a typing notice (streamed into one growing
message when ``stream_interval`` is set) -> deliver as Matrix replies.
An edit (``m.replace``) and a redaction go to the core as corrections, never answered (an
applied edit gets a reaction); someone leaving a room takes their turns there with them.
Events of one room are handled in order, so a fact told before a question is known when the
question is answered; rooms do not wait for each other. After a restart, what was said in the
sync gap is learned from, not answered (``catch_up``), before the room's new messages.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from nio import (
    AccountDataEvent,
    AsyncClient,
    InviteMemberEvent,
    JoinResponse,
    LocalProtocolError,
    MatrixRoom,
    MegolmEvent,
    ProfileGetDisplayNameResponse,
    ProfileSetDisplayNameResponse,
    RedactionEvent,
    RoomMemberEvent,
    RoomMessageText,
    SyncError,
    SyncResponse,
)
from nio.responses import Timeline

from adapters.matrix.allowlist import AllowList
from adapters.matrix.catch_up import gap_events, newest_for_the_bot
from adapters.matrix.delivery import Deliverer
from adapters.matrix.direct import DirectRooms, is_direct_invite
from adapters.matrix.errors import MatrixLoginError
from adapters.matrix.history import MemberHistory
from adapters.matrix.normalise import (
    TextEvent,
    room_id_of,
    room_key,
    time_of,
    to_deletion,
    to_edit,
    to_incoming,
    user_key,
)
from adapters.matrix.quotes import QuoteFetcher
from adapters.matrix.relations import relations_of
from adapters.matrix.streaming import MatrixParts
from adapters.matrix.sync_loop import sync_forever_resumed
from adapters.matrix.typing_notice import typing_notice
from bot.messages import (
    CatchUpBounds,
    IncomingMessage,
    MessageDeletion,
    MessageEdit,
    OutgoingMessage,
)
from bot.streaming import PacedAnswer

logger = logging.getLogger(__name__)

SYNC_TIMEOUT_MS = 30_000
# Connected: a sync came back within two long polls and some slack (a slow homeserver).
CONNECTED_WITHIN_SECONDS = 2 * SYNC_TIMEOUT_MS / 1000 + 30
UNDECRYPTABLE_NOTICE = (
    "I could not decrypt your message (my device has no key for it yet). "
    "Please send it again; if this keeps happening, verify or re-share keys with my device."
)
PRIVATE_ELSEWHERE_NOTICE = "That answer is private: I sent it to our direct chat."
PRIVATE_NO_DM_NOTICE = (
    "That answer is private and we have no direct chat yet: invite me to one and ask there."
)
FAILURE_NOTICE = "Sorry, something went wrong while I was answering. Please try again."
# The reaction to an edit the bot took as a correction: it does not answer an edit again.
EDIT_REACTION = "✏️"
GONE = frozenset({"leave", "ban"})


class ConversationCore(Protocol):
    async def handle(self, message: IncomingMessage) -> list[OutgoingMessage]: ...

    async def handle_edit(self, edit: MessageEdit) -> bool: ...

    async def handle_deletion(self, deletion: MessageDeletion) -> bool: ...

    async def catch_up(self, message: IncomingMessage) -> bool: ...

    async def handle_departure(self, room_key: str, user_key: str) -> None: ...


class MatrixAdapter:
    def __init__(
        self,
        client: AsyncClient,
        core: ConversationCore,
        allowed_users: AllowList,
        *,
        max_message_chars: int,
        display_name: str | None = None,
        catch_up: CatchUpBounds | None = None,
        stream_interval: float | None = None,
    ) -> None:
        # stream_interval: the least time between edits of a streamed answer (None: whole).
        self._stream_interval = stream_interval
        self._client = client
        self._core = core
        self._allowed_users = allowed_users
        self._deliverer = Deliverer(client, max_message_chars)
        self._direct = DirectRooms(client)
        self._history = MemberHistory()
        self._quotes = QuoteFetcher(client)
        self._catch_up_bounds = catch_up or CatchUpBounds()
        self._wanted_display_name = display_name
        self._display_name: str | None = None
        self._room_locks: dict[str, asyncio.Lock] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.ready = asyncio.Event()
        self._fatal: MatrixLoginError | None = None
        self._synced_at: float | None = None

    @property
    def user_id(self) -> str:
        user_id: str = self._client.user_id
        return user_id

    async def run(self) -> None:
        """Sync until cancelled. What was said while the bot was away is learned, not answered."""
        previous_token: str | None = self._client.loaded_sync_token
        # Before the first sync: its full state brings the whole m.direct, even with a token.
        self._client.add_global_account_data_callback(
            self._direct.on_account_data, AccountDataEvent
        )
        self._client.add_event_callback(self._on_invite, InviteMemberEvent)
        # A DM that had a third member becomes a group room for good: checked at each membership
        # change, before the messages after it, and after each sync (its state part too).
        self._client.add_event_callback(self._direct.on_member, RoomMemberEvent)
        self._client.add_event_callback(self._history.on_member, RoomMemberEvent)
        first = await self._client.sync(timeout=0, full_state=True)
        if not isinstance(first, SyncResponse):
            raise ConnectionError(f"first sync with the homeserver failed: {first}")
        await self._direct.on_sync(first)
        await self._history.on_sync(first)
        self._client.add_response_callback(self._direct.on_sync, SyncResponse)
        self._client.add_response_callback(self._history.on_sync, SyncResponse)
        self._display_name = await self._ensure_display_name()
        if self._client.should_upload_keys:
            # On a new device, before anyone is told the bot is there: a message encrypted
            # for the room before the keys are on the server would never be readable.
            await self._client.keys_upload()
        # Registered only now: what the first sync delivered is the gap, caught up below.
        self._client.add_event_callback(self._on_text, RoomMessageText)
        self._client.add_event_callback(self._on_undecryptable, MegolmEvent)
        self._client.add_event_callback(self._on_redaction, RedactionEvent)
        self._client.add_event_callback(self._on_member, RoomMemberEvent)
        self._client.add_response_callback(self._on_sync_error, SyncError)
        self._client.add_response_callback(self._on_synced, SyncResponse)
        self._synced_at = time.monotonic()
        if previous_token and self._catch_up_bounds.enabled:
            self._catch_up(first, previous_token)
        self.ready.set()
        logger.info("Matrix adapter ready as %s", self.user_id)
        try:
            await sync_forever_resumed(
                self._client, timeout_ms=SYNC_TIMEOUT_MS, since=first.next_batch
            )
        finally:
            await self._finish_tasks()
        if self._fatal is not None:
            raise self._fatal

    def connected(self) -> bool:
        """Whether the homeserver answered a sync lately (for the status file)."""
        synced = self._synced_at
        return synced is not None and time.monotonic() - synced < CONNECTED_WITHIN_SECONDS

    async def _on_synced(self, response: SyncResponse) -> None:
        self._synced_at = time.monotonic()

    async def _on_sync_error(self, response: SyncError) -> None:
        if response.status_code != "M_UNKNOWN_TOKEN":
            logger.warning("sync failed, retrying: %s", response)
            return
        # Retrying cannot help, and would spin: the session was logged out or the token revoked.
        self._fatal = MatrixLoginError(
            f"the homeserver no longer accepts the access token of {self.user_id} (the session "
            "was logged out or the token revoked): log in again and restart"
        )
        self._client.stop_sync_forever()

    async def _finish_tasks(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _ensure_display_name(self) -> str | None:
        """The bot's display name, set to the configured one if it differs."""
        response = await self._client.get_displayname(self.user_id)
        current: str | None = (
            response.displayname if isinstance(response, ProfileGetDisplayNameResponse) else None
        )
        wanted = self._wanted_display_name
        if wanted and wanted != current:
            result = await self._client.set_displayname(wanted)
            if isinstance(result, ProfileSetDisplayNameResponse):
                return wanted
            logger.warning("could not set the display name to %r: %s", wanted, result)
        return current

    def _spawn(self, room_id: str, work: Callable[[], Awaitable[None]]) -> None:
        """Run ``work`` after earlier work of the same room, without holding up the sync."""
        lock = self._room_locks.setdefault(room_id, asyncio.Lock())

        async def in_order() -> None:
            async with lock:
                try:
                    await work()
                except Exception:
                    logger.exception("handling an event in %s failed", room_id)

        task = asyncio.create_task(in_order())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _on_invite(self, room: MatrixRoom, event: InviteMemberEvent) -> None:
        if event.membership != "invite" or event.state_key != self.user_id:
            return
        if not self._allowed_users.allows(event.sender):
            logger.warning(
                "rejected the invite of %s to %s: not in matrix.allowed_users",
                event.sender,
                room.room_id,
            )
            await self._client.room_leave(room.room_id)
            return
        response = await self._client.join(room.room_id)
        logger.info("joined %s on the invite of %s: %s", room.room_id, event.sender, response)
        if isinstance(response, JoinResponse) and is_direct_invite(event.content):
            await self._direct.record(room.room_id, event.sender)

    def _accepts(self, room: MatrixRoom, sender: str) -> bool:
        if sender == self.user_id:
            return False
        if not self._allowed_users.allows(sender):
            logger.debug("ignored %s in %s: not in matrix.allowed_users", sender, room.room_id)
            return False
        return True

    async def _on_text(self, room: MatrixRoom, event: RoomMessageText) -> None:
        if not self._accepts(room, event.sender):
            return
        text_event = self._text_event(room, event)
        relations = relations_of(text_event.content)
        if relations.is_edit:
            # An edit is a correction, not a new message: it is never answered again.
            self._spawn(room.room_id, lambda: self._edit(room, text_event))
            return
        # Classified now, when the room is as it was when the message was sent, and again when
        # the answer starts: a DM only if it was one both times. The same for what of the
        # room's history everyone in it can read.
        sent_in_dm = self._in_dm(room, event.sender)
        since = self._history.shared_since(room, time_of(event.server_timestamp))
        self._spawn(room.room_id, lambda: self._answer(room, text_event, sent_in_dm, since))

    @staticmethod
    def _text_event(room: MatrixRoom, event: RoomMessageText) -> TextEvent:
        return TextEvent(
            room_id=room.room_id,
            event_id=event.event_id,
            sender=event.sender,
            sender_name=room.user_name(event.sender) or event.sender,
            content=event.source.get("content", {}),
            server_timestamp_ms=event.server_timestamp,
        )

    def _in_dm(self, room: MatrixRoom, sender: str) -> bool:
        return self._direct.partner(room) == sender

    async def _incoming(
        self, room: MatrixRoom, event: TextEvent, *, is_direct: bool
    ) -> IncomingMessage:
        relations = relations_of(event.content)
        names = [name for name in (self._display_name, room.user_name(self.user_id)) if name]
        return to_incoming(
            event,
            relations,
            is_direct=is_direct,
            bot_user_id=self.user_id,
            bot_names=names,
            reply_to_bot=await self._is_bot_event(room.room_id, relations.reply_to_event_id),
        )

    async def _answer(
        self, room: MatrixRoom, event: TextEvent, sent_in_dm: bool, since: datetime | None
    ) -> None:
        message = await self._incoming(
            room, event, is_direct=sent_in_dm and self._in_dm(room, event.sender)
        )
        quoted = await self._quotes.chain(room, relations_of(event.content), since=since)
        streamed = self._stream(room, event, message.thread_id)
        message = replace(message, shared_since=since, quoted=quoted, stream=streamed)
        async with typing_notice(self._client, room.room_id):
            try:
                answers = await self._core.handle(message)
            except Exception:
                logger.exception("the core failed on %s in %s", event.event_id, room.room_id)
                answers = [
                    OutgoingMessage(FAILURE_NOTICE, message.room_key, thread_id=message.thread_id)
                ]
        if streamed is not None and answers and await streamed.finish(answers[0].text):
            # The answer was streamed into its message; the rest goes as usual.
            answers = answers[1:]
        for answer in answers:
            # Answers go to the room the message came from, or privately to the person: a wrong
            # room key from the core must not carry one person's words into another room.
            target = room_id_of(answer.room_key)
            if target not in (None, room.room_id):
                logger.warning("answer for %s kept in %s", answer.room_key, room.room_id)
            if answer.private and not message.is_direct:
                await self._deliver_privately(room, event, answer)
            else:
                await self._deliverer.deliver(room.room_id, answer, default_reply_to=event.event_id)

    def _stream(
        self, room: MatrixRoom, event: TextEvent, thread_root_id: str | None
    ) -> PacedAnswer | None:
        """Where the answer to ``event`` grows as it is written, if answers stream."""
        if self._stream_interval is None:
            return None
        parts = MatrixParts(
            self._deliverer,
            room.room_id,
            reply_to_event_id=event.event_id,
            thread_root_id=thread_root_id,
        )
        return PacedAnswer(parts, self._stream_interval)

    async def _deliver_privately(
        self, room: MatrixRoom, event: TextEvent, answer: OutgoingMessage
    ) -> None:
        """Matrix has no "only you can see this": a private answer asked for in a group room
        goes to the person's DM with the bot, and the group only hears where it went."""
        direct_room = self._direct.room_with(event.sender, self._client.rooms.values())
        note = PRIVATE_ELSEWHERE_NOTICE if direct_room else PRIVATE_NO_DM_NOTICE
        if direct_room is not None:
            private = replace(answer, reply_to_id=None, thread_id=None)
            await self._deliverer.deliver(direct_room, private, default_reply_to=None)
        await self._deliverer.send_text(
            room.room_id,
            note,
            reply_to_event_id=event.event_id,
            thread_root_id=answer.thread_id,
            notice=True,
        )

    async def _is_bot_event(self, room_id: str, event_id: str | None) -> bool:
        if event_id is None:
            return False
        if event_id in self._deliverer.sent:
            return True
        fetched = await self._quotes.fetch(room_id, event_id)
        return fetched is not None and fetched.sender == self.user_id

    # -- corrections: edits, redactions, departures ---------------------------------------------

    async def _edit(self, room: MatrixRoom, event: TextEvent) -> None:
        edit = to_edit(event, relations_of(event.content))
        if edit is None or not await self._core.handle_edit(edit):
            return
        await self._deliverer.react(room.room_id, edit.message_id, EDIT_REACTION)

    async def _on_redaction(self, room: MatrixRoom, event: RedactionEvent) -> None:
        if not self._accepts(room, event.sender) or event.redacts is None:
            return
        deletion = to_deletion(room.room_id, event.redacts, event.sender, event.server_timestamp)
        self._spawn(room.room_id, lambda: self._delete(deletion))

    async def _delete(self, deletion: MessageDeletion) -> None:
        await self._core.handle_deletion(deletion)

    async def _on_member(self, room: MatrixRoom, event: RoomMemberEvent) -> None:
        if event.membership in GONE and event.state_key != self.user_id:
            self._spawn(room.room_id, lambda: self._depart(room.room_id, event.state_key))

    async def _depart(self, room_id: str, member: str) -> None:
        await self._core.handle_departure(room_key(room_id), user_key(member))

    # -- catch-up after a restart ----------------------------------------------------------

    def _catch_up(self, first: SyncResponse, previous_token: str) -> None:
        """Learn from the sync gap of every joined room, each before its new messages."""
        since = datetime.now(UTC) - timedelta(hours=self._catch_up_bounds.hours)
        for room_id, info in first.rooms.join.items():
            room = self._client.rooms.get(room_id)
            if room is None:
                continue

            async def catch_up(room: MatrixRoom = room, timeline: Timeline = info.timeline) -> None:
                events = await gap_events(
                    self._client, room.room_id, timeline, previous_token, since
                )
                await self._catch_up_room(room, events)

            self._spawn(room_id, catch_up)

    async def _catch_up_room(self, room: MatrixRoom, events: list[Any]) -> None:
        if self._direct.was_demoted(room.room_id):
            # It was a DM until someone else came while the bot was away: which of its
            # messages were said in private cannot be told apart, so none is taken.
            logger.info("not catching up on %s: it stopped being a DM while away", room.room_id)
            return
        steps: list[IncomingMessage | MessageEdit | MessageDeletion | tuple[str, str]] = []
        for event in events:
            steps += await self._gap_step(room, event)
        messages = [step for step in steps if isinstance(step, IncomingMessage)]
        kept = newest_for_the_bot(messages, self._catch_up_bounds.messages_per_room)
        learned = 0
        for step in steps:
            if isinstance(step, IncomingMessage):
                if step.message_id in kept and await self._core.catch_up(step):
                    learned += 1
            elif isinstance(step, MessageEdit):
                await self._core.handle_edit(step)
            elif isinstance(step, MessageDeletion):
                await self._core.handle_deletion(step)
            else:
                await self._core.handle_departure(*step)
        if learned:
            logger.info("learned from %d messages sent in %s while away", learned, room.room_id)

    async def _gap_step(
        self, room: MatrixRoom, event: Any
    ) -> list[IncomingMessage | MessageEdit | MessageDeletion | tuple[str, str]]:
        if isinstance(event, RoomMemberEvent):
            gone = event.membership in GONE and event.state_key != self.user_id
            return [(room_key(room.room_id), user_key(event.state_key))] if gone else []
        if isinstance(event, RedactionEvent):
            if not self._accepts(room, event.sender) or event.redacts is None:
                return []
            return [to_deletion(room.room_id, event.redacts, event.sender, event.server_timestamp)]
        if isinstance(event, MegolmEvent):
            logger.warning(
                "could not decrypt %s, sent in %s while away", event.event_id, room.room_id
            )
            return []
        if not isinstance(event, RoomMessageText) or not self._accepts(room, event.sender):
            return []
        text_event = self._text_event(room, event)
        relations = relations_of(text_event.content)
        if relations.is_edit:
            edit = to_edit(text_event, relations)
            return [] if edit is None else [edit]
        return [await self._incoming(room, text_event, is_direct=self._in_dm(room, event.sender))]

    async def _on_undecryptable(self, room: MatrixRoom, event: MegolmEvent) -> None:
        if not self._accepts(room, event.sender):
            return
        logger.warning(
            "could not decrypt %s from %s in %s (session %s)",
            event.event_id,
            event.sender,
            room.room_id,
            event.session_id,
        )
        relations = relations_of(event.source.get("content", {}))

        async def notify() -> None:
            try:
                await self._client.request_room_key(event)
            except LocalProtocolError as error:
                # Already requested for this session: the notice still goes out.
                logger.debug("room key request for %s skipped: %s", event.session_id, error)
            await self._deliverer.send_text(
                room.room_id,
                UNDECRYPTABLE_NOTICE,
                reply_to_event_id=event.event_id,
                thread_root_id=relations.thread_root_id,
                notice=True,
            )

        self._spawn(room.room_id, notify)
