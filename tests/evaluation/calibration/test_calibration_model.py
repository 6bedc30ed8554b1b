"""Calibration with the real model on the shipped pairs, and the histogram it draws."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from bot.config import MemorySettings
from evaluation.calibration import (
    by_language,
    default_pairs_path,
    load_pairs,
    plot,
    recommend_threshold,
    score_pairs,
    write_histogram,
)
from memory.embedding import FastEmbedEmbedder
from memory.write.candidates import calibrated_threshold
from tests.conftest import EMBEDDINGGEMMA, embeddinggemma_directory


async def test_known_pair_scores_like_sentence_transformers(embedder: FastEmbedEmbedder) -> None:
    pairs = [p for p in load_pairs(default_pairs_path()) if p.first == "I like chess"]
    scored = {item.pair.second: item.similarity for item in await score_pairs(pairs, embedder)}
    assert scored["I really enjoy playing chess"] == pytest.approx(0.839, abs=0.002)


async def test_config_default_is_the_calibrated_threshold(
    embedder: FastEmbedEmbedder, tmp_path: Path
) -> None:
    scored = await score_pairs(load_pairs(default_pairs_path()), embedder)
    recommendation = recommend_threshold(scored)
    assert MemorySettings().candidate_threshold == pytest.approx(recommendation.threshold)
    png = tmp_path / "plot" / "calibration.png"
    write_histogram(scored, recommendation.threshold, png)
    with Image.open(png) as image:
        assert image.format == "PNG"
        rgb = image.convert("RGB")
        x = round(plot._x(recommendation.threshold))
        # The threshold line is drawn in red through every strip.
        assert rgb.getpixel((x, plot.TOP + 5)) == (211, 47, 47)
        assert rgb.getpixel((x, rgb.height - plot.BOTTOM - 2)) == (211, 47, 47)


async def test_embeddinggemmas_known_threshold_misses_no_candidate() -> None:
    folder = embeddinggemma_directory()
    if folder is None:
        pytest.skip("EmbeddingGemma not built: run ../shared/models/embeddinggemma/setup.sh int8")
    embedder = FastEmbedEmbedder(EMBEDDINGGEMMA, model_path=folder)
    scored = await score_pairs(load_pairs(default_pairs_path()), embedder)
    recommended = recommend_threshold(scored).threshold
    known = calibrated_threshold(EMBEDDINGGEMMA)
    assert known is not None and recommended - 0.02 <= known <= recommended
    # Every language but English keeps its unrelated pairs below its candidates (English
    # does with the fp32 copy, by a hair, and not with the int8 one).
    separable = {item.language: item.separable for item in by_language(scored)}
    assert all(separable[language] for language in separable if language != "en")
