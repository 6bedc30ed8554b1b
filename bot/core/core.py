"""The conversation core: every adapter hands it messages and sends back what it returns.

One message goes through four steps: authorise (is it for the bot, within the rate limit),
route (command, "remember that ...", or conversation), answer (recall, prompt, LLM), and
learn (hand the person's words to the write path in the background, after the reply).

Conversation turns are kept per room with the speaker's name. A DM room key is shared by all
of a platform's DM users, so in a DM the turns read back are only those between this person
and the bot (the bot's turns are stored with the person they answered as ``author`` for that
reason); in a group room they are the room's turns by anyone there (``room_context``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

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
from bot.core.background import BackgroundTasks
from bot.core.rate_limit import RateLimiter
from bot.core.reply_prompt import ReplyContext
from bot.core.replying import Replier
from bot.core.room_context import read_context
from bot.core.truncation import truncate
from bot.messages import IncomingMessage, OutgoingMessage
from bot.websearch.base import WebSearchAdvisor
from memory.errors import MemoryLayerError, StorageFullError, StoreError
from memory.llm import LanguageModel, LanguageModelError
from memory.records import Role
from memory.scope import Scope, ScopeMode
from memory.store import Store

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
CHOICE_LIMIT = 25
CHOICE_LABEL_CHARS = 100


@dataclass(frozen=True, slots=True)
class CoreSettings:
    bot_name: str = "Mnemo"
    command_prefix: str = "!"
    scope_mode: ScopeMode = ScopeMode.USER_ROOM
    max_message_chars: int = 4000
    rate_limit_per_minute: int = 20
    history_turns: int = 12
    temperature: float | None = None


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
    ) -> None:
        self.settings = settings
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
        self._background = BackgroundTasks()

    # -- authorise and route ---------------------------------------------------------------

    async def handle(self, message: IncomingMessage) -> list[OutgoingMessage]:
        """The replies to ``message``; empty when it is not for the bot."""
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
        try:
            reply = await self._route(message, scope, cut.text, command)
        except StorageFullError as error:
            log.error(
                "storage full while serving %s: %s; free disk space where storage.data_dir is",
                message.user_key,
                error,
            )
            reply = CommandReply(STORAGE_FULL_APOLOGY, private=False)
        except MemoryLayerError as error:
            log.error("memory failed for %s in %s: %s", message.user_key, scope.room, error)
            reply = CommandReply(MEMORY_APOLOGY, private=False)
        note = cut.note()
        text = reply.text if note is None else f"{reply.text}\n\n{note}"
        return [self._reply(message, text, reply.private, reply)]

    async def _route(
        self, message: IncomingMessage, scope: Scope, text: str, command: CommandText | None
    ) -> CommandReply:
        if command is not None:
            # Commands are never conversation: not stored as turns, never learned from.
            invocation = Invocation(message, scope, command.prefix, command.arguments)
            return await self.commands.dispatch(command.name, invocation)
        remembered = remember_that(text)
        if remembered is not None:
            return await self._remember(scope, remembered)
        answer = await self.answer(message, scope, text, forced_query=None)
        self._background.spawn(self._learn(message, scope, text), what="memory write")
        return CommandReply(answer, private=False)

    async def _remember(self, scope: Scope, text: str) -> CommandReply:
        outcome = await self._writer.remember(scope, text)
        return CommandReply(describe_remembered(text, outcome), private=False)

    # -- answer ----------------------------------------------------------------------------

    @property
    def can_search_web(self) -> bool:
        return self._web_search is not None

    async def answer(
        self, message: IncomingMessage, scope: Scope, text: str, *, forced_query: str | None
    ) -> str:
        """Recall, build the prompt, ask the LLM (searching the web if it is set up and
        needed), and keep both turns; an apology on failure."""
        facts = await self._recall(scope, text)
        conversation = await read_context(
            self._store, message, scope.room, limit=self.settings.history_turns
        )
        context = ReplyContext(
            bot_name=self.settings.bot_name,
            person_name=message.display_name,
            today=message.time.date(),
            facts=facts,
            turns=conversation.turns,
            message=text,
            is_direct=message.is_direct,
            quoted=conversation.quoted,
        )
        try:
            reply = await self._replier.reply(context, forced_query=forced_query)
        except LanguageModelError as error:
            log.error("could not answer %s in %s: %s", message.user_key, scope.room, error)
            await self._keep_turns(message, scope.room, text, None)
            return APOLOGY
        if not reply.text.strip():
            # Platforms refuse an empty message; the person would hear nothing at all.
            log.warning(
                "the language model answered %s in %s with empty text", message.user_key, scope.room
            )
            await self._keep_turns(message, scope.room, text, None)
            return EMPTY_ANSWER
        await self._keep_turns(message, scope.room, text, reply.text)
        return reply.text if reply.notice is None else f"{reply.text}\n\n{reply.notice}"

    async def _recall(self, scope: Scope, text: str) -> list[str]:
        try:
            recalled = await self._recaller.for_message(scope, text)
        except MemoryLayerError as error:
            # A broken index must not silence the bot: answer without memories, say why.
            log.error("recall failed for %s, answering without memories: %s", scope, error)
            return []
        return [item.fact.text for item in recalled]

    async def _keep_turns(
        self, message: IncomingMessage, room: str, text: str, reply: str | None
    ) -> None:
        try:
            await self._store_turns(message, room, text, reply)
        except StoreError as error:
            # The answer is already there: losing the turns costs context, not the reply.
            log.error("could not store the turns of %s in %s: %s", message.user_key, room, error)

    async def _store_turns(
        self, message: IncomingMessage, room: str, text: str, reply: str | None
    ) -> None:
        now = datetime.now(UTC)
        async with self._store.transaction() as tx:
            await tx.turns.add(
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
                await tx.turns.add(
                    room,
                    Role.ASSISTANT,
                    reply,
                    author=message.user_key,
                    created_at=now,
                    audience=message.audience,
                )

    # -- learn -----------------------------------------------------------------------------

    async def _learn(self, message: IncomingMessage, scope: Scope, text: str) -> None:
        if await self.pause.is_paused(message.user_key):
            return
        await self._writer.submit(
            scope, text, message_time=message.time, source_message_id=message.message_id
        )

    async def wait_idle(self) -> None:
        """Wait for the background memory hand-offs started so far (tests, shutdown)."""
        await self._background.wait()

    # -- adapters' helpers -----------------------------------------------------------------

    async def fact_choices(self, message: IncomingMessage, typed: str) -> list[tuple[int, str]]:
        """The caller's active facts here whose number or text contains ``typed``."""
        scope = message.scope(self.settings.scope_mode)
        needle = typed.strip().lstrip("#")
        async with self._store.transaction() as tx:
            facts = await tx.facts.matching(scope, needle, limit=CHOICE_LIMIT)
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
