"""Answers as Matrix messages: Markdown rendered to ``formatted_body``, long text split."""

from __future__ import annotations

from markdown_it import MarkdownIt

HTML_FORMAT = "org.matrix.custom.html"


class MarkdownRenderer:
    """CommonMark with tables and strikethrough. Raw HTML in the text is escaped, not passed
    through: the text comes from an LLM that may echo whatever a user or web page said."""

    def __init__(self) -> None:
        self._markdown = MarkdownIt("commonmark", {"html": False, "breaks": True}).enable(
            ["table", "strikethrough"]
        )

    def render(self, text: str) -> str:
        html: str = self._markdown.render(text)
        return html.strip()


def split_message(text: str, limit: int) -> list[str]:
    """Cut ``text`` into parts of at most ``limit`` characters.

    Cuts at a paragraph break if one is in the second half of the part, else at a line
    break, else at a space, else mid-word; a code fence cut in two is closed and reopened so
    both parts render as code.
    """
    if limit < 20:
        raise ValueError("limit must be at least 20 characters")
    parts: list[str] = []
    remaining = text.strip()
    while len(remaining) > limit:
        cut = _cut_position(remaining, limit - 4)
        head, remaining = remaining[:cut].rstrip(), remaining[cut:].lstrip("\n ")
        if head.count("```") % 2 == 1:
            head += "\n```"
            remaining = "```\n" + remaining
        parts.append(head)
    if remaining:
        parts.append(remaining)
    return parts


def _cut_position(text: str, limit: int) -> int:
    for separator in ("\n\n", "\n", " "):
        position = text.rfind(separator, 0, limit)
        if position > limit // 2:
            return position
    return limit
