"""Whether a message mentions the bot: ``m.mentions`` first, then the plain text.

The plain-text fallback matches the bot's whole user id or display name as a word, so a bot
called "AI" is not addressed by "again" or "said", and ``@mnemo:example.org`` is not matched
inside ``@mnemo:example.org.evil``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any


def strip_reply_fallback(body: str) -> str:
    """Drop the quoted ``> `` lines older clients put before a reply's own text."""
    lines = body.splitlines()
    index = 0
    while index < len(lines) and lines[index].startswith(">"):
        index += 1
    if index and index < len(lines) and not lines[index].strip():
        index += 1
    return "\n".join(lines[index:])


def _word_pattern(name: str) -> re.Pattern[str]:
    # Word edges by hand, since \b fails next to the "@" and ":" of a user id.
    return re.compile(rf"(?<![\w@:.\-]){re.escape(name)}(?![\w:@\-]|\.\w)", re.IGNORECASE)


def mentions_bot(
    content: Mapping[str, Any], bot_user_id: str, display_names: Iterable[str]
) -> bool:
    explicit = content.get("m.mentions")
    if isinstance(explicit, Mapping):
        user_ids = explicit.get("user_ids")
        if isinstance(user_ids, list) and bot_user_id in user_ids:
            return True
    body = content.get("body")
    if not isinstance(body, str):
        return False
    text = strip_reply_fallback(body)
    names = {bot_user_id, *(name for name in display_names if name.strip())}
    return any(_word_pattern(name.strip()).search(text) for name in names)
