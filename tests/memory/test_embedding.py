"""The real embedding model, and cosine similarity pinned to numpy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memory.embedding import FastEmbedEmbedder, HashingEmbedder, cosine_similarity, normalise
from memory.errors import EmbeddingModelUnavailable


async def test_known_pair_similarity_equals_numpy_cosine(embedder: FastEmbedEmbedder) -> None:
    vectors = await embedder.embed(["I like chess", "I really enjoy playing chess"])
    a, b = vectors.astype(np.float64)
    numpy_cosine = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
    assert cosine_similarity(vectors[0], vectors[1]) == pytest.approx(numpy_cosine, abs=1e-6)
    # The value the model's README gives for sentence-transformers on the original weights.
    assert numpy_cosine == pytest.approx(0.839, abs=0.002)


async def test_vectors_are_unit_length_float32(embedder: FastEmbedEmbedder) -> None:
    vectors = await embedder.embed(["I live in Paris", "Ich wohne in Berlin", "東京に住んでいます"])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


async def test_design_brief_pairs_score_as_stated(embedder: FastEmbedEmbedder) -> None:
    pairs = {
        ("I'm 34 years old", "I'm 35 years old"): 0.94,
        ("I drive a Toyota Corolla", "My wife drives a Toyota Corolla"): 0.83,
    }
    for (first, second), expected in pairs.items():
        vectors = await embedder.embed([first, second])
        assert cosine_similarity(vectors[0], vectors[1]) == pytest.approx(expected, abs=0.02)


async def test_empty_input_gives_no_rows(embedder: FastEmbedEmbedder) -> None:
    assert (await embedder.embed([])).shape[0] == 0


async def test_unknown_model_without_path_names_the_keys_to_set() -> None:
    broken = FastEmbedEmbedder("nobody/no-such-model")
    with pytest.raises(EmbeddingModelUnavailable, match=r"embedding\.model_path"):
        await broken.embed(["hello"])


async def test_missing_model_directory_is_a_clear_error(tmp_path: Path) -> None:
    broken = FastEmbedEmbedder(
        "sentence-transformers/all-MiniLM-L6-v2", model_path=tmp_path / "missing"
    )
    with pytest.raises(EmbeddingModelUnavailable, match="not a directory"):
        await broken.embed(["hello"])


def test_normalise_leaves_zero_rows_and_scales_others() -> None:
    rows = normalise([[3.0, 4.0], [0.0, 0.0]])
    assert rows.tolist() == [[pytest.approx(0.6), pytest.approx(0.8)], [0.0, 0.0]]


async def test_hashing_double_is_deterministic_and_word_based() -> None:
    double = HashingEmbedder()
    first, second, third = await double.embed(["red apple", "apple red", "blue sky"])
    assert cosine_similarity(first, second) == pytest.approx(1.0)
    assert cosine_similarity(first, third) < 0.5
