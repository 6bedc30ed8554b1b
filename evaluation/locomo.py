"""The LoCoMo dataset (``locomo10.json``) as fact stores and retrieval questions (mapping in
``../shared/data/README.md``; categories 1-4 are asked).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CATEGORY_NAMES: Mapping[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
}


class DatasetError(Exception):
    """The dataset file cannot be used; the message says where and why."""


@dataclass(frozen=True, slots=True)
class Observation:
    speaker: str
    text: str
    dialog_ids: frozenset[str]


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    category: int
    relevant: frozenset[int]
    """Indexes into the conversation's observations."""
    speaker: str
    """The speaker the question is about: the one named first, else the first speaker."""


@dataclass(frozen=True, slots=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    observations: tuple[Observation, ...]
    questions: tuple[Question, ...]


def load_locomo(path: Path) -> list[Conversation]:
    """Read ``locomo10.json``; raises :class:`DatasetError` naming the file and the entry."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise DatasetError(f"{path}: cannot be read: {error.strerror}") from error
    except json.JSONDecodeError as error:
        raise DatasetError(f"{path}: not valid JSON: {error}") from error
    if not isinstance(raw, list):
        raise DatasetError(f"{path}: expected a list of conversations, got {type(raw).__name__}")
    conversations = []
    for position, entry in enumerate(raw):
        try:
            conversations.append(_conversation(entry, position))
        except (KeyError, TypeError, ValueError) as error:
            raise DatasetError(
                f"{path}: conversation {position} is not in the LoCoMo format: {error!r}"
            ) from error
    return conversations


def _conversation(entry: Mapping[str, Any], position: int) -> Conversation:
    speakers = (str(entry["conversation"]["speaker_a"]), str(entry["conversation"]["speaker_b"]))
    observations = tuple(_observations(entry["observation"]))
    questions = tuple(
        question
        for item in entry["qa"]
        if (question := _question(item, observations, speakers)) is not None
    )
    return Conversation(str(entry.get("sample_id", position)), speakers, observations, questions)


def _observations(sessions: Mapping[str, Mapping[str, Sequence[Any]]]) -> list[Observation]:
    observations = []
    for per_speaker in sessions.values():
        for speaker, items in per_speaker.items():
            for text, dialog_ids in items:
                # A few entries hold a list of ids instead of one id.
                ids = dialog_ids if isinstance(dialog_ids, list) else [dialog_ids]
                observations.append(Observation(speaker, str(text), frozenset(map(str, ids))))
    return observations


def _question(
    item: Mapping[str, Any], observations: Sequence[Observation], speakers: tuple[str, str]
) -> Question | None:
    category = int(item["category"])
    if category not in CATEGORY_NAMES:
        return None
    evidence = frozenset(map(str, item.get("evidence", [])))
    relevant = frozenset(
        index for index, observation in enumerate(observations) if observation.dialog_ids & evidence
    )
    if not relevant:
        return None
    text = str(item["question"])
    return Question(text, category, relevant, _named_speaker(text, speakers))


def _named_speaker(text: str, speakers: tuple[str, str]) -> str:
    positions = [(text.find(name), name) for name in speakers if name in text]
    return min(positions)[1] if positions else speakers[0]
