"""Split a long reply into Discord-sized messages.

Cuts fall on line breaks, then on spaces, and only as a last resort inside a word. A code
block cut in two is closed at the end of one message and reopened (with its language) at
the start of the next, so each message renders on its own.

Length is counted in UTF-16 code units, the way Discord's JavaScript counts it: an emoji
outside the Basic Multilingual Plane counts as two, and counting code points would let such
messages slip over the limit and be rejected.
"""

from __future__ import annotations

DISCORD_MESSAGE_LIMIT = 2000
FENCE = "```"
FENCE_CLOSE = "\n" + FENCE
MAX_FENCE_OPENER = 24


def discord_length(text: str) -> int:
    """Length as Discord counts it (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def split_message(text: str, limit: int = DISCORD_MESSAGE_LIMIT) -> list[str]:
    """``text`` as messages of at most ``limit`` units each; ``[]`` for blank text."""
    if limit < 2 * len(FENCE_CLOSE) + 20:
        raise ValueError(f"limit {limit} is too small to split messages with code blocks")
    chunks: list[str] = []
    reopen = ""
    remaining = text.strip("\n")
    while remaining.strip():
        body = reopen + remaining
        if discord_length(body) <= limit:
            chunks.append(body)
            break
        chunk, rest = _take_chunk(body, limit - len(FENCE_CLOSE), start=len(reopen))
        opener = open_fence(chunk)
        if opener is not None:
            chunk = chunk.rstrip("\n") + FENCE_CLOSE
        if chunk.strip():
            chunks.append(chunk)
        reopen = "" if opener is None else _reopening(opener)
        remaining = rest
    return chunks


def _reopening(opener: str) -> str:
    # A language tag is a short word; anything longer is not worth repeating (and could
    # not leave room for the text itself).
    return (opener if len(opener) <= MAX_FENCE_OPENER else FENCE) + "\n"


def _take_chunk(body: str, budget: int, *, start: int) -> tuple[str, str]:
    """The head of ``body`` within ``budget`` units, cut at the best boundary, and the rest.

    ``start`` protects a reopened fence at the head from being the whole chunk.
    """
    end = _prefix_fitting(body, budget)
    newline = body.rfind("\n", start + 1, end + 1)
    space = body.rfind(" ", start + 1, end + 1)
    # A line break in the second half keeps paragraphs whole; otherwise a word boundary
    # wastes less room than a line break near the start of the window.
    if newline > end // 2:
        return body[:newline], body[newline + 1 :]
    if space > start:
        return body[:space], body[space + 1 :]
    if newline > start:
        return body[:newline], body[newline + 1 :]
    return body[:end], body[end:]


def _prefix_fitting(body: str, budget: int) -> int:
    """The largest index ``i`` such that ``body[:i]`` is at most ``budget`` units long."""
    used = 0
    for index, character in enumerate(body):
        used += 2 if ord(character) > 0xFFFF else 1
        if used > budget:
            return index
    return len(body)


def open_fence(text: str) -> str | None:
    """The opening line (e.g. ```` ```python ````) of a code block left open in ``text``."""
    opener: str | None = None
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped.startswith(FENCE):
            continue
        if opener is not None:
            opener = None
        elif stripped.count(FENCE) == 1:
            opener = stripped
    return opener
