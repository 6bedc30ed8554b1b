"""What an event's ``m.relates_to`` says: a reply, a thread, or an edit."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Relations:
    reply_to_event_id: str | None = None
    thread_root_id: str | None = None
    is_edit: bool = False
    # The event an ``m.replace`` edit replaces (always the original, also for an edit of an edit).
    replaces: str | None = None


def relations_of(content: Mapping[str, Any]) -> Relations:
    relates_to = content.get("m.relates_to")
    if not isinstance(relates_to, Mapping):
        return Relations()
    relation_type = relates_to.get("rel_type")
    in_reply_to = relates_to.get("m.in_reply_to")
    reply_to = in_reply_to.get("event_id") if isinstance(in_reply_to, Mapping) else None
    # In a thread, clients set in_reply_to to the latest thread event only as a fallback for
    # thread-unaware clients ("is_falling_back"); that is not a reply the person chose.
    if relation_type == "m.thread" and relates_to.get("is_falling_back", False):
        reply_to = None
    related = relates_to.get("event_id")
    related = related if isinstance(related, str) else None
    return Relations(
        reply_to_event_id=reply_to if isinstance(reply_to, str) else None,
        thread_root_id=related if relation_type == "m.thread" else None,
        is_edit=relation_type == "m.replace",
        replaces=related if relation_type == "m.replace" else None,
    )
