"""The write package's public names and the MemoryWriter contract other modules code against."""

from __future__ import annotations

import inspect

import memory.write
from memory.write import MemoryWriter, WriteSettings


def test_public_names() -> None:
    assert sorted(memory.write.__all__) == [
        "Accepted",
        "AppliedWrite",
        "Guard",
        "MemoryWriter",
        "UndoResult",
        "UnusableModelOutput",
        "WriteError",
        "WriteOutcome",
        "WriteSettings",
        "may_hold_fact",
        "normalise_text",
    ]
    assert all(hasattr(memory.write, name) for name in memory.write.__all__)


def test_writer_methods_and_parameters() -> None:
    expected = {
        "accept": [
            "scope",
            "text",
            "message_time",
            "platform_message_id",
            "author_name",
            "audience",
        ],
        "correct": ["owner", "room", "turn_id", "message_id", "text", "learn"],
        "erase_message": ["owner", "rooms", "message_id"],
        "retry_due": [],
        "drain": [],
        "remember": ["scope", "text"],
        "forget": ["scope", "fact_id"],
        "forget_all": ["scope"],
        "undo": ["scope"],
        "history": ["scope", "fact_id"],
        "aclose": [],
    }
    for name, parameters in expected.items():
        method = getattr(MemoryWriter, name)
        assert inspect.iscoroutinefunction(method), name
        assert list(inspect.signature(method).parameters)[1:] == parameters, name


def test_write_settings_defaults() -> None:
    settings = WriteSettings()
    assert (
        settings.pipeline.candidate_threshold,
        settings.pipeline.candidate_limit,
        settings.pipeline.max_destructive_actions,
        settings.retry_base_seconds,
        settings.retry_max_seconds,
    ) == (0.3, 5, 3, 30.0, 3600.0)
