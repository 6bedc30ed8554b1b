"""``mnemo matrix`` from the command line: config errors, login errors, and a real run."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from adapters.main import main
from adapters.matrix.cli import MatrixCommand
from bot.config import load_config
from bot.core import APOLOGY
from tests.adapters.matrix.conftest import MakePerson
from tests.conftest import LOCAL_MODEL_DIRECTORY
from tests.servers.synapse import RegisteredUser, SynapseServer, free_port


def write_config(path: Path, matrix: Mapping[str, object], data_dir: Path) -> Path:
    lines = [
        "[storage]",
        f"data_dir = {json.dumps(str(data_dir))}",
        "[embedding]",
        f"model_path = {json.dumps(str(LOCAL_MODEL_DIRECTORY))}",
        "[llm]",
        # Nothing listens there: the bot answers with its apology, which is all this needs.
        f'base_url = "http://127.0.0.1:{free_port()}"',
        "[matrix]",
        *(f"{key} = {json.dumps(value)}" for key, value in matrix.items()),
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_missing_login_is_a_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(
        tmp_path / "mnemo.toml",
        {"homeserver": "http://127.0.0.1:1", "user_id": "@mnemo:localhost"},
        tmp_path / "data",
    )

    assert main(["--config", str(config), "matrix"]) == 2
    assert "no credentials: set MNEMO_MATRIX__ACCESS_TOKEN" in capsys.readouterr().err


@pytest.mark.synapse
def test_refused_login_is_reported(
    synapse: SynapseServer,
    bot_account: RegisteredUser,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    matrix = {"homeserver": synapse.url, "user_id": bot_account.user_id, "password": "wrong"}
    config = write_config(tmp_path / "mnemo.toml", matrix, tmp_path / "data")

    assert main(["--config", str(config), "matrix"]) == 1
    assert "refused the password login" in capsys.readouterr().err
    assert "matrix.allowed_users is empty: nobody can invite or talk to the bot" in caplog.text


@pytest.mark.synapse
async def test_matrix_command_runs_the_bot(
    synapse: SynapseServer, bot_account: RegisteredUser, tmp_path: Path, make_person: MakePerson
) -> None:
    alice = await make_person("alice")
    matrix = {
        "homeserver": synapse.url,
        "user_id": bot_account.user_id,
        "password": bot_account.password,
        "allowed_users": [alice.user_id],
    }
    config = load_config(write_config(tmp_path / "mnemo.toml", matrix, tmp_path / "data"))
    running = asyncio.create_task(MatrixCommand().run(argparse.Namespace(), config))
    try:
        room_id = await alice.create_room([bot_account.user_id], direct=True)
        await alice.wait_for_members(room_id, {alice.user_id, bot_account.user_id})
        await alice.send(room_id, "hello")
        [answer] = await alice.wait_for_messages(bot_account.user_id, room_id, 1, seconds=60)
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running

    assert answer.body == APOLOGY
    assert (tmp_path / "data" / "matrix" / "session.json").exists()
