"""Typed, frozen records of the memory layer. Persistence lives in the store, not here."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class FactStatus(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    DELETED = "deleted"
    MERGED = "merged"


class FactSource(StrEnum):
    STATED = "stated"
    EXTRACTED = "extracted"
    REMEMBERED = "remembered"
    CONSOLIDATED = "consolidated"


class Action(StrEnum):
    ADD = "ADD"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    NONE = "NONE"
    MERGE = "MERGE"
    FORGET = "FORGET"
    RESTORE = "RESTORE"


class Actor(StrEnum):
    PIPELINE = "pipeline"
    USER = "user"
    CONSOLIDATION = "consolidation"
    ADMIN = "admin"


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"


@dataclass(frozen=True, slots=True)
class NewFact:
    """A fact about to be written: what the pipeline or a person hands to the store."""

    text: str
    category: str = "general"
    source: FactSource = FactSource.EXTRACTED
    valid_from: datetime | None = None
    source_message_id: str | None = None


@dataclass(frozen=True, slots=True)
class Fact:
    id: int
    owner: str
    room: str
    text: str
    category: str
    status: FactStatus
    source: FactSource
    created_at: datetime
    valid_from: datetime | None
    valid_to: datetime | None
    superseded_by: int | None
    source_message_id: str | None
    embedding_model: str | None


@dataclass(frozen=True, slots=True)
class FactEvent:
    """One decision about facts: what was proposed, what was done, and which guard intervened."""

    id: int
    owner: str
    room: str
    fact_id: int | None
    related_fact_id: int | None
    proposed_action: str | None
    proposed_target: str | None
    final_action: Action
    guard: str | None
    old_text: str | None
    new_text: str | None
    actor: Actor
    created_at: datetime
    undone_at: datetime | None
    source_message_id: str | None = None


@dataclass(frozen=True, slots=True)
class ConversationTurn:
    id: int
    room: str
    author: str | None
    role: Role
    text: str
    created_at: datetime
    platform_message_id: str | None
    author_name: str | None = None
    audience: str | None = None
    answer_to: int | None = None


@dataclass(frozen=True, slots=True)
class Answer:
    """The bot's answer to a person's turn (``answer_to``), authored as that person (DM rooms
    are shared) and erased with that turn."""

    room: str
    text: str
    author: str
    created_at: datetime
    answer_to: int
    audience: str | None = None


@dataclass(frozen=True, slots=True)
class PendingWrite:
    """A user's message waiting for memory extraction; durable across crashes and outages."""

    id: int
    owner: str
    room: str
    text: str
    message_time: datetime
    source_message_id: str | None
    attempts: int
    next_attempt_at: datetime
    last_error: str | None
    created_at: datetime
    claimed_by: str | None = None
    claimed_until: datetime | None = None
    corrects: bool = False
