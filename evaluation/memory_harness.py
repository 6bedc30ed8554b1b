"""``mnemo eval memory``: labelled conversations through the real write path.

One store holds every conversation, each said by its own person; every turn goes through
``plan_message`` and ``commit`` as the queue worker runs them. An unusable answer is counted
and left; any other model error stops the run.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from evaluation.measured_model import CallLog, MeasuredModel
from evaluation.memory_cases import Conversation, Dataset
from memory.embedding.base import Embedder
from memory.index.lance import LanceFactIndex
from memory.llm import LanguageModel
from memory.records import Fact, FactSource
from memory.scope import Scope
from memory.store import Store
from memory.write.errors import UnusableModelOutput
from memory.write.guards import Guard
from memory.write.pipeline import (
    MessageInput,
    PipelineSettings,
    WriteOutcome,
    WriteParts,
    commit,
    plan_message,
)

# Writes the code kept out of the store: not actions of the model's facts. By value, so that
# the "before" measurement can run this harness on a write path that has no grounding.
KEPT_OUT = frozenset({"ungrounded", "repeated_in_message"})
PLATFORM = "eval"


@dataclass(frozen=True, slots=True)
class TurnResult:
    actions: tuple[str, ...]
    guards: tuple[str, ...]
    calls: int
    unusable: bool = False


@dataclass(frozen=True, slots=True)
class ConversationResult:
    conversation: Conversation
    turns: tuple[TurnResult, ...]
    active: tuple[Fact, ...]


@dataclass
class MemoryEvalRun:
    model: str
    results: list[ConversationResult] = field(default_factory=list)
    log: CallLog = field(default_factory=CallLog)


def scope_of(conversation: Conversation) -> Scope:
    return Scope(f"{PLATFORM}:{conversation.id}", f"{PLATFORM}:room")


def turn_result(outcome: WriteOutcome, calls: int) -> TurnResult:
    kept = [write for write in outcome.writes if write.guard not in KEPT_OUT]
    guards = [write.guard for write in outcome.writes if write.guard is not None]
    return TurnResult(tuple(write.action.value for write in kept), tuple(guards), calls)


async def run_turn(parts: WriteParts, measured: MeasuredModel, message: MessageInput) -> TurnResult:
    before = measured.log.calls
    try:
        # As the queue worker writes it (without a queue row).
        plan = await plan_message(parts, message)
        outcome = await commit(parts, message, FactSource.EXTRACTED, plan)
    except UnusableModelOutput:
        calls = measured.log.calls - before
        return TurnResult((), (Guard.UNUSABLE_OUTPUT.value,), calls, unusable=True)
    return turn_result(outcome, measured.log.calls - before)


async def run_conversation(
    parts: WriteParts, measured: MeasuredModel, dataset: Dataset, conversation: Conversation
) -> ConversationResult:
    scope = scope_of(conversation)
    turns = []
    for number, turn in enumerate(conversation.turns):
        time: datetime = dataset.turn_time(number)
        message = MessageInput(scope, turn.say, time, f"{conversation.id}/{number}")
        turns.append(await run_turn(parts, measured, message))
    active = await parts.store.read(lambda transaction: transaction.facts.list_in_scope(scope))
    return ConversationResult(conversation, tuple(turns), tuple(active))


async def run_memory_evaluation(
    dataset: Dataset,
    llm: LanguageModel,
    embedder: Embedder,
    settings: PipelineSettings,
    *,
    work_directory: Path | None = None,
    on_conversation: Callable[[ConversationResult], None] = lambda _: None,
) -> MemoryEvalRun:
    """Every conversation of ``dataset`` through the write path with ``llm``."""
    measured = MeasuredModel(llm)
    run = MemoryEvalRun(llm.model_name, log=measured.log)
    dimension = int((await embedder.embed(["dimension probe"])).shape[1])
    with tempfile.TemporaryDirectory(dir=work_directory, prefix="mnemo-eval-memory-") as folder:
        store = await Store.open(Path(folder) / "mnemo.sqlite3")
        index = await LanceFactIndex.open(Path(folder) / "index", dimension=dimension)
        parts = WriteParts(store, index, embedder, measured, settings)
        try:
            for conversation in dataset.conversations:
                result = await run_conversation(parts, measured, dataset, conversation)
                run.results.append(result)
                on_conversation(result)
        finally:
            await index.aclose()
            await store.aclose()
    return run
