"""Scoring ``mnemo eval memory``: each conversation's end state against its labels, and the
numbers per case kind (and language) and overall. No judge model: only word checks."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evaluation.measured_model import CallLog
from evaluation.memory_cases import Expected
from evaluation.memory_harness import ConversationResult, MemoryEvalRun
from memory.embedding.languages import looks_english
from memory.records import Fact
from memory.write.grounding import plain


@dataclass(frozen=True, slots=True)
class Score:
    """One conversation: which checks failed, and the facts missed or invented."""

    problems: tuple[str, ...]
    missed: int
    invented: int

    @property
    def passed(self) -> bool:
        return not self.problems


def contains(fact: Fact, words: Iterable[str]) -> bool:
    return all(plain(word) in plain(fact.text) for word in words)


def assign(expected: Sequence[Sequence[str]], active: Sequence[Fact]) -> list[Fact | None]:
    """For each expected fact, a distinct active fact that has its words (greedy, in order)."""
    free = list(active)
    found: list[Fact | None] = []
    for words in expected:
        match = next((fact for fact in free if contains(fact, words)), None)
        if match is not None:
            free.remove(match)
        found.append(match)
    return found


def date_problems(expect: Expected, active: Sequence[Fact]) -> list[str]:
    problems = []
    for word, day in expect.dates.items():
        fact = next((fact for fact in active if contains(fact, [word])), None)
        got = None if fact is None or fact.valid_from is None else fact.valid_from.date()
        if fact is not None and (None if got is None else got.isoformat()) != day:
            problems.append(f"valid_from of the {word!r} fact is {got}, expected {day}")
    return problems


def score(result: ConversationResult) -> Score:
    expect = result.conversation.expect
    active = list(result.active)
    found = assign(expect.active, active)
    missed = [" ".join(words) for words, fact in zip(expect.active, found, strict=True) if not fact]
    # An active fact that no expectation claimed: invented, or a wrong version of one.
    invented = len(active) - (len(found) - len(missed))
    problems = [f"missing a fact with {words!r}" for words in missed]
    if len(active) != expect.active_count:
        problems.append(f"{len(active)} active facts, expected {expect.active_count}")
    problems += [
        f"{word!r} is still in an active fact"
        for word in expect.absent
        if any(contains(fact, [word]) for fact in active)
    ]
    last = result.turns[-1]
    if expect.actions is not None and sorted(last.actions) != sorted(expect.actions):
        problems.append(f"last turn did {sorted(last.actions)}, expected {sorted(expect.actions)}")
    problems += date_problems(expect, active)
    return Score(tuple(problems), len(missed), invented)


def translated(result: ConversationResult) -> list[str]:
    """Facts kept in English from a conversation in another language: translated, where
    they must stay in the words the person wrote."""
    if result.conversation.language == "en":
        return []
    return [fact.text for fact in result.active if looks_english(fact.text)]


def group_numbers(results: Sequence[ConversationResult]) -> dict[str, Any]:
    scores = [score(result) for result in results]
    messages = sum(len(result.turns) for result in results)
    guards = Counter(guard for r in results for turn in r.turns for guard in turn.guards)
    calls = sum(turn.calls for result in results for turn in result.turns)
    return {
        "conversations": len(results),
        "messages": messages,
        "accuracy": sum(s.passed for s in scores) / len(scores) if scores else 0.0,
        "invented_per_message": sum(s.invented for s in scores) / messages if messages else 0.0,
        "missed": sum(s.missed for s in scores),
        "translated": sum(len(translated(result)) for result in results),
        "unusable_answers": sum(turn.unusable for r in results for turn in r.turns),
        "guards": dict(sorted(guards.items())),
        "calls_per_message": calls / messages if messages else 0.0,
    }


def latency(log: CallLog) -> dict[str, dict[str, float]]:
    return {
        kind.value: {
            "calls": len(durations),
            "cut": log.cut.get(kind, 0),
            "p50_seconds": float(np.percentile(durations, 50)),
            "p95_seconds": float(np.percentile(durations, 95)),
        }
        for kind, durations in sorted(log.seconds.items())
        if durations
    }


def grouped(results: Sequence[ConversationResult], key: str) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[ConversationResult]] = {}
    for result in results:
        groups.setdefault(getattr(result.conversation, key), []).append(result)
    return {name: group_numbers(members) for name, members in sorted(groups.items())}


def memory_summary(run: MemoryEvalRun) -> dict[str, Any]:
    """Overall, per kind and per language, latency per call kind, and the failures."""
    failures = {
        result.conversation.id: list(outcome.problems)
        for result in run.results
        if not (outcome := score(result)).passed
    }
    return {
        "model": run.model,
        "overall": group_numbers(run.results),
        "by_kind": grouped(run.results, "kind"),
        "by_language": grouped(run.results, "language"),
        "latency": latency(run.log),
        "failures": failures,
        "translated": {
            result.conversation.id: facts for result in run.results if (facts := translated(result))
        },
    }
