"""The reference model: a test double that answers the write path's calls from the labels.

A labelled target that was not shown gets ADD, so the end state shows the miss. Through the
real write path it must score 100%: anything less is the code's doing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from evaluation.memory_cases import (
    CaseError,
    Dataset,
    LabelledDecision,
    LabelledFact,
)
from memory.llm import CallKind, ChatMessage
from memory.write.prompts import combined

NEW_FACT = re.compile(r"^New fact (\d+): (.*)$")
EXISTING = re.compile(r"^\s+(\d+): (.*)$")


def label_maps(
    dataset: Dataset,
) -> tuple[dict[str, tuple[LabelledFact, ...]], dict[str, LabelledDecision]]:
    """Message text -> facts, new fact text -> decision; the same text must mean the same."""
    facts: dict[str, tuple[LabelledFact, ...]] = {}
    decisions: dict[str, LabelledDecision] = {}
    for conversation in dataset.conversations:
        for turn in conversation.turns:
            if facts.setdefault(turn.say, turn.facts) != turn.facts:
                raise CaseError(f"{conversation.id}: {turn.say!r} is labelled two ways")
            for decision in turn.decide:
                if decisions.setdefault(decision.fact, decision) != decision:
                    raise CaseError(f"{conversation.id}: {decision.fact!r} is decided two ways")
    return facts, decisions


def shown_items(prompt: str) -> list[tuple[int, str, list[str]]]:
    """(number, new fact, existing facts in order) as the decision prompt lists them."""
    items: list[tuple[int, str, list[str]]] = []
    for line in prompt.splitlines():
        if match := NEW_FACT.match(line):
            items.append((int(match.group(1)), match.group(2), []))
        elif (match := EXISTING.match(line)) and items:
            items[-1][2].append(match.group(2))
    return items


class ReferenceModel:
    """Implements :class:`memory.llm.LanguageModel` for the write path's JSON calls."""

    def __init__(self, dataset: Dataset) -> None:
        self._facts, self._decisions = label_maps(dataset)

    @property
    def model_name(self) -> str:
        return "reference (the dataset's labels)"

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        kind: CallKind = CallKind.REPLY,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float | None = None,
    ) -> str:
        if kind is CallKind.EXTRACTION:
            message = messages[-1].content
            if message.startswith(combined.KNOWN_HEADING):
                return self.extraction_with_decisions(message)
            return self.extraction(message)
        if kind is CallKind.DECISION:
            return self.decision(messages[1].content)
        raise CaseError(f"the reference model answers only the write path, not {kind.value}")

    def extraction(self, message: str) -> str:
        facts = self._facts.get(message)
        if facts is None:
            raise CaseError(f"no labels for the message {message!r}")
        return json.dumps({"facts": [fact.model_dump() for fact in facts]})

    def extraction_with_decisions(self, prompt: str) -> str:
        known = combined.known_of(prompt)
        answers = []
        for fact in json.loads(self.extraction(combined.message_of(prompt)))["facts"]:
            decided = self.decide_one(0, fact["text"], known)
            answers.append(fact | {"action": decided["action"], "target": decided["target"]})
        return json.dumps({"facts": answers})

    def decision(self, prompt: str) -> str:
        answers = [self.decide_one(*item) for item in shown_items(prompt)]
        return json.dumps({"decisions": answers})

    def decide_one(self, number: int, text: str, shown: list[str]) -> dict[str, Any]:
        label = self._decisions.get(text)
        if label is None or label.action == "ADD":
            return {"fact": number, "action": "ADD", "target": None}
        if label.target in shown:
            return {"fact": number, "action": label.action, "target": shown.index(label.target) + 1}
        if label.action == "NONE":
            return {"fact": number, "action": "NONE", "target": None}
        return {"fact": number, "action": "ADD", "target": None}

    async def aclose(self) -> None:
        return None
