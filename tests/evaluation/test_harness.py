"""The harness over the real read path: scope wiring on a tiny file, and the reference figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation import ALL_MODES, load_locomo, run_evaluation, run_summary, score
from memory.embedding import FastEmbedEmbedder
from memory.recall import ScriptedReranker
from tests.evaluation.tiny_locomo import TINY_LOCOMO

LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo10.json"


async def test_tiny_conversation_in_every_mode(tmp_path: Path, embedder: FastEmbedEmbedder) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY_LOCOMO), encoding="utf-8")
    conversations = load_locomo(path)
    ticks: list[int] = []
    run = await run_evaluation(
        conversations, embedder, on_question=lambda: ticks.append(1), work_directory=tmp_path
    )
    assert len(ticks) == 5 * len(ALL_MODES)
    assert set(run.outcomes) == {mode.name for mode in ALL_MODES}
    assert run.notes == [
        "explicit lookup used cosine order (reranker unavailable: no reranker configured)"
    ]
    # Outcomes keep the questions' order: cat, sister, cello, marathon, Oslo.
    joint = run.outcomes["passive (dense)"]
    scoped = run.outcomes["passive (dense) / speaker scope"]
    assert [o.relevant_ranks for o in joint] == [(1,), (1,), (1,), (1,), (2,)]
    # "Who does Ana know in Oslo?" is asked as Ana: Ben's fact about Oslo is not hers to see.
    assert [o.relevant_ranks for o in scoped] == [(1,), (1,), (1,), (1,), ()]
    summary = run_summary(run)
    assert summary["modes"]["passive (dense) / speaker scope"]["overall"]["questions"] == 5


async def test_reranker_order_is_what_the_eval_scores(
    tmp_path: Path, embedder: FastEmbedEmbedder
) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY_LOCOMO), encoding="utf-8")
    # A scripted cross-encoder that always prefers the bicycle fact: a wrong judgement that
    # the explicit mode must faithfully reflect.
    reranker = ScriptedReranker(lambda query, passage: 5.0 if "bicycles" in passage else 0.0)
    explicit = [mode for mode in ALL_MODES if mode.lookup and not mode.speaker_scope]
    run = await run_evaluation(
        load_locomo(path), embedder, modes=explicit, reranker=reranker, lookup_min_similarity=-1.0
    )
    assert run.reranked and run.notes == []
    scores = score(run.outcomes[explicit[0].name])
    assert scores.hit[1] == 0.0 and scores.hit[5] == 1.0


@pytest.mark.slow
@pytest.mark.skipif(not LOCOMO.exists(), reason="needs ../shared/data/locomo10.json")
async def test_dense_mode_reproduces_the_reference_figures(
    tmp_path: Path, embedder: FastEmbedEmbedder
) -> None:
    # ../shared/data/README.md: dense cosine, both speakers' facts, 1,302 questions.
    dense = [mode for mode in ALL_MODES if mode.name == "passive (dense)"]
    run = await run_evaluation(load_locomo(LOCOMO), embedder, modes=dense, work_directory=tmp_path)
    scores = score(run.outcomes["passive (dense)"])
    assert scores.questions == 1302
    assert scores.hit[5] == pytest.approx(0.732, abs=0.01)
    assert scores.mrr == pytest.approx(0.580, abs=0.01)
    assert scores.hit[1] == pytest.approx(0.459, abs=0.01)
    assert scores.hit[10] == pytest.approx(0.800, abs=0.01)
    assert scores.hit[50] == pytest.approx(0.938, abs=0.01)
