"""The labelled conversations of ``mnemo eval memory``: what is said, and the end state.

A turn carries what a right model answers (the facts, and decisions by target text), which
drives the reference model. The end state, checked without a judge model (words match case-
and accent-insensitively): ``active``, ``absent``, ``count``, ``actions``, ``dates``.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memory.errors import MemoryLayerError
from memory.write.parsing import first_error

Action = Literal["ADD", "UPDATE", "DELETE", "NONE"]
SHIPPED = "memory_cases.json"


class CaseError(MemoryLayerError):
    """The dataset file cannot be read as labelled conversations."""


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LabelledFact(Frozen):
    text: str
    category: str = "other"
    when: str | None = None


class LabelledDecision(Frozen):
    fact: str
    action: Action
    target: str | None = None


class Turn(Frozen):
    say: str
    facts: tuple[LabelledFact, ...] = ()
    decide: tuple[LabelledDecision, ...] = ()


class Expected(Frozen):
    active: tuple[tuple[str, ...], ...] = ()
    absent: tuple[str, ...] = ()
    count: int | None = None
    actions: tuple[Action, ...] | None = None
    dates: dict[str, str | None] = Field(default_factory=dict)

    @property
    def active_count(self) -> int:
        return len(self.active) if self.count is None else self.count


class Conversation(Frozen):
    id: str
    kind: str
    language: str
    turns: tuple[Turn, ...] = Field(min_length=1)
    expect: Expected


class Dataset(Frozen):
    version: int
    start: datetime
    turn_minutes: int = 60
    conversations: tuple[Conversation, ...] = Field(min_length=1)

    def turn_time(self, number: int) -> datetime:
        return self.start + timedelta(minutes=self.turn_minutes * number)


def load_memory_cases(path: Path | None = None) -> Dataset:
    """The dataset at ``path``, or the one shipped with Mnemo."""
    try:
        if path is None:
            text = resources.files("evaluation").joinpath(SHIPPED).read_text("utf-8")
        else:
            text = path.read_text(encoding="utf-8")
        dataset = Dataset.model_validate(json.loads(text))
    except OSError as error:
        raise CaseError(f"{path}: cannot be read: {error.strerror}") from error
    except ValidationError as error:
        raise CaseError(f"{path or SHIPPED}: {first_error(error, 'dataset')}") from error
    except ValueError as error:  # JSONDecodeError
        raise CaseError(f"{path or SHIPPED}: {error}") from error
    ids = [conversation.id for conversation in dataset.conversations]
    if len(set(ids)) != len(ids):
        raise CaseError(f"{path or SHIPPED}: conversation ids must be unique")
    return dataset
