"""The home-server stack run for real: ``docker compose up -d`` with the project's own
docker-compose.yml and .env.example, checked as a self-hoster would check it.

Real: the image built from the Dockerfile, Docker and Compose, the volumes, a Synapse on
this machine, matrix-nio clients, SQLite / PostgreSQL with pgvector, the embedding model.
Test doubles (no image registry is reachable): the Ollama and SearXNG images are the
project's shaped servers (``standins/``), whose model answers like the fault suite's.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.adapters.matrix.people import Person
from tests.deploy.conftest import record
from tests.deploy.stack import Stack, extraction_calls, ollama_standin
from tests.servers.synapse import RegisteredUser, SynapseServer

pytestmark = pytest.mark.docker

IMAGE_UID = "10001"
ANSWER_SECONDS = 180.0
NOTED = "Noted."
CAT = "My cat is called Miso."
DOG = "My dog is called Rex."


@dataclass
class Chat:
    """One person's direct room with the bot."""

    person: Person
    room_id: str
    bot_id: str

    async def say(self, text: str, seconds: float = ANSWER_SECONDS) -> str:
        seen = len(self.person.messages_from(self.bot_id, self.room_id))
        await self.person.send(self.room_id, text)
        answers = await self.person.wait_for_messages(
            self.bot_id, self.room_id, seen + 1, seconds=seconds
        )
        return answers[-1].body

    async def until_listed(self, *texts: str, seconds: float = ANSWER_SECONDS) -> str:
        """``!memory list`` until it names every text (the queue learns in the background)."""
        deadline = time.monotonic() + seconds
        listing = ""
        while time.monotonic() < deadline:
            listing = await self.say("!memory list")
            if all(text in listing for text in texts):
                return listing
            await asyncio.sleep(2)
        raise AssertionError(f"never listed {texts}; last listing:\n{listing}")


def matrix_settings(synapse: SynapseServer, bot: RegisteredUser) -> dict[str, str]:
    """What a self-hoster fills into .env for this machine (offline: models through Ollama,
    no reranker download)."""
    return {
        "SEARXNG_SECRET": secrets.token_hex(32),
        "MNEMO_EMBEDDING__BACKEND": "ollama",
        "MNEMO_EMBEDDING__MODEL": "all-minilm",
        "MNEMO_MEMORY__RERANKER_MODEL": "",
        "MNEMO_MATRIX__HOMESERVER": synapse.url,
        "MNEMO_MATRIX__USER_ID": bot.user_id,
        "MNEMO_MATRIX__PASSWORD": bot.password,
        "MNEMO_MATRIX__ALLOWED_USERS": "@*:localhost",
    }


@pytest.fixture
async def people(
    synapse_for_containers: SynapseServer, tmp_path: Path
) -> AsyncIterator[list[Person]]:
    made: list[Person] = []
    yield made
    for person in made:
        await person.close()


async def open_chat(
    synapse: SynapseServer, people: list[Person], directory: Path, name: str, bot_id: str
) -> Chat:
    account = synapse.register(f"{name}{secrets.token_hex(3)}")
    person = await Person.log_in(synapse.url, account, directory / name, encryption=False)
    people.append(person)
    room_id = await person.create_room([bot_id], direct=True)
    await person.wait_for_members(room_id, {person.user_id, bot_id})
    return Chat(person, room_id, bot_id)


def stopped_cleanly(stack: Stack, service: str) -> tuple[int, float]:
    """``docker compose stop`` (SIGTERM, then SIGKILL after the grace): exit code, seconds."""
    [container] = stack.containers(service)
    seconds = stack.timed("stop", service)
    return int(stack.inspect(container)["State"]["ExitCode"]), seconds


def volume_files_not_owned_by_the_image_user(stack: Stack, *folders: str) -> str:
    listing = stack.compose(
        "run", "--rm", "--no-deps", "--entrypoint", "find", "bot", *folders,
        "!", "-user", IMAGE_UID,
    )  # fmt: skip
    return listing.stdout.strip()


async def test_the_sqlite_stack_answers_learns_keeps_and_stops_cleanly(
    stack: Stack, synapse_for_containers: SynapseServer, people: list[Person], tmp_path: Path
) -> None:
    synapse = synapse_for_containers
    bot = synapse.register(f"mnemo{secrets.token_hex(3)}")
    stack.write_env(matrix_settings(synapse, bot))

    began = time.monotonic()
    stack.compose("up", "-d")
    stack.wait_until_ready(0)
    chat = await open_chat(synapse, people, tmp_path, "alice", bot.user_id)
    assert await chat.say(CAT) == NOTED
    record("up_to_first_answer_seconds", round(time.monotonic() - began, 1))
    assert "My cat is called Miso" in await chat.until_listed("My cat is called Miso")

    doctor = stack.compose("run", "--rm", "bot", "doctor", check=False)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    lines = doctor.stdout.splitlines()
    assert lines and all(line.startswith(("ok", "skip")) for line in lines), doctor.stdout
    assert any(line.startswith("ok   matrix") for line in lines), doctor.stdout

    # .env.example says: after changing the embedding model, re-run calibration. It scores
    # the sentence pairs shipped inside the package (package data the image must carry).
    calibration = stack.compose("run", "--rm", "--no-deps", "bot", "calibrate", check=False)
    assert calibration.returncode == 0, calibration.stdout + calibration.stderr
    printed = " ".join(calibration.stdout.split())  # rich wraps at 80 columns
    shipped = "/opt/mnemo/lib/python3.11/site-packages/evaluation/calibration/pairs.csv"
    assert f" pairs from {shipped}" in printed
    assert "model ollama/all-minilm" in printed

    stack.wait_until_healthy("bot")

    started = stack.started_bots()
    record("restart_bot_seconds", round(stack.timed("restart", "bot"), 1))
    stack.wait_until_ready(started)
    assert "My cat is called Miso" in await chat.until_listed("My cat is called Miso")

    # A message whose learning is under way when the bot is stopped is learned after.
    ollama_standin("/standin/hold", {})
    assert await chat.say(DOG) == NOTED
    await until_extraction_of(DOG)
    exit_code, seconds = stopped_cleanly(stack, "bot")
    record("sigterm_stop_seconds", round(seconds, 1))
    assert exit_code == 0, "the bot did not stop on SIGTERM within the grace period"
    ollama_standin("/standin/release", {})
    started = stack.started_bots()
    stack.compose("up", "-d")
    stack.wait_until_ready(started)
    await chat.until_listed("My dog is called Rex")

    stack.compose("down")
    stack.compose("up", "-d")
    stack.wait_until_ready(0)
    listing = await chat.until_listed("My cat is called Miso", "My dog is called Rex")
    assert listing.count("#") == 2, listing

    assert volume_files_not_owned_by_the_image_user(stack, "/data", "/matrix-store") == ""


async def until_extraction_of(text: str, seconds: float = ANSWER_SECONDS) -> dict[str, str]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        calls = [call for call in extraction_calls() if text in call["text"]]
        if calls:
            return calls[-1]
        await asyncio.sleep(0.5)
    raise AssertionError(f"no extraction call for {text!r} reached the model")


def postgres_settings(password: str) -> Mapping[str, str]:
    """The postgres lines of .env.example, filled in; the workers apply every write."""
    return {
        "POSTGRES_PASSWORD": password,
        "MNEMO_STORAGE__DATABASE_URL": f"postgresql://mnemo:{password}@postgres:5432/mnemo",
        "MNEMO_STORAGE__BOT_APPLIES_WRITES": "false",
        "MNEMO_WORKERS": "2",
    }


async def test_the_postgres_profile_migrates_once_and_two_workers_share_the_queue(
    stack: Stack, synapse_for_containers: SynapseServer, people: list[Person], tmp_path: Path
) -> None:
    synapse = synapse_for_containers
    bot = synapse.register(f"mnemo{secrets.token_hex(3)}")
    password = secrets.token_hex(12)
    stack.write_env({**matrix_settings(synapse, bot), **postgres_settings(password)})

    stack.compose("--profile", "postgres", "up", "-d")
    stack.wait_until_ready(0)
    [migrate] = stack.containers("migrate")
    assert stack.inspect(migrate)["State"]["ExitCode"] == 0
    migrated = stack.logs("migrate", tail=1000)
    assert "created the database" in migrated
    assert "Running upgrade 0004 -> 0005" in migrated
    # The bot and the workers found the schema current: nobody upgraded it again.
    for service in ("bot", "worker"):
        assert "Running upgrade" not in stack.logs(service, tail=1000), service
    workers = stack.containers("worker")
    assert len(workers) == 2

    by_address = {stack.address(container): container for container in workers}
    alice, bob = [
        await open_chat(synapse, people, tmp_path, name, bot.user_id) for name in ("alice", "bob")
    ]
    assert await alice.say(CAT) == NOTED
    first = (await until_extraction_of(CAT))["client"]
    # With the worker that took it frozen, the other one takes the next message.
    stack.docker("pause", by_address[first])
    try:
        assert await bob.say(DOG) == NOTED
        second = (await until_extraction_of(DOG))["client"]
    finally:
        stack.docker("unpause", by_address[first])
    assert {first, second} == set(by_address)
    await alice.until_listed("My cat is called Miso")
    await bob.until_listed("My dog is called Rex")
    assert volume_files_not_owned_by_the_image_user(stack, "/data") == ""
