"""The code's reading of a verdict, and the judge prompt, without a database."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.consolidation import PairJudgement, Verdict
from memory.consolidation.decisions import decide, text_duplicate_decision
from memory.consolidation.judge_prompt import PROMPT_VERSION, build_judge_messages
from memory.consolidation.pairs import CandidatePair, chronological
from memory.records import Fact, FactSource, FactStatus
from memory.write.normalise import normalise_text


def fact(fact_id: int, text: str, day: int) -> Fact:
    moment = datetime(2026, 3, day, tzinfo=UTC)
    return Fact(
        fact_id, "console:alice", "console:dm", text, "general", FactStatus.ACTIVE,
        FactSource.STATED, moment, moment, None, None, None, None,
    )  # fmt: skip


SHORT = fact(10, "I have a dog", 1)
LONG = fact(11, "I have a dog named Rex, a beagle", 2)
PAIR = CandidatePair(SHORT, LONG, 0.8)


def test_same_with_a_side_keeps_that_side() -> None:
    decision = decide(
        PAIR, PairJudgement(pair=1, same_thing=True, both_true=True, verdict="same", keep="B")
    )
    assert (decision.survivor, decision.retired, decision.guard) == (LONG, SHORT, None)
    assert decision.retired_status is FactStatus.MERGED


def test_same_without_a_side_keeps_the_side_that_says_both() -> None:
    decision = decide(PAIR, PairJudgement(pair=1, same_thing=True, both_true=True, verdict="same"))
    assert (decision.survivor, decision.guard) == (LONG, "survivor_by_words")


def test_the_side_without_the_detail_is_never_kept() -> None:
    # The 0.5B model answered "same, keep A" for nearly every pair, details included.
    judged = PairJudgement(pair=1, same_thing=True, both_true=True, verdict="same", keep="A")
    decision = decide(PAIR, judged)
    assert (decision.survivor, decision.retired, decision.guard) == (
        LONG,
        SHORT,
        "survivor_by_words",
    )


def test_adds_detail_without_a_side_keeps_the_detail() -> None:
    decision = decide(
        PAIR, PairJudgement(pair=1, same_thing=True, both_true=True, verdict="adds_detail")
    )
    assert (decision.verdict, decision.survivor, decision.retired) == (
        Verdict.ADDS_DETAIL,
        LONG,
        SHORT,
    )


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("I play the guitar", "My car is black"),  # the 0.5B model: "same"
        ("I have two cats", "I have three cats"),
        ("I live in Lyon", "I moved to Marseille"),
        ("I have a cat named Tom", "I have a dog named Tom"),
        # Numbers are compared whole, also with letters in them (not by their first four).
        ("My flight leaves at 10h30", "My flight leaves at 10h35"),
    ],
)
def test_a_merge_that_would_lose_words_of_either_fact_is_not_made(older: str, newer: str) -> None:
    pair = CandidatePair(fact(30, older, 1), fact(31, newer, 2), 0.7)
    for verdict in ("same", "adds_detail"):
        for keep in ("A", "B", None):
            judged = PairJudgement(
                pair=1, same_thing=True, both_true=True, verdict=verdict, keep=keep
            )
            decision = decide(pair, judged)
            assert (decision.verdict, decision.retired, decision.guard) == (
                Verdict.DIFFERENT,
                None,
                "words_would_be_lost",
            )


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("I live in Paris", "Now I live in Paris"),
        # What the 0.5B model merged into the older side, its newer value lost:
        ("I prefer tea over coffee", "I prefer coffee over tea now"),
        ("私はお酒を飲みます", "私はもうお酒を飲みません"),
    ],
)
def test_two_facts_of_the_same_words_keep_the_newer(older: str, newer: str) -> None:
    pair = CandidatePair(fact(40, older, 1), fact(41, newer, 2), 0.9)
    judged = PairJudgement(pair=1, same_thing=True, both_true=True, verdict="same", keep="A")
    decision = decide(pair, judged)
    assert (decision.survivor.text if decision.survivor else None, decision.guard) == (
        newer,
        "survivor_by_words",
    )


@pytest.mark.parametrize("verdict", ["same", "replaces", "adds_detail"])
def test_facts_about_two_people_are_never_merged(verdict: str) -> None:
    # What both real models answered for this pair of the shipped pairs file.
    mine = fact(20, "I drive a Toyota Corolla", 1)
    wifes = fact(21, "My wife drives a Toyota Corolla", 2)
    judged = PairJudgement(pair=1, same_thing=True, both_true=False, verdict=verdict, keep="B")
    decision = decide(CandidatePair(mine, wifes, 0.83), judged)
    assert (decision.verdict, decision.retired, decision.guard) == (
        Verdict.DIFFERENT,
        None,
        "other_person",
    )
    assert decision.proposed_verdict == verdict


def test_replaces_always_keeps_the_newer_and_supersedes() -> None:
    decision = decide(
        PAIR, PairJudgement(pair=1, same_thing=True, both_true=False, verdict="replaces", keep="A")
    )
    assert (decision.survivor, decision.retired) == (LONG, SHORT)
    assert decision.retired_status is FactStatus.SUPERSEDED
    assert decision.proposed_keep == "A"


def test_a_pair_without_a_verdict_is_left_alone() -> None:
    decision = decide(PAIR, None)
    assert (decision.verdict, decision.guard, decision.retired) == (
        Verdict.DIFFERENT,
        "no_verdict",
        None,
    )


def test_text_duplicates_keep_the_older_row() -> None:
    pair = CandidatePair(fact(1, "I like tea.", 1), fact(2, "i like TEA", 2), 0.99)
    decision = text_duplicate_decision(pair)
    assert decision is not None
    assert (decision.survivor, decision.guard) == (pair.older, "normalised_text_equal")
    assert (
        text_duplicate_decision(CandidatePair(fact(1, "I am 34", 1), fact(2, "I am 35", 2), 0.94))
        is None
    )


@pytest.mark.parametrize(
    ("first", "second", "equal"),
    [
        ("I like tea.", "i like  TEA", True),
        ("I\u2019m a nurse", "I'm a nurse!", True),
        ("I'm 34 years old", "I'm 35 years old", False),
        ("I drive a Toyota", "My wife drives a Toyota", False),
    ],
)
def test_normalised_text(first: str, second: str, equal: bool) -> None:
    assert (normalise_text(first) == normalise_text(second)) is equal


def test_chronological_order_uses_when_the_fact_became_true() -> None:
    assert chronological(LONG, SHORT) == (SHORT, LONG)


def test_the_prompt_numbers_pairs_and_dates_both_sides() -> None:
    messages = build_judge_messages(
        [(SHORT.text, SHORT.created_at, LONG.text, LONG.created_at)] * 2
    )
    assert PROMPT_VERSION.startswith("consolidation-judge/")
    assert messages[0].role == "system" and "adds_detail" in messages[0].content
    assert "Pair 1\nA (2026-03-01): I have a dog\nB (2026-03-02): I have a dog named Rex" in (
        messages[1].content
    )
    assert "Pair 2\n" in messages[1].content


@pytest.mark.parametrize("verdict", ["different", "same", "adds_detail"])
def test_a_fact_that_says_the_older_one_stopped_replaces_it(verdict: str) -> None:
    # The 1.5B model, asked about this pair of the shipped pairs file alone, answered "different".
    older, newer = fact(30, "Ich trinke Kaffee", 1), fact(31, "Ich trinke keinen Kaffee mehr", 2)
    judged = PairJudgement(pair=1, same_thing=False, both_true=False, verdict=verdict)
    decision = decide(CandidatePair(older, newer, 0.8), judged)
    assert (decision.verdict, decision.survivor, decision.retired, decision.guard) == (
        Verdict.REPLACES,
        newer,
        older,
        "ended",
    )
    assert decision.proposed_verdict == verdict


def test_a_stop_said_of_someone_else_replaces_nothing() -> None:
    mine, hers = fact(32, "I play chess", 1), fact(33, "My sister no longer plays chess", 2)
    judged = PairJudgement(pair=1, same_thing=True, both_true=False, verdict="different")
    assert decide(CandidatePair(mine, hers, 0.7), judged).retired is None


def test_a_replacement_the_model_says_leaves_both_true_retires_nothing() -> None:
    older, newer = fact(40, "I'm allergic to peanuts", 1), fact(41, "I'm allergic to cats", 2)
    judged = PairJudgement(pair=1, same_thing=True, both_true=True, verdict="replaces")
    decision = decide(CandidatePair(older, newer, 0.66), judged)
    assert (decision.verdict, decision.retired, decision.guard) == (
        Verdict.DIFFERENT,
        None,
        "both_still_true",
    )
