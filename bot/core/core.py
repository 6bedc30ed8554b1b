"""The conversation core: every adapter hands it messages and sends back what it returns.

One message goes through three steps: authorise (is it for the bot, within the rate limit),
take in (run a command or "remember that ...", or store a conversation message and queue it
for memory, write-ahead, before the LLM is asked anything), and answer (recall, prompt, LLM).
The first two run under the person's intake lock, so one person's messages and commands take
effect in the order they arrived; the queue worker learns from the message in the background.

Conversation turns are kept per room with the speaker's name. A DM room key is shared by all
of a platform's DM users, so in a DM the turns read back are only those between this person
and the bot (the bot's turns are stored with the person they answered as ``author`` for that
reason); in a group room they are the room's turns by anyone there (``room_context``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.commands import (
    CommandRegistry,
    CommandReply,
    CommandServices,
    Confirmations,
    Invocation,
    build_command_registry,
    remember_that,
)
from bot.commands.pausing import PauseSwitch
from bot.commands.ports import FactRecall, MemoryWrites
from bot.commands.remember import describe_remembered
from bot.core.addressing import CommandText, is_for_bot, parse_command
from bot.core.corrections import Corrections
from bot.core.keyed_locks import KeyedLocks
from bot.core.rate_limit import RateLimiter
from bot.core.reply_prompt import ReplyContext
from bot.core.replying import Replier
from bot.core.room_context import read_turns, turns_in, unseen_quotes
from bot.core.truncation import Truncated, truncate
from bot.core.turn_window import TurnWindows, window_key
from bot.messages import IncomingMessage, MessageDeletion, MessageEdit, OutgoingMessage
from bot.websearch.base import WebSearchAdvisor
from memory.embedding import Vectors
from memory.errors import MemoryLayerError, StorageFullError, StoreError
from memory.index import IndexRebuildingError
from memory.llm import LanguageModel, LanguageModelError
from memory.priority import Replies
from memory.records import Answer, ConversationTurn, Role
from memory.scope import Scope, ScopeMode, direct_room_key
from memory.store import Accepted, Store, StoreTransaction

log = logging.getLogger(__name__)

APOLOGY = (
    "Sorry, I can't answer right now: my language model is not available. Please try again later."
)
NO_TEXT = "I can only read text, and your message had none."
EMPTY_ANSWER = "Sorry, my language model gave me an empty answer. Please ask again."
MEMORY_APOLOGY = (
    "Sorry, my memory is not working right now, so I can't do that. The operator's log says why."
)
STORAGE_FULL_APOLOGY = (
    "Sorry, I can't store anything right now: the disk of the server I run on is full, so "
    "nothing was changed. Please tell whoever runs me; then try again."
)
NOT_SAVED = (
    "(I could not save this message to my memory, so I will not learn from it: my storage "
    "is not working right now. The operator's log says why.)"
)
NOT_SAVED_FULL = (
    "(I could not save this message to my memory, so I will not learn from it: the disk of "
    "the server I run on is full. Please tell whoever runs me.)"
)
CHOICE_LIMIT = 25
CHOICE_LABEL_CHARS = 100


@dataclass(frozen=True, slots=True)
class TakenIn:
    """A conversation message taken in under the person's intake lock, to be answered."""

    message: IncomingMessage
    scope: Scope
    text: str
    accepted: Accepted | None
    not_saved: str | None
    cut_note: str | None
    # Recall's embedding of the text, begun beside the intake.
    embedding: asyncio.Task[Vectors] | None = None


@dataclass(frozen=True, slots=True)
class Composed:
    """An answer as shown to the person, and the reply to keep as the bot's turn (if any)."""

    shown: str
    kept: str | None


def storage_advice(error: StoreError) -> str:
    """What the operator can do about a store that refused a write."""
    if isinstance(error, StorageFullError):
        return "free disk space where storage.data_dir is"
    if "locked" in str(error).lower():
        return (
            "another process holds the database: run one Mnemo per data folder (SQLite), "
            "or end the long transaction that holds it (PostgreSQL)"
        )
    return "run `mnemo doctor` to check the database"


@dataclass(frozen=True, slots=True)
class CoreSettings:
    bot_name: str = "Mnemo"
    command_prefix: str = "!"
    scope_mode: ScopeMode = ScopeMode.USER_ROOM
    max_message_chars: int = 4000
    rate_limit_per_minute: int = 20
    history_turns: int = 12
    temperature: float | None = None
    edit_window: timedelta = timedelta(hours=24)


class ConversationCore:
    def __init__(
        self,
        settings: CoreSettings,
        *,
        store: Store,
        writer: MemoryWrites,
        recaller: FactRecall,
        llm: LanguageModel,
        web_search: WebSearchAdvisor | None = None,
        clock: Callable[[], float] = time.monotonic,
        replies: Replies | None = None,
    ) -> None:
        self.settings = settings
        # Background model calls give way while a reply is being prepared.
        self._replies = replies or Replies()
        self._store = store
        self._writer = writer
        self._recaller = recaller
        self._web_search = web_search
        self._replier = Replier(llm, web_search, temperature=settings.temperature)
        self.pause = PauseSwitch(store)
        self._rate_limiter = RateLimiter(settings.rate_limit_per_minute, clock=clock)
        services = CommandServices(
            writer=writer,
            recaller=recaller,
            store=store,
            pause=self.pause,
            confirmations=Confirmations(clock=clock),
            conversation=self,
        )
        self.commands: CommandRegistry = build_command_registry(services)
        self._intake_locks = KeyedLocks()
        self._corrections = Corrections(store, writer, self.pause, edit_window=settings.edit_window)
        # The index rebuild already said in the log (IndexRebuildingError.rebuild).
        self._rebuild_reported = 0
        self._windows = TurnWindows()

    # -- authorise, take in, route ----------------------------------------------------------

    async def handle(self, message: IncomingMessage) -> list[OutgoingMessage]:
        """The replies to ``message``; empty when it is not for the bot.

        The person's intake lock is the first thing awaited: a command runs, and a
        conversation message is taken in (stored and queued), in the order they arrived.
        The answer to a conversation message is composed after the lock is released.
        Background memory work gives way meanwhile (replies first).
        """
        with self._replies.reply():
            return await self._handle(message)

    async def _handle(self, message: IncomingMessage) -> list[OutgoingMessage]:
        async with self._intake_locks.hold(message.user_key):
            taken = await self._take_in(message)
        if not isinstance(taken, TakenIn):
            return taken
        try:
            answer = await self._converse(taken)
        except MemoryLayerError as error:
            answer = self._memory_failure(message, taken.scope, error).text
        finally:
            _drop(taken.embedding)
        notes = [note for note in (taken.not_saved, taken.cut_note) if note is not None]
        text = "\n\n".join([answer, *notes])
        return [self._reply(message, text, False)]

    async def _take_in(self, message: IncomingMessage) -> list[OutgoingMessage] | TakenIn:
        cut = truncate(message.text, self.settings.max_message_chars)
        command = parse_command(cut.text, self.settings.command_prefix)
        if not is_for_bot(message, command, self.commands.knows):
            return []
        decision = self._rate_limiter.check(message.user_key)
        if not decision.allowed:
            if not decision.notify:
                return []
            return [self._reply(message, self._rate_notice(decision.retry_after_seconds), True)]
        if not cut.text.strip():
            # An image or file alone, or only whitespace: nothing to answer or learn.
            return [self._reply(message, NO_TEXT, False)]
        scope = message.scope(self.settings.scope_mode)
        remembered = None if command is not None else remember_that(cut.text)
        try:
            if command is not None:
                reply = await self._dispatch(message, scope, command)
            elif remembered is not None:
                reply = await self._remember(scope, remembered)
            else:
                return await self._take_in_conversation(message, scope, cut)
        except MemoryLayerError as error:
            reply = self._memory_failure(message, scope, error)
        note = cut.note()
        text = reply.text if note is None else f"{reply.text}\n\n{note}"
        return [self._reply(message, text, reply.private, reply)]

    async def _take_in_conversation(
        self, message: IncomingMessage, scope: Scope, cut: Truncated
    ) -> TakenIn:
        # Recall embeds the text while it is taken in: the reply waits for the longer.
        embedding = self._recaller.start_embedding(cut.text)
        try:
            accepted, not_saved = await self._accept(message, scope, cut.text)
        except BaseException:
            _drop(embedding)
            raise
        return TakenIn(message, scope, cut.text, accepted, not_saved, cut.note(), embedding)

    async def _dispatch(
        self, message: IncomingMessage, scope: Scope, command: CommandText
    ) -> CommandReply:
        # Commands are never learned from (only /search keeps its turns, as conversation).
        invocation = Invocation(message, scope, command.prefix, command.arguments)
        return await self.commands.dispatch(command.name, invocation)

    async def _remember(self, scope: Scope, text: str) -> CommandReply:
        outcome = await self._writer.remember(scope, text)
        return CommandReply(describe_remembered(text, outcome), private=False)

    async def _accept(
        self, message: IncomingMessage, scope: Scope, text: str
    ) -> tuple[Accepted | None, str | None]:
        """Store the person's turn and queue it for memory before anyone answers it; if that
        fails, the answer still comes, with a note that this message was not saved."""
        try:
            # The writer reads the person's pause in the same transaction.
            accepted = await self._writer.accept(
                scope,
                text,
                message_time=message.time,
                platform_message_id=message.message_id,
                author_name=message.display_name,
                audience=message.audience,
            )
        except StoreError as error:
            log.error(
                "could not save the message of %s in %s to memory, answering without: %s; %s",
                message.user_key,
                scope.room,
                error,
                storage_advice(error),
            )
            return None, NOT_SAVED_FULL if isinstance(error, StorageFullError) else NOT_SAVED
        return accepted, None

    def _memory_failure(
        self, message: IncomingMessage, scope: Scope, error: MemoryLayerError
    ) -> CommandReply:
        if isinstance(error, StorageFullError):
            log.error(
                "storage full while serving %s: %s; free disk space where storage.data_dir is",
                message.user_key,
                error,
            )
            return CommandReply(STORAGE_FULL_APOLOGY, private=False)
        log.error("memory failed for %s in %s: %s", message.user_key, scope.room, error)
        return CommandReply(MEMORY_APOLOGY, private=False)

    # -- answer ----------------------------------------------------------------------------

    @property
    def can_search_web(self) -> bool:
        return self._web_search is not None

    async def answer(
        self, message: IncomingMessage, scope: Scope, text: str, *, forced_query: str | None
    ) -> str:
        """Recall, build the prompt, ask the LLM (searching the web if it is set up and
        needed), and keep both turns; an apology on failure. For commands (``/search``),
        whose text was not taken in as a conversation message."""
        composed = await self._compose(message, scope, text, forced_query, current_turn=None)
        await self._keep_turns(message, scope.room, text, composed.kept)
        return composed.shown

    async def _converse(self, taken: TakenIn) -> str:
        """Answer a conversation message taken in; the person's turn is already stored."""
        turn = None if taken.accepted is None else taken.accepted.turn_id
        composed = await self._compose(
            taken.message,
            taken.scope,
            taken.text,
            None,
            current_turn=turn,
            embedding=taken.embedding,
        )
        if turn is not None and composed.kept is not None:
            await self._keep_answer(taken.message, taken.scope.room, composed.kept, turn)
        return composed.shown

    async def _compose(
        self,
        message: IncomingMessage,
        scope: Scope,
        text: str,
        forced_query: str | None,
        *,
        current_turn: int | None,
        embedding: Awaitable[Vectors] | None = None,
    ) -> Composed:
        facts, turns = await self._memories(message, scope, text, current_turn, embedding)
        context = ReplyContext(
            bot_name=self.settings.bot_name,
            person_name=message.display_name,
            today=message.time.date(),
            facts=facts,
            turns=turns,
            message=text,
            is_direct=message.is_direct,
            quoted=unseen_quotes(message.quoted, turns),
        )
        try:
            reply = await self._replier.reply(
                context, forced_query=forced_query, stream=message.stream
            )
        except LanguageModelError as error:
            log.error("could not answer %s in %s: %s", message.user_key, scope.room, error)
            return Composed(APOLOGY, None)
        if not reply.text.strip():
            # Platforms refuse an empty message; the person would hear nothing at all.
            log.warning(
                "the language model answered %s in %s with empty text", message.user_key, scope.room
            )
            return Composed(EMPTY_ANSWER, None)
        shown = reply.text if reply.notice is None else f"{reply.text}\n\n{reply.notice}"
        return Composed(shown, reply.text)

    async def _memories(
        self,
        message: IncomingMessage,
        scope: Scope,
        text: str,
        current_turn: int | None,
        embedding: Awaitable[Vectors] | None,
    ) -> tuple[list[str], list[ConversationTurn]]:
        """The recalled facts and the recent turns, read in one read transaction. If recall
        fails, the reply goes without memories (logged) and the turns are read alone."""

        def recent_turns(transaction: StoreTransaction) -> list[ConversationTurn]:
            return turns_in(
                transaction,
                message,
                scope.room,
                limit=self.settings.history_turns,
                leave_out=current_turn,
            )

        try:
            recalled, recent = await self._recaller.for_message_with(
                scope, text, recent_turns, embedding=embedding
            )
        except IndexRebuildingError as error:
            # Every message meanwhile meets it: one line per rebuild, not one per message.
            if error.rebuild != self._rebuild_reported:
                self._rebuild_reported = error.rebuild
                log.warning("answering without memories until the index is rebuilt: %s", error)
        except MemoryLayerError as error:
            # A broken index must not silence the bot: answer without memories, say why.
            log.error("recall failed for %s, answering without memories: %s", scope, error)
        else:
            return [item.fact.text for item in recalled], self._window(message, scope, recent)
        recent = await read_turns(
            self._store,
            message,
            scope.room,
            limit=self.settings.history_turns,
            leave_out=current_turn,
        )
        return [], self._window(message, scope, recent)

    def _window(
        self, message: IncomingMessage, scope: Scope, recent: list[ConversationTurn]
    ) -> list[ConversationTurn]:
        """The recent turns the prompt carries: a window that moves in steps, so that the
        prompt's beginning stays the same for the server's cache (:mod:`.turn_window`)."""
        key = window_key(message, scope.room)
        return self._windows.window(key, recent, self.settings.history_turns)

    async def _keep_turns(
        self, message: IncomingMessage, room: str, text: str, reply: str | None
    ) -> None:
        def keep(tx: StoreTransaction) -> None:
            turn = tx.turns.add(
                room,
                Role.USER,
                text,
                author=message.user_key,
                created_at=message.time,
                platform_message_id=message.message_id,
                author_name=message.display_name,
                audience=message.audience,
            )
            if reply is not None:
                tx.turns.add_answer(self._answer(message, room, reply, turn.id))

        try:
            await self._store.write(keep)
        except StoreError as error:
            # The answer is already there: losing the turns costs context, not the reply.
            log.error("could not store the turns of %s in %s: %s", message.user_key, room, error)

    async def _keep_answer(
        self, message: IncomingMessage, room: str, reply: str, answer_to: int
    ) -> None:
        try:
            await self._store.add_answer(self._answer(message, room, reply, answer_to))
        except StoreError as error:
            log.error("could not store the answer to %s in %s: %s", message.user_key, room, error)

    @staticmethod
    def _answer(message: IncomingMessage, room: str, reply: str, answer_to: int) -> Answer:
        """The bot's turn, authored as the person it answers (DM rooms are shared), linked to
        the person's turn so that erasing that turn erases the answer too; not kept if the
        person's turn was forgotten while the answer was composed."""
        return Answer(
            room,
            reply,
            author=message.user_key,
            created_at=datetime.now(UTC),
            answer_to=answer_to,
            audience=message.audience,
        )

    # -- corrections and catch-up ----------------------------------------------------------

    async def handle_edit(self, edit: MessageEdit) -> bool:
        """Take an edit as a correction of its message; whether it was (never answered)."""
        async with self._intake_locks.hold(edit.user_key):
            return await self._corrections.edit(edit)

    async def handle_deletion(self, deletion: MessageDeletion) -> bool:
        """Erase a deleted message and what was learned from it alone; whether it was."""
        return await self._corrections.deletion(deletion, self._intake_locks)

    async def handle_departure(self, room_key: str, user_key: str) -> None:
        """Someone left a group room: their turns there are no one's context any more."""
        async with self._intake_locks.hold(user_key):
            await self._corrections.departure(room_key, user_key)

    async def catch_up(self, message: IncomingMessage) -> bool:
        """Learn from a message sent while the bot was away, without answering it. Whether it
        was taken in: not when it was not for the bot, a command (never run late: "forget all
        confirm" hours later would surprise), empty, or taken in before (also with another
        text: an edit made while away is not a new message)."""
        cut = truncate(message.text, self.settings.max_message_chars)
        command = parse_command(cut.text, self.settings.command_prefix)
        if command is not None or not cut.text.strip():
            return False
        if not is_for_bot(message, None, self.commands.knows):
            return False
        scope = message.scope(self.settings.scope_mode)
        async with self._intake_locks.hold(message.user_key):
            message_id = message.message_id
            if message_id is not None:
                known = await self._store.read(
                    lambda tx: tx.turns.person_turn(scope.room, scope.owner, message_id)
                )
                if known is not None:
                    return False
            accepted, _ = await self._accept(message, scope, cut.text)
        return accepted is not None and not accepted.duplicate

    # -- adapters' helpers -----------------------------------------------------------------

    async def known_direct_users(self, platform: str) -> list[str]:
        """The people with DM turns on ``platform``: whose DMs a restart catches up on."""
        room = direct_room_key(platform)
        return await self._store.read(lambda tx: tx.turns.authors_in(room))

    async def fact_choices(self, message: IncomingMessage, typed: str) -> list[tuple[int, str]]:
        """The caller's active facts here whose number or text contains ``typed``."""
        scope = message.scope(self.settings.scope_mode)
        needle = typed.strip().lstrip("#")
        facts = await self._store.read(
            lambda tx: tx.facts.matching(scope, needle, limit=CHOICE_LIMIT)
        )
        return [(f.id, f"#{f.id} {f.text}"[:CHOICE_LABEL_CHARS]) for f in facts]

    # -- replies ---------------------------------------------------------------------------

    def _rate_notice(self, retry_after: float) -> str:
        return (
            f"You're sending messages faster than I can answer "
            f"({self.settings.rate_limit_per_minute} a minute). I didn't read that one; "
            f"please send it again in {max(1, round(retry_after))} seconds."
        )

    @staticmethod
    def _reply(
        message: IncomingMessage,
        text: str,
        private: bool,
        reply: CommandReply | None = None,
    ) -> OutgoingMessage:
        return OutgoingMessage(
            text=text,
            room_key=message.room_key,
            reply_to_id=message.message_id,
            thread_id=message.thread_id,
            private=private,
            attachments=() if reply is None else reply.attachments,
        )


def _drop(embedding: asyncio.Task[Vectors] | None) -> None:
    """Stop an embedding nobody will wait for, and take its error, if any, off the loop's log."""
    if embedding is None:
        return
    embedding.cancel()
    embedding.add_done_callback(lambda task: task.cancelled() or task.exception())
