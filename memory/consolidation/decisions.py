"""From a pair and a verdict to a decision the code stands behind: a verdict only about a
pair that was shown, and the safe reading whenever the model leaves out what the code needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from memory.consolidation.judge_prompt import JudgeResponse, PairJudgement
from memory.consolidation.pairs import CandidatePair
from memory.records import Fact, FactStatus
from memory.write.grounding import says_all_of
from memory.write.negation import ends_for_the_same_people
from memory.write.normalise import normalise_text
from memory.write.relations import about_other_people

Side = Literal["A", "B"]

GUARD_TEXT_EQUAL = "normalised_text_equal"
# The side kept is the one whose words hold the other's (not the model's), or nothing merges.
GUARD_SURVIVOR_BY_WORDS = "survivor_by_words"
GUARD_WORDS_WOULD_BE_LOST = "words_would_be_lost"
GUARD_NO_VERDICT = "no_verdict"
GUARD_OTHER_PERSON = "other_person"
GUARD_BOTH_STILL_TRUE = "both_still_true"
GUARD_ENDED = "ended"


class Verdict(StrEnum):
    SAME = "same"
    REPLACES = "replaces"
    ADDS_DETAIL = "adds_detail"
    DIFFERENT = "different"


@dataclass(frozen=True, slots=True)
class MergeDecision:
    """What the code will do with one pair, and what the model said about it (raw)."""

    pair: CandidatePair
    verdict: Verdict
    keep: Side | None
    proposed_verdict: str | None
    proposed_keep: str | None
    guard: str | None

    @property
    def survivor(self) -> Fact | None:
        if self.verdict is Verdict.DIFFERENT or self.keep is None:
            return None
        return self.pair.older if self.keep == "A" else self.pair.newer

    @property
    def retired(self) -> Fact | None:
        if self.verdict is Verdict.DIFFERENT or self.keep is None:
            return None
        return self.pair.newer if self.keep == "A" else self.pair.older

    @property
    def retired_status(self) -> FactStatus:
        return FactStatus.SUPERSEDED if self.verdict is Verdict.REPLACES else FactStatus.MERGED


def text_duplicate_decision(pair: CandidatePair) -> MergeDecision | None:
    """Equal normalised texts merge without a model; the older row (with its history) stays."""
    if normalise_text(pair.older.text) != normalise_text(pair.newer.text):
        return None
    return MergeDecision(pair, Verdict.SAME, "A", None, None, GUARD_TEXT_EQUAL)


def fuller_side(pair: CandidatePair) -> Side | None:
    """The side whose text says all the other's does (the newer when each does: a
    preference turned round, or a negation in words the check cannot see), or None when
    each says something the other does not."""
    if says_all_of(pair.newer.text, pair.older.text):
        return "B"
    if says_all_of(pair.older.text, pair.newer.text):
        return "A"
    return None


def decide(pair: CandidatePair, judgement: PairJudgement | None) -> MergeDecision:
    """The code's decision for one shown pair given the model's judgement of it (or none)."""
    if judgement is None:
        return MergeDecision(pair, Verdict.DIFFERENT, None, None, None, GUARD_NO_VERDICT)
    verdict = Verdict(judgement.verdict)
    raw = (judgement.verdict, judgement.keep)
    if ends_for_the_same_people(pair.newer.text, pair.older.text):
        # "I no longer play chess" after "I play chess": the write path's DELETE of it,
        # whatever the model called the pair; the newer fact says when it stopped being so.
        guard = None if verdict is Verdict.REPLACES else GUARD_ENDED
        return MergeDecision(pair, Verdict.REPLACES, "B", *raw, guard)
    if verdict is Verdict.DIFFERENT:
        return MergeDecision(pair, verdict, None, *raw, None)
    if about_other_people(pair.newer.text, pair.older.text):
        # "I drive a Toyota" / "My wife drives a Toyota": two people, never one fact.
        return MergeDecision(pair, Verdict.DIFFERENT, None, *raw, GUARD_OTHER_PERSON)
    if verdict is Verdict.REPLACES and judgement.both_true:
        # A replacement means A is no longer true; the model said it still is.
        return MergeDecision(pair, Verdict.DIFFERENT, None, *raw, GUARD_BOTH_STILL_TRUE)
    if verdict is Verdict.REPLACES:
        # A is older by construction, so the newer value B survives.
        return MergeDecision(pair, verdict, "B", *raw, None)
    # Same or a detail: one fact is retired, so the one kept must say all it said. Small
    # models called unrelated facts "same" and kept the side without the detail.
    side = fuller_side(pair)
    if side is None:
        return MergeDecision(pair, Verdict.DIFFERENT, None, *raw, GUARD_WORDS_WOULD_BE_LOST)
    guard = None if side == judgement.keep else GUARD_SURVIVOR_BY_WORDS
    return MergeDecision(pair, verdict, side, *raw, guard)


@dataclass(frozen=True, slots=True)
class BatchDecisions:
    decisions: list[MergeDecision]
    ignored: list[PairJudgement]


def decisions_for_batch(pairs: Sequence[CandidatePair], response: JudgeResponse) -> BatchDecisions:
    """One decision per shown pair. Verdicts naming a pair that was not shown, and second
    verdicts on a pair, are ignored (returned so the caller can log them)."""
    by_number: dict[int, PairJudgement] = {}
    ignored = []
    for judgement in response.verdicts:
        if not 1 <= judgement.pair <= len(pairs) or judgement.pair in by_number:
            ignored.append(judgement)
            continue
        by_number[judgement.pair] = judgement
    decisions = [decide(pair, by_number.get(number)) for number, pair in enumerate(pairs, 1)]
    return BatchDecisions(decisions, ignored)
