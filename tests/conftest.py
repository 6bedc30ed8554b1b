"""Shared fixtures: the real embedding model, and real SQLite + LanceDB files in a temp dir."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from memory.embedding import FastEmbedEmbedder
from memory.index import LanceFactIndex
from memory.store import Store
from tests.servers.synapse import SynapseServer, synapse_python

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


@pytest.fixture(scope="session")
def synapse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SynapseServer]:
    """One real Synapse for the whole run (its start-up costs seconds); tests register
    accounts with unique names. Missing Synapse skips here and fails in CI."""
    python = synapse_python()
    if python is None:
        message = "Synapse is not installed: run scripts/install-synapse.sh"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    server = SynapseServer(python, tmp_path_factory.mktemp("synapse"))
    server.start()
    yield server
    server.stop()
