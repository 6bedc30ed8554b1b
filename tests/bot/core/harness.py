"""A whole Mnemo on temp files for end-to-end tests of the core.

Real parts: SQLite, LanceDB, the all-MiniLM-L6-v2 embedder, the writer and the recaller,
and the real fastembed reranker, which finds no model offline and falls back to cosine order
as it would on such a machine. The only double is :class:`ScriptedMind`, the LLM's judgement:
it answers each kind of call (reply, extraction, decision) the way a real model would.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import URL

from bot.app import Application, build_application
from bot.config import Config
from bot.messages import IncomingMessage, OutgoingMessage
from bot.websearch import WebSearchAdvisor
from memory.embedding import Embedder
from memory.llm import AssistantTurn, ChatMessage, RecordedCall, ScriptedLanguageModel
from memory.recall import FastEmbedReranker
from memory.write.prompts import decision, extraction
from memory.write.prompts.combined import message_of
from tests.memory.write.gated import GatedLanguageModel, never

EXTRACTION_OPENING = extraction.SYSTEM_PROMPT.split("\n", 1)[0]
START = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)


@dataclass
class ScriptedMind:
    """Test double for the model's judgement: per call kind, what a real model answers.

    ``facts`` maps a user message to the facts a model would extract from it (none for
    questions and small talk); ``decisions`` are the decision answers in order; ``replies``
    the chat replies in order (then "OK."); ``reply_errors`` fail the next chat replies (the
    queue worker's calls may come before or after a reply, so errors go by kind, not order).
    """

    facts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    decisions: list[str] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    reply_errors: list[Exception] = field(default_factory=list)
    # What the model answers (or raises) instead of JSON when asked to extract from a message.
    raw_extractions: dict[str, str | Exception] = field(default_factory=dict)

    def __call__(self, messages: Sequence[ChatMessage]) -> str:
        system = messages[0].content
        if system.startswith(EXTRACTION_OPENING):
            message = message_of(messages[-1].content)
            raw = self.raw_extractions.get(message)
            if isinstance(raw, Exception):
                raise raw
            if raw is not None:
                return raw
            return json.dumps({"facts": self.facts.get(message, [])})
        if system == decision.SYSTEM_PROMPT:
            return self.decisions.pop(0)
        if self.reply_errors:
            raise self.reply_errors.pop(0)
        return self.replies.pop(0) if self.replies else "OK."

    def answer(self, messages: Sequence[ChatMessage]) -> str | AssistantTurn:
        """What the scripted model answers; subclasses may answer with tool calls."""
        return self(messages)


def fact(text: str, category: str = "other", when: str | None = None) -> dict[str, Any]:
    return {"text": text, "category": category, "when": when}


def reply_calls(llm: ScriptedLanguageModel) -> list[RecordedCall]:
    """The chat-reply calls (structured calls carry a JSON schema, replies do not)."""
    return [call for call in llm.calls if call.json_schema is None]


def extraction_calls(llm: ScriptedLanguageModel) -> list[RecordedCall]:
    return [c for c in llm.calls if c.messages[0].content.startswith(EXTRACTION_OPENING)]


def make_config(data_dir: Path, *, database: Path | URL | None = None, **chat: Any) -> Config:
    """``database``: a PostgreSQL URL puts the memory there (``storage.database_url``);
    otherwise it is SQLite in ``data_dir``."""
    storage: dict[str, str] = {"data_dir": str(data_dir)}
    if isinstance(database, URL):
        storage["database_url"] = database.render_as_string(hide_password=False)
    return Config.model_validate({"storage": storage, "chat": chat})


class Clock:
    """Message times one minute apart, so turns and facts keep their order."""

    def __init__(self) -> None:
        self.now = START

    def tick(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


@dataclass
class Harness:
    app: Application
    llm: GatedLanguageModel
    mind: ScriptedMind
    clock: Clock = field(default_factory=Clock)

    async def send(
        self,
        user: str,
        text: str,
        *,
        room: str | None = None,
        mention: bool = True,
        platform: str = "matrix",
    ) -> list[OutgoingMessage]:
        """``user`` says ``text`` in a DM (no room) or in group ``room``; waits for memory."""
        message = IncomingMessage(
            platform=platform,
            user_key=f"{platform}:{user}",
            display_name=user.capitalize(),
            room_key=f"{platform}:dm" if room is None else f"{platform}:{room}",
            text=text,
            time=self.clock.tick(),
            is_direct=room is None,
            mentions_bot=mention and room is not None,
        )
        replies = await self.app.core.handle(message)
        # The queue worker learns in the background; wait for it before the next message.
        await self.app.writer.drain()
        return replies

    async def say(self, user: str, text: str, *, room: str | None = None) -> str:
        replies = await self.send(user, text, room=room)
        assert len(replies) == 1, replies
        return replies[0].text

    def last_reply_prompt(self) -> str:
        return reply_calls(self.llm)[-1].prompt_text


async def open_harness(
    tmp_path: Path,
    embedder: Embedder,
    *,
    config: Config | None = None,
    mind: ScriptedMind | None = None,
    web_search: WebSearchAdvisor | None = None,
    supports_tools: bool = True,
    held: Callable[[Sequence[ChatMessage]], bool] | None = None,
) -> Harness:
    """``supports_tools=False`` makes the model refuse tools, as a model without them does;
    ``held`` calls hang until the test opens the gate (``harness.llm.open()``)."""
    mind = mind or ScriptedMind()
    llm = GatedLanguageModel(
        fallback=mind.answer, supports_tools=supports_tools, held=held or never
    )
    # Offline there is no cross-encoder: the real reranker fails to load and recall falls
    # back to cosine order, exactly as on a machine without the model hub.
    reranker = FastEmbedReranker(cache_dir=tmp_path / "no-models", local_files_only=True)
    app = await build_application(
        config or make_config(tmp_path / "data"),
        llm=llm,
        embedder=embedder,
        web_search=web_search,
        reranker=reranker,
    )
    return Harness(app, llm, mind)
