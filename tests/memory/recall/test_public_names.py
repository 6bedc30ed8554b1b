"""The public names of the read-path, evaluation and calibration packages."""

from __future__ import annotations

import evaluation
import evaluation.calibration
import memory.recall


def test_recall_names() -> None:
    assert sorted(memory.recall.__all__) == [
        "DEFAULT_RERANKER_MODEL",
        "FastEmbedReranker",
        "FullTextIndex",
        "RecallSettings",
        "RecalledFact",
        "Recaller",
        "Reranker",
        "RerankerError",
        "RerankerUnavailable",
        "ScriptedReranker",
        "reciprocal_rank_fusion",
        "wants_lookup",
        "wants_overview",
    ]


def test_every_exported_name_exists() -> None:
    for package in (memory.recall, evaluation, evaluation.calibration):
        for name in package.__all__:
            assert hasattr(package, name), (package.__name__, name)
    assert "run_evaluation" in evaluation.__all__
    assert "recommend_threshold" in evaluation.calibration.__all__
