"""The model-server double of benchmarks/stream_first_text.py frames its stream as the bot
reads it, and the recording proxy sees its first token as a token."""

from __future__ import annotations

from benchmarks.first_text_session import has_token
from benchmarks.stream_first_text import answer_tokens, sse_events
from memory.llm.openai_stream import StreamedAnswer


def test_the_bot_reads_every_token_of_the_double_and_the_end() -> None:
    tokens = answer_tokens(21)
    answer = StreamedAnswer()
    pieces = [
        answer.add_line(line)
        for event in sse_events(tokens)
        for line in event.decode().splitlines()
    ]
    assert [piece for piece in pieces if piece] == tokens
    assert answer.complete and answer.finish_reason == "stop"
    assert answer.payload()["choices"][0]["message"]["content"] == "".join(tokens)


def test_the_answer_is_words_with_a_space_between() -> None:
    text = "".join(answer_tokens(20))
    assert text.startswith("A streamed answer") and "  " not in text
    assert len(text.split(" ")) == 20


def test_the_proxy_takes_the_first_event_for_a_token_and_the_end_for_none() -> None:
    events = list(sse_events(answer_tokens(3)))
    assert [has_token(event) for event in events] == [True, True, True, False, False]
