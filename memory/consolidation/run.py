"""One consolidation run over the scopes that changed since the last run.

Scopes one at a time, each decision its own short transaction; the last run's start and the
facts that could not be judged are kept in the database, so an outage loses nothing.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial

from memory.consolidation.apply import apply_decision
from memory.consolidation.decisions import (
    MergeDecision,
    decisions_for_batch,
    text_duplicate_decision,
)
from memory.consolidation.judge import JudgeReplyInvalid, judge_batch
from memory.consolidation.pairs import CandidatePair, consolidation_scope, propose_pairs
from memory.embedding.base import Embedder
from memory.errors import StoreError
from memory.index.base import VectorIndex
from memory.llm.base import LanguageModel, LanguageModelError
from memory.priority import Priority
from memory.records import Actor, Fact
from memory.scope import Scope
from memory.store import Store, StoreTransaction, utc_now

log = logging.getLogger(__name__)

LAST_RUN_KEY = "consolidation.last_run"
RETRY_KEY = "consolidation.retry_fact_ids"


@dataclass(frozen=True, slots=True)
class ConsolidationSettings:
    """``candidate_threshold`` is the calibrated one from ``memory.candidate_threshold``."""

    candidate_threshold: float
    neighbours: int = 5
    # One pair a call: a small model shown ten answers the first pair's verdict for all.
    batch_size: int = 1


@dataclass
class ConsolidationReport:
    dry_run: bool
    scopes_visited: int = 0
    changed_facts: int = 0
    pairs_proposed: int = 0
    decisions: list[MergeDecision] = field(default_factory=list)
    applied: list[MergeDecision] = field(default_factory=list)
    skipped: list[MergeDecision] = field(default_factory=list)
    failed_batches: int = 0
    left_without_model: int = 0

    @property
    def merges(self) -> list[MergeDecision]:
        """Decisions that retire a fact (applied, or what a dry run would apply)."""
        return [decision for decision in self.decisions if decision.retired is not None]


@dataclass
class _Run:
    """Mutable state of one run, shared by the per-scope steps."""

    store: Store
    index: VectorIndex
    embedder: Embedder
    model: LanguageModel | None
    settings: ConsolidationSettings
    report: ConsolidationReport
    now: datetime
    retry: set[int] = field(default_factory=set)


def changed_facts(transaction: StoreTransaction) -> list[Fact]:
    """The facts changed since the last run started, and those it could not judge."""
    last_run, retry = transaction.get_setting(LAST_RUN_KEY), transaction.get_setting(RETRY_KEY)
    since = None if last_run is None else datetime.fromisoformat(last_run)
    retry_ids = [] if retry is None else [int(i) for i in json.loads(retry)]
    return transaction.facts.admin_changed_facts_since(since, also_ids=retry_ids)


def save_state(last_run: str, retry: str, transaction: StoreTransaction) -> None:
    transaction.set_setting(LAST_RUN_KEY, last_run)
    transaction.set_setting(RETRY_KEY, retry)


def by_scope(facts: Sequence[Fact]) -> Iterator[tuple[Scope, list[Fact]]]:
    groups: dict[tuple[str, str], list[Fact]] = {}
    for fact in facts:
        groups.setdefault((fact.owner, fact.room), []).append(fact)
    for group in groups.values():
        yield consolidation_scope(group[0]), group


def batches(pairs: Sequence[CandidatePair], size: int) -> Iterator[Sequence[CandidatePair]]:
    for start in range(0, len(pairs), size):
        yield pairs[start : start + size]


async def consolidate(
    store: Store,
    index: VectorIndex,
    embedder: Embedder,
    model: LanguageModel | None,
    settings: ConsolidationSettings,
    *,
    dry_run: bool = False,
    clock: Callable[[], datetime] = utc_now,
) -> ConsolidationReport:
    """Consolidate every scope changed since the last run; without a ``model`` only
    normalised-text duplicates merge; a dry run changes nothing."""
    started = clock()
    changed = await store.read(changed_facts)
    run = _Run(store, index, embedder, model, settings, ConsolidationReport(dry_run), started)
    run.report.changed_facts = len(changed)
    for scope, scope_changed in by_scope(changed):
        await consolidate_scope(run, scope, scope_changed)
        # Let replies and other tasks run between scopes.
        await asyncio.sleep(0)
    if not dry_run:
        job = partial(save_state, started.isoformat(), json.dumps(sorted(run.retry)))
        await store.write(job, priority=Priority.BACKGROUND)
    return run.report


async def consolidate_scope(run: _Run, scope: Scope, changed: Sequence[Fact]) -> None:
    run.report.scopes_visited += 1
    pairs = await propose_pairs(
        run.store,
        run.index,
        run.embedder,
        scope,
        changed,
        threshold=run.settings.candidate_threshold,
        neighbours=run.settings.neighbours,
    )
    undone = await run.store.read(
        lambda transaction: transaction.facts.undone_pairs(scope, Actor.CONSOLIDATION)
    )
    pairs = [pair for pair in pairs if pair.ids not in undone]
    run.report.pairs_proposed += len(pairs)
    decisions: list[MergeDecision] = []
    to_judge: list[CandidatePair] = []
    for pair in pairs:
        duplicate = text_duplicate_decision(pair)
        if duplicate is None:
            to_judge.append(pair)
        else:
            decisions.append(duplicate)
    decisions.extend(await judge_pairs(run, to_judge))
    run.report.decisions.extend(decisions)
    await apply_decisions(run, decisions)


async def judge_pairs(run: _Run, pairs: Sequence[CandidatePair]) -> list[MergeDecision]:
    """The model's decisions; pairs it could not judge are kept for the next run."""
    if not pairs:
        return []
    if run.model is None:
        # Similarity alone never merges: the groups overlap (design section 8).
        run.report.left_without_model += len(pairs)
        return []
    decisions: list[MergeDecision] = []
    for batch in batches(pairs, run.settings.batch_size):
        try:
            response = await judge_batch(run.model, batch)
        except (LanguageModelError, JudgeReplyInvalid) as error:
            log.warning("consolidation: %d pairs left for the next run: %s", len(batch), error)
            run.report.failed_batches += 1
            run.retry.update(fact_id for pair in batch for fact_id in pair.ids)
            continue
        decided = decisions_for_batch(batch, response)
        for ignored in decided.ignored:
            log.warning("consolidation: verdict for pair %d ignored (not shown)", ignored.pair)
        decisions.extend(decided.decisions)
    return decisions


async def apply_decisions(run: _Run, decisions: Sequence[MergeDecision]) -> None:
    retired: set[int] = set()
    for decision in decisions:
        if decision.retired is None:
            continue
        if decision.pair.ids & retired:
            # One of the two was merged away a moment ago; look again next run.
            run.report.skipped.append(decision)
            run.retry.update(decision.pair.ids - retired)
            continue
        if not run.report.dry_run:
            try:
                event = await apply_decision(run.store, run.index, decision, now=run.now)
            except StoreError as error:
                # A write of the same person's memory won the race; look again next run.
                log.warning("consolidation: pair left for the next run: %s", error)
                event = None
            if event is None:
                run.retry.update(decision.pair.ids)
                run.report.skipped.append(decision)
                continue
            run.report.applied.append(decision)
        retired.add(decision.retired.id)
