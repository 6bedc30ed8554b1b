"""Edits, deletions and departures: people changing what they said to the bot.

- An edit of a message the bot took in corrects it: the turn takes the new text, and the
  write path corrects what was learned from that message (``MemoryWrites.correct``). It is
  never answered again. Only the author's own edit counts, and only within ``edit_window`` of
  the message; while the author has paused learning, only the turn changes.
- A deletion erases what the message left: its turn (with the bot's answer to it), its queued
  writes, and the facts it alone taught, as ``forget`` erases (``MemoryWrites.erase_message``).
  A deletion by someone else (a moderator) changes nothing; when the platform does not say
  who deleted (Discord), it is the author's.
- Someone leaving a group room takes their turns there (and the answers to them) with them;
  their facts stay theirs, for when they come back or ask to see or forget them.

A message is looked up where it can have been stored: its room, or the platform's DM room key
(the message was a DM message, even if its room has since become a group room).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from functools import partial

from bot.commands.pausing import PauseSwitch
from bot.commands.ports import MemoryWrites
from bot.core.keyed_locks import KeyedLocks
from bot.messages import MessageDeletion, MessageEdit
from memory.records import ConversationTurn
from memory.scope import direct_room_key
from memory.store import Store, StoreTransaction

log = logging.getLogger(__name__)


def rooms_of(platform: str, room_key: str) -> list[str]:
    return list(dict.fromkeys([room_key, direct_room_key(platform)]))


def author_of(tx: StoreTransaction, *, rooms: list[str], message_id: str) -> str | None:
    """Who wrote the message: its turn says, or (turns are purged after a while) the facts
    and queued writes it left, which are only ever their author's."""
    turn = tx.turns.said(rooms, message_id)
    if turn is not None:
        return turn.author
    return tx.forget.author_of(rooms, message_id)


class Corrections:
    def __init__(
        self, store: Store, writer: MemoryWrites, pause: PauseSwitch, *, edit_window: timedelta
    ) -> None:
        self._store = store
        self._writer = writer
        self._pause = pause
        self._edit_window = edit_window

    async def edit(self, edit: MessageEdit) -> bool:
        """Whether the edit was taken as a correction (the caller holds the editor's intake
        lock, so the edit comes after the message it edits)."""
        turn = await self._turn(rooms_of(edit.platform, edit.room_key), edit.message_id)
        if turn is None or turn.author is None:
            return False
        if turn.author != edit.user_key:
            log.info("ignored an edit of %s by %s: not its author", edit.message_id, edit.user_key)
            return False
        if edit.time - turn.created_at > self._edit_window:
            log.info("ignored an edit of %s: older than chat.edit_window_hours", edit.message_id)
            return False
        text = edit.text.strip()
        if not text or text == turn.text:
            return False
        learn = not await self._pause.is_paused(turn.author)
        await self._writer.correct(
            turn.author, turn.room, turn.id, edit.message_id, text, learn=learn
        )
        return True

    async def deletion(self, deletion: MessageDeletion, locks: KeyedLocks) -> bool:
        """Whether the deletion erased anything; under the author's intake lock."""
        rooms = rooms_of(deletion.platform, deletion.room_key)
        author = await self._author(rooms, deletion.message_id)
        if author is None:
            return False
        if deletion.deleted_by not in (None, author):
            log.info(
                "kept %s deleted by %s: not its author", deletion.message_id, deletion.deleted_by
            )
            return False
        async with locks.hold(author):
            return await self._writer.erase_message(author, rooms, deletion.message_id)

    async def departure(self, room_key: str, user_key: str) -> None:
        erased = await self._store.write(lambda tx: tx.turns.erase_of(room_key, user_key))
        if erased:
            log.info("%s left %s: erased their %d turns there", user_key, room_key, erased)

    async def _turn(self, rooms: list[str], message_id: str) -> ConversationTurn | None:
        return await self._store.read(lambda tx: tx.turns.said(rooms, message_id))

    async def _author(self, rooms: list[str], message_id: str) -> str | None:
        return await self._store.read(partial(author_of, rooms=rooms, message_id=message_id))
