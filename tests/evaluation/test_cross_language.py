"""The shipped cross-language cases: a question in one language, the fact in another."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluation import ALL_MODES, load_locomo, run_evaluation, score
from memory.embedding import FastEmbedEmbedder
from memory.embedding.languages import looks_english
from tests.conftest import EMBEDDINGGEMMA, embeddinggemma_directory

CASES = Path(__file__).resolve().parents[2] / "evaluation" / "cross_language.json"
PASSIVE = [mode for mode in ALL_MODES if mode.path == "passive" and mode.scope == "joint"]


def test_every_question_is_in_another_language_than_its_fact() -> None:
    (conversation,) = load_locomo(CASES)
    assert len(conversation.questions) == 30
    for question in conversation.questions:
        (fact,) = [conversation.observations[index].text for index in question.relevant]
        # The cases without English on either side use scripts or words apart.
        if looks_english(fact) or looks_english(question.text):
            assert looks_english(fact) != looks_english(question.text), (fact, question.text)


async def _hit_at_5(embedder: FastEmbedEmbedder, tmp_path: Path) -> float:
    run = await run_evaluation(load_locomo(CASES), embedder, modes=PASSIVE, work_directory=tmp_path)
    return score(run.outcomes[PASSIVE[0].name]).hit[5]


async def test_english_first_minilm_misses_most(
    embedder: FastEmbedEmbedder, tmp_path: Path
) -> None:
    assert await _hit_at_5(embedder, tmp_path) < 0.3


async def test_embeddinggemma_finds_them_at_hit_at_5(tmp_path: Path) -> None:
    folder = embeddinggemma_directory()
    if folder is None:
        pytest.skip("EmbeddingGemma not built: run ../shared/models/embeddinggemma/setup.sh int8")
    gemma = FastEmbedEmbedder(EMBEDDINGGEMMA, model_path=folder)
    assert await _hit_at_5(gemma, tmp_path) >= 0.9
