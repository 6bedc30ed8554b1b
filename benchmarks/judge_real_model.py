"""The consolidation judge against a REAL model: the shipped labelled pairs, judged in batches
as consolidation sends them, and what the code then does with each verdict.

    MNEMO_DEV_LLM=1.5b ../shared/llm/serve.sh 18436
    .venv/bin/python -m benchmarks.judge_real_model --base-url http://127.0.0.1:18436/v1 \
        --model qwen2.5-coder-1.5b-instruct

The pairs are `evaluation/calibration/pairs.csv` (138 pairs in six languages, each labelled with
its relation), shuffled with a fixed seed and sent as consolidation sends them (one pair a
call; ``--batch`` for more) through :func:`memory.consolidation.judge.judge_batch` and
:func:`memory.consolidation.decisions.decisions_for_batch`, so the guards apply as they do in
a run. Counted per relation: the code's decision was right; a wrong merge (two facts became
one, or one was retired: a memory lost); a merge that kept the side without the detail. In a
real run only pairs above the candidate threshold reach the judge; all are sent here.

``--record FILE`` keeps the model's raw answers (one JSON line per call); ``--replay FILE``
scores them again without a server, so a change to the code's guards is measured on the same
answers (a change to the prompt needs the model again).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.real_model import server_arguments
from evaluation.calibration.pairs import LabelledPair, default_pairs_path, load_pairs
from memory.consolidation.decisions import MergeDecision, Verdict, decisions_for_batch
from memory.consolidation.judge import JudgeReplyInvalid, judge_batch
from memory.consolidation.pairs import CandidatePair
from memory.consolidation.run import ConsolidationSettings
from memory.llm.base import AnswerCut, CallKind, ChatMessage, LanguageModel
from memory.llm.openai_backend import OpenAILanguageModel
from memory.llm.scripted import ScriptedLanguageModel
from memory.records import Fact, FactSource, FactStatus

BATCH = ConsolidationSettings(candidate_threshold=0.0).batch_size
# The verdict the code must reach for each relation of the pairs file.
EXPECTED = {
    "same": Verdict.SAME,
    "detail": Verdict.ADDS_DETAIL,
    "update": Verdict.REPLACES,
    "negation": Verdict.REPLACES,
    "different": Verdict.DIFFERENT,
    "unrelated": Verdict.DIFFERENT,
}
TOLD = datetime(2026, 11, 1, tzinfo=UTC)


@dataclass
class RecordingModel:
    """Forwards every call to ``model`` and keeps its raw answer (or that it was cut),
    appended to ``path`` as it comes, so a run stopped midway keeps what it had."""

    model: LanguageModel
    path: Path | None = None
    answers: list[dict[str, Any]] = field(default_factory=list)

    @property
    def model_name(self) -> str:
        return self.model.model_name

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        kind: CallKind = CallKind.REPLY,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float | None = None,
    ) -> str:
        try:
            reply = await self.model.complete(
                messages, kind=kind, json_schema=json_schema, temperature=temperature
            )
        except AnswerCut as cut:
            self.keep({"cut": cut.budget, "text": cut.text})
            raise
        self.keep({"text": reply})
        return reply

    def keep(self, answer: dict[str, Any]) -> None:
        self.answers.append(answer)
        if self.path is not None:
            with self.path.open("a", encoding="utf-8") as file:
                file.write(json.dumps(answer, ensure_ascii=False) + "\n")

    async def aclose(self) -> None:
        await self.model.aclose()


def replayed(path: Path) -> ScriptedLanguageModel:
    """A model that gives the answers recorded in ``path`` again, in order."""
    steps: list[Any] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        answer = json.loads(line)
        cut = answer.get("cut")
        steps.append(
            answer["text"] if cut is None else AnswerCut(CallKind.JUDGE, cut, answer["text"])
        )
    return ScriptedLanguageModel(steps, name=f"replay of {path.name}")


def fact(number: int, text: str, told: datetime) -> Fact:
    return Fact(
        number, "matrix:alice", "matrix:dm", text, "other", FactStatus.ACTIVE,
        FactSource.EXTRACTED, told, None, None, None, None, None,
    )  # fmt: skip


def candidate(number: int, labelled: LabelledPair) -> CandidatePair:
    older = fact(2 * number + 1, labelled.first, TOLD)
    newer = fact(2 * number + 2, labelled.second, TOLD + timedelta(days=30))
    return CandidatePair(older, newer, similarity=0.5)


def outcome(labelled: LabelledPair, decision: MergeDecision) -> str:
    """``right``, ``lost`` (a memory lost by a wrong merge or retirement, also the newer
    value of an update merged into the older), ``lost detail`` (merged, but the survivor is
    the side without the detail), ``wrong kind`` or ``missed``."""
    expected = EXPECTED[labelled.group]
    if decision.verdict is Verdict.DIFFERENT:
        return "right" if expected is Verdict.DIFFERENT else "missed"
    if expected is Verdict.DIFFERENT:
        return "lost"
    survivor = decision.survivor
    if expected is Verdict.REPLACES and survivor is not None and survivor.text != labelled.second:
        return "lost"
    if labelled.group == "detail" and survivor is not None and survivor.text != labelled.second:
        return "lost detail"
    return "right" if decision.verdict is expected else "wrong kind"


async def judge_all(
    model: LanguageModel, pairs: Sequence[LabelledPair], batch: int = BATCH
) -> tuple[dict[str, Counter[str]], list[float]]:
    tallies: dict[str, Counter[str]] = {group: Counter() for group in EXPECTED}
    seconds = []
    for start in range(0, len(pairs), batch):
        labelled = pairs[start : start + batch]
        shown = [candidate(start + n, pair) for n, pair in enumerate(labelled)]
        began = time.perf_counter()
        try:
            response = await judge_batch(model, shown)
        except JudgeReplyInvalid as error:
            print(f"  batch {start // batch}: unusable answer ({error})")
            for pair in labelled:
                tallies[pair.group]["unusable"] += 1
            continue
        finally:
            seconds.append(time.perf_counter() - began)
        for pair, decision in zip(
            labelled, decisions_for_batch(shown, response).decisions, strict=True
        ):
            result = outcome(pair, decision)
            tallies[pair.group][result] += 1
            if result != "right":
                print(f"  {pair.group}/{pair.language} {result}: {pair.first!r} / "
                      f"{pair.second!r} -> {decision.verdict} keep {decision.keep}")  # fmt: skip
    return tallies, seconds


def report(model: str, tallies: dict[str, Counter[str]], seconds: list[float]) -> None:
    columns = ("right", "missed", "lost", "lost detail", "wrong kind", "unusable")
    total = sum(tallies.values(), Counter())
    print(f"model {model}: {total.total()} pairs in {len(seconds)} calls, "
          f"{sum(seconds):.0f} s ({max(seconds):.1f} s the longest call)")  # fmt: skip
    print("| relation | pairs | " + " | ".join(columns) + " |")
    print("|---|---|" + "---|" * len(columns))
    for group, tally in [*tallies.items(), ("all", total)]:
        cells = [str(tally[column]) for column in columns]
        print(f"| {group} | {tally.total()} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = server_arguments(__doc__ or "")
    parser.add_argument("--record", type=Path, help="write the raw answers to this file")
    parser.add_argument("--replay", type=Path, help="score the answers recorded in this file")
    parser.add_argument("--batch", type=int, default=BATCH, help="pairs per call")
    arguments = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    pairs = load_pairs(default_pairs_path())
    random.Random(0).shuffle(pairs)
    model: LanguageModel = (
        replayed(arguments.replay)
        if arguments.replay
        else OpenAILanguageModel(arguments.model, base_url=arguments.base_url, timeout=900)
    )
    if arguments.record:
        arguments.record.write_text("", encoding="utf-8")
    recording = RecordingModel(model, arguments.record)
    tallies, seconds = asyncio.run(judge_all(recording, pairs, arguments.batch))
    report(model.model_name, tallies, seconds)


if __name__ == "__main__":
    main()
