"""Splitting long replies into Discord-sized messages."""

from __future__ import annotations

import pytest

from adapters.discord.splitting import (
    DISCORD_MESSAGE_LIMIT,
    discord_length,
    open_fence,
    split_message,
)


def test_short_text_is_one_message() -> None:
    assert split_message("hello there") == ["hello there"]


def test_blank_text_is_no_message() -> None:
    assert split_message("  \n\n ") == []


def test_every_piece_fits_and_nothing_is_lost() -> None:
    paragraph = "This sentence is part of a long answer about tea. " * 12
    text = "\n\n".join(paragraph.strip() for _ in range(10))
    pieces = split_message(text)
    assert len(pieces) > 1
    assert all(discord_length(piece) <= DISCORD_MESSAGE_LIMIT for piece in pieces)
    assert " ".join(" ".join(pieces).split()) == " ".join(text.split())


def test_cuts_fall_on_line_breaks_when_there_are_some() -> None:
    lines = [f"line {number:04d} " + "x" * 40 for number in range(100)]
    pieces = split_message("\n".join(lines))
    for piece in pieces:
        for line in piece.split("\n"):
            assert line in lines


def test_cuts_fall_between_words_without_line_breaks() -> None:
    words = [f"word{number}" for number in range(800)]
    pieces = split_message(" ".join(words))
    assert len(pieces) > 1
    for piece in pieces:
        assert all(word in words for word in piece.split(" "))


def test_one_huge_word_is_cut_hard() -> None:
    pieces = split_message("a" * 4500)
    assert [len(piece) for piece in pieces] == [1996, 1996, 508]


def test_code_block_is_closed_and_reopened_with_its_language() -> None:
    code = "\n".join(f"value_{number} = {number} * 2" for number in range(200))
    text = f"Here is the script:\n```python\n{code}\n```\nThat is all."
    pieces = split_message(text)
    assert len(pieces) > 1
    for piece in pieces:
        assert piece.count("```") % 2 == 0, piece[-60:]
        assert open_fence(piece) is None
        assert discord_length(piece) <= DISCORD_MESSAGE_LIMIT
    assert all(piece.startswith("```python\n") for piece in pieces[1:-1])
    joined = "\n".join(pieces).replace("\n```\n```python", "")
    assert all(f"value_{number} = {number} * 2" in joined for number in range(200))


def test_emoji_count_as_two_units_like_discord_counts_them() -> None:
    text = "🙂" * 1500  # 1,500 code points, 3,000 UTF-16 units
    pieces = split_message(text)
    assert len(pieces) == 2
    assert all(discord_length(piece) <= DISCORD_MESSAGE_LIMIT for piece in pieces)
    assert "".join(pieces) == text


def test_open_fence_sees_a_block_left_open() -> None:
    assert open_fence("text\n```js\nlet a = 1") == "```js"
    assert open_fence("text\n```js\nlet a = 1\n```") is None
    assert open_fence("inline ```code``` stays closed") is None


def test_a_limit_too_small_for_fences_is_refused() -> None:
    with pytest.raises(ValueError, match="too small"):
        split_message("text", limit=10)
