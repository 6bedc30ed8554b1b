"""Shared fixtures: the real embedding model, and real SQLite + LanceDB files in a temp dir."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.embedding import FastEmbedEmbedder
from memory.index import LanceFactIndex
from memory.store import Store

REPOSITORY_ROOT = Path(__file__).resolve().parent.parent
LOCAL_MODEL_DIRECTORY = REPOSITORY_ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"


def real_embedder() -> FastEmbedEmbedder:
    """all-MiniLM-L6-v2: the offline copy beside the project if there, else fastembed's download."""
    model_path = LOCAL_MODEL_DIRECTORY if LOCAL_MODEL_DIRECTORY.is_dir() else None
    return FastEmbedEmbedder(MODEL_NAME, model_path=model_path)


@pytest.fixture(scope="session")
def embedder() -> FastEmbedEmbedder:
    return real_embedder()


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    opened = await Store.open(tmp_path / "mnemo.sqlite3")
    yield opened
    await opened.aclose()


@pytest.fixture
async def index(tmp_path: Path) -> AsyncIterator[LanceFactIndex]:
    opened = await LanceFactIndex.open(tmp_path / "index", dimension=384)
    yield opened
    await opened.aclose()
