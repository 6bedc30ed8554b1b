"""Mentions, relations and the allow list: the pure parts of deciding what a message is."""

from __future__ import annotations

import pytest

from adapters.matrix.allowlist import AllowList
from adapters.matrix.mentions import mentions_bot, strip_reply_fallback
from adapters.matrix.relations import Relations, relations_of

BOT = "@ai:example.org"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("AI, what's the time?", True),
        ("hey @ai:example.org how are you", True),
        ("ask ai.", True),
        ("let's try again", False),
        ("I said so", False),
        ("@ai:example.org.evil.com hello", False),
        ("mail ai@example.org", False),
        ("email.ai is a domain", False),
    ],
)
def test_plain_text_fallback_matches_whole_words_only(body: str, expected: bool) -> None:
    assert mentions_bot({"body": body}, BOT, ["AI"]) is expected


def test_m_mentions_counts_even_when_the_text_does_not_name_the_bot() -> None:
    content = {"body": "hello there", "m.mentions": {"user_ids": [BOT]}}
    assert mentions_bot(content, BOT, ["AI"])
    assert not mentions_bot({"body": "hello", "m.mentions": {"user_ids": ["@x:y"]}}, BOT, ["AI"])


def test_quoted_reply_fallback_does_not_count_as_a_mention() -> None:
    body = "> <@bob:example.org> AI is great\n\nI disagree"
    assert strip_reply_fallback(body) == "I disagree"
    assert not mentions_bot({"body": body}, BOT, ["AI"])


def test_relations_reply_thread_and_edit() -> None:
    reply = {"m.relates_to": {"m.in_reply_to": {"event_id": "$a"}}}
    thread_fallback = {
        "m.relates_to": {
            "rel_type": "m.thread",
            "event_id": "$root",
            "is_falling_back": True,
            "m.in_reply_to": {"event_id": "$last"},
        }
    }
    thread_reply = {
        "m.relates_to": {
            "rel_type": "m.thread",
            "event_id": "$root",
            "m.in_reply_to": {"event_id": "$bot"},
        }
    }
    edit = {"m.relates_to": {"rel_type": "m.replace", "event_id": "$a"}}

    assert relations_of({}) == Relations()
    assert relations_of(reply) == Relations(reply_to_event_id="$a")
    assert relations_of(thread_fallback) == Relations(thread_root_id="$root")
    assert relations_of(thread_reply) == Relations("$bot", "$root")
    assert relations_of(edit).is_edit
    assert relations_of({"m.relates_to": "junk"}) == Relations()


def test_allow_list_patterns() -> None:
    allowed = AllowList(("@*:example.org", "@bob:other.net"))

    assert allowed.allows("@alice:example.org")
    assert allowed.allows("@bob:other.net")
    assert not allowed.allows("@bob:other.net.evil")
    assert not allowed.allows("@alice:example.org.evil")
    assert not allowed.allows("@carol:other.net")
    assert not AllowList(()).allows("@alice:example.org")
