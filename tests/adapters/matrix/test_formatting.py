from __future__ import annotations

import pytest

from adapters.matrix.formatting import MarkdownRenderer, split_message
from adapters.matrix.outgoing import file_content, relation, text_content


def test_markdown_is_rendered_and_raw_html_escaped() -> None:
    html = MarkdownRenderer().render("**bold** <img src=x onerror=alert(1)>\n\n- one\n- two")

    assert "<strong>bold</strong>" in html
    assert "<img" not in html
    assert "&lt;img" in html
    assert "<li>one</li>" in html


def test_short_text_is_one_part() -> None:
    assert split_message("  hello  ", 100) == ["hello"]


def test_split_prefers_paragraph_breaks() -> None:
    text = "a" * 60 + "\n\n" + "b" * 60 + "\n\n" + "c" * 10

    assert split_message(text, 100) == ["a" * 60, "b" * 60 + "\n\n" + "c" * 10]


def test_split_cuts_words_only_when_it_must() -> None:
    parts = split_message("x" * 250, 100)

    assert all(len(part) <= 100 for part in parts)
    assert "".join(parts) == "x" * 250


def test_split_code_fence_is_closed_and_reopened() -> None:
    code = "```\n" + "\n".join(f"line {n}" for n in range(30)) + "\n```"
    parts = split_message(code, 100)

    assert len(parts) > 1
    assert all(part.count("```") == 2 for part in parts)
    assert all(len(part) <= 100 for part in parts)


def test_split_rejects_a_tiny_limit() -> None:
    with pytest.raises(ValueError, match="at least 20"):
        split_message("text", 5)


def test_text_content_is_a_reply_without_pinging_anyone() -> None:
    content = text_content("*hi*", MarkdownRenderer(), reply_to_event_id="$e")

    assert content["msgtype"] == "m.text"
    assert content["body"] == "*hi*"
    assert content["format"] == "org.matrix.custom.html"
    assert content["formatted_body"] == "<p><em>hi</em></p>"
    assert content["m.mentions"] == {}
    assert content["m.relates_to"] == {"m.in_reply_to": {"event_id": "$e"}}


def test_relation_in_a_thread_and_without_reply() -> None:
    assert relation(None, None) == {}
    assert relation(None, "$root") == {
        "m.relates_to": {"rel_type": "m.thread", "event_id": "$root"}
    }


def test_file_content_plain_and_encrypted() -> None:
    plain = file_content(
        "a.json", "application/json", 3, url="mxc://s/x", encryption=None, thread_root_id=None
    )
    secret = file_content(
        "a.json",
        "application/json",
        3,
        url="mxc://s/y",
        encryption={"key": {"k": "K"}},
        thread_root_id=None,
    )

    assert plain["url"] == "mxc://s/x"
    assert "file" not in plain
    assert secret["file"] == {"key": {"k": "K"}, "url": "mxc://s/y"}
    assert "url" not in secret
