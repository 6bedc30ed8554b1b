"""Session fixtures of the deploy tests: the daemon, the images, Synapse where containers
reach it, and the stack folder. They need root (the test starts its own dockerd); elsewhere
they skip with the reason, and fail in CI."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import LOCAL_MODEL_DIRECTORY, REPOSITORY_ROOT
from tests.deploy.daemon import (
    DockerDaemon,
    cache_directory,
    install_missing_packages,
    why_not_here,
)
from tests.deploy.images import MNEMO, Docker, build_base, build_standins
from tests.deploy.stack import Stack, host_address
from tests.servers.synapse import SynapseServer, synapse_python

TIMINGS = "timings.json"


def skip_or_fail(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def record(name: str, value: float | int | str) -> None:
    """Measurements of the last run (docs/benchmarks.md reads them), also printed."""
    path = cache_directory() / TIMINGS
    values = json.loads(path.read_text()) if path.exists() else {}
    values[name] = value
    path.write_text(json.dumps(values, indent=2))
    print(f"deploy: {name} = {value}")


@pytest.fixture(scope="session")
def daemon() -> Iterator[DockerDaemon]:
    reason = why_not_here()
    if reason is not None:
        skip_or_fail(reason)
    if not LOCAL_MODEL_DIRECTORY.is_dir():
        skip_or_fail(f"the stand-in Ollama serves the embedding model of {LOCAL_MODEL_DIRECTORY}")
    install_missing_packages()
    started = DockerDaemon(cache_directory())
    started.start()
    record("storage_driver", str(started.storage_driver))
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="session")
def docker(daemon: DockerDaemon) -> Docker:
    """Every image the stack needs: the base once, then the Dockerfile as it is (from cache
    where nothing changed), then the stand-ins."""
    client = Docker(daemon.environment())
    began = time.monotonic()
    build_base(client, daemon.directory)
    record("base_seconds", round(time.monotonic() - began))
    began = time.monotonic()
    client.build(MNEMO, REPOSITORY_ROOT)
    record("mnemo_build_seconds", round(time.monotonic() - began))
    record("mnemo_image_bytes", client.image_size(MNEMO))
    began = time.monotonic()
    build_standins(client)
    record("standins_seconds", round(time.monotonic() - began))
    return client


@pytest.fixture(scope="session")
def synapse_for_containers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SynapseServer]:
    """A real Synapse on this machine's own address, where the bot in its container finds it."""
    python = synapse_python()
    if python is None:
        skip_or_fail("Synapse is not installed: run scripts/install-synapse.sh")
        raise AssertionError("unreachable")
    server = SynapseServer(python, tmp_path_factory.mktemp("synapse"), bind_address=host_address())
    server.start()
    yield server
    server.stop()


@pytest.fixture
def stack(docker: Docker, tmp_path: Path) -> Iterator[Stack]:
    """The project's compose files in a folder of their own; taken down with its volumes
    after the test, whatever happened."""
    folder = tmp_path / "mnemo"
    folder.mkdir()
    made = Stack(folder, docker.environment)
    try:
        yield made
    finally:
        print(made.logs(tail=40))
        subprocess.run(
            ["docker", "compose", "--profile", "postgres", "down", "--volumes", "--timeout", "5"],
            cwd=folder, env=made.environment, capture_output=True, timeout=300,
        )  # fmt: skip
