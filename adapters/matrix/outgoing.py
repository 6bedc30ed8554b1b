"""Event content for the bot's messages: Matrix replies, threads, formatted bodies, edits,
files."""

from __future__ import annotations

from typing import Any

from adapters.matrix.formatting import HTML_FORMAT, MarkdownRenderer


def relation(reply_to_event_id: str | None, thread_root_id: str | None) -> dict[str, Any]:
    """``m.relates_to`` for an answer: in the thread if asked in one, else a plain reply."""
    if thread_root_id is not None:
        related: dict[str, Any] = {"rel_type": "m.thread", "event_id": thread_root_id}
        if reply_to_event_id is not None:
            related["m.in_reply_to"] = {"event_id": reply_to_event_id}
            related["is_falling_back"] = False
        return {"m.relates_to": related}
    if reply_to_event_id is not None:
        return {"m.relates_to": {"m.in_reply_to": {"event_id": reply_to_event_id}}}
    return {}


def text_content(
    text: str,
    renderer: MarkdownRenderer,
    *,
    reply_to_event_id: str | None = None,
    thread_root_id: str | None = None,
    notice: bool = False,
) -> dict[str, Any]:
    return {
        "msgtype": "m.notice" if notice else "m.text",
        "body": text,
        "format": HTML_FORMAT,
        "formatted_body": renderer.render(text),
        # An explicit empty m.mentions: quoting a person's words must not ping anyone.
        "m.mentions": {},
        **relation(reply_to_event_id, thread_root_id),
    }


def edit_content(event_id: str, text: str, renderer: MarkdownRenderer) -> dict[str, Any]:
    """An ``m.replace`` of the bot's message ``event_id`` with ``text``: clients show the new
    content in place of the old; ``body`` with a leading ``*`` is for those that do not."""
    new_content = text_content(text, renderer)
    return {
        "msgtype": "m.text",
        "body": f"* {text}",
        "format": HTML_FORMAT,
        "formatted_body": f"* {new_content['formatted_body']}",
        "m.new_content": new_content,
        "m.mentions": {},
        "m.relates_to": {"rel_type": "m.replace", "event_id": event_id},
    }


def file_content(
    filename: str,
    media_type: str,
    size: int,
    *,
    url: str,
    encryption: dict[str, Any] | None,
    thread_root_id: str | None,
) -> dict[str, Any]:
    content: dict[str, Any] = {
        "msgtype": "m.file",
        "body": filename,
        "filename": filename,
        "info": {"mimetype": media_type, "size": size},
        **relation(None, thread_root_id),
    }
    if encryption is None:
        content["url"] = url
    else:
        content["file"] = {**encryption, "url": url}
    return content
