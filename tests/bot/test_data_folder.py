"""The data folder: one writing process at a time, and one line when it cannot be used.

The refusal of a second real process, and a holder killed with SIGKILL, are in
tests/faults/test_processes.py; here the lock, its messages and the CLI wiring, in-process.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from adapters.console import ChatCommand
from adapters.discord.cli import DiscordCommand
from adapters.main import main
from adapters.matrix.cli import MatrixCommand
from bot.cli import BUILT_IN_COMMANDS, build_parser
from bot.cli.base import CliCommand
from bot.config import Config
from bot.data_folder import (
    LOCK_FILE_NAME,
    DataAccess,
    DataFolderError,
    data_folder_access,
    exclusive_data_folder,
    running_holder,
    unusable_reason,
)
from tests.conftest import LOCAL_MODEL_DIRECTORY


def config_in(data_dir: Path) -> Config:
    return Config.model_validate({"storage": {"data_dir": str(data_dir)}})


def test_the_lock_file_holds_the_pid_while_held_and_is_emptied_after(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with exclusive_data_folder(data_dir):
        assert (data_dir / LOCK_FILE_NAME).read_text() == f"{os.getpid()}\n"
        assert running_holder(data_dir) == os.getpid()
    assert (data_dir / LOCK_FILE_NAME).read_text() == ""
    assert running_holder(data_dir) is None


def test_a_second_holder_is_refused_with_the_pid_and_what_to_do(tmp_path: Path) -> None:
    # flock belongs to an open file description: a second open in this process conflicts
    # exactly as another process does.
    data_dir = tmp_path / "data"
    with exclusive_data_folder(data_dir):
        with pytest.raises(DataFolderError) as refused, exclusive_data_folder(data_dir):
            pytest.fail("the second holder got in")
        message = str(refused.value)
        assert f"in use by another Mnemo process (PID {os.getpid()})" in message
        assert "Stop that process first" in message and "mnemo doctor" in message
        assert "\n" not in message
        # The refused one leaves the holder's PID in place.
        assert (data_dir / LOCK_FILE_NAME).read_text() == f"{os.getpid()}\n"
    with exclusive_data_folder(data_dir):
        pass


def test_a_stale_lock_file_of_a_dead_process_does_not_block(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    dead_pid = max(os.getpid() + 100_000, 4_000_000)
    (data_dir / LOCK_FILE_NAME).write_text(f"{dead_pid}\n")
    assert running_holder(data_dir) is None
    with exclusive_data_folder(data_dir):
        assert running_holder(data_dir) == os.getpid()


def test_read_only_and_no_access_commands_take_no_lock(tmp_path: Path) -> None:
    config = config_in(tmp_path / "data")
    with data_folder_access(config, DataAccess.WRITE):
        with data_folder_access(config, DataAccess.READ_ONLY):
            pass
        with data_folder_access(config, DataAccess.NONE):
            pass
        with pytest.raises(DataFolderError), data_folder_access(config, DataAccess.WRITE):
            pytest.fail("a second writer got in")


def test_the_lock_depends_on_the_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A database server serves several processes: the one hook turns the lock off."""
    config = config_in(tmp_path / "data")
    monkeypatch.setattr("bot.data_folder.needs_single_process", lambda config: False)
    with data_folder_access(config, DataAccess.WRITE), data_folder_access(config, DataAccess.WRITE):
        assert not (tmp_path / "data" / LOCK_FILE_NAME).exists()


def test_every_command_says_what_it_does_with_the_data_folder() -> None:
    commands: tuple[CliCommand, ...] = (
        ChatCommand(),
        MatrixCommand(),
        DiscordCommand(),
        *BUILT_IN_COMMANDS,
    )
    parser = build_parser(commands)

    def access(*argv: str) -> DataAccess:
        arguments = parser.parse_args(list(argv))
        command: CliCommand = arguments.handler
        return command.data_access(arguments)

    writers = [("chat",), ("matrix",), ("discord",), ("reconcile",), ("reconcile", "--dry-run")]
    writers += [("consolidate", "--dry-run"), ("migrate",)]
    assert {access(*argv) for argv in writers} == {DataAccess.WRITE}
    assert access("doctor") is DataAccess.READ_ONLY
    assert access("migrate", "--sql") is DataAccess.READ_ONLY
    assert access("calibrate") is DataAccess.NONE
    assert access("eval", "retrieval", "--dataset", "locomo", "x.json") is DataAccess.NONE


@pytest.mark.parametrize(
    ("code", "why", "fix"),
    [
        (errno.ENOTDIR, "a file is in the way", "move that file away"),
        (errno.EEXIST, "a file is in the way", "move that file away"),
        (errno.EROFS, "read-only file system", "mount it read-write"),
        (errno.EACCES, f"this user (uid {os.getuid()}) may not write there", "write access"),
        (errno.ENOSPC, "the disk holding it is full", "free some space"),
        (errno.EIO, "Input/output error", "check the folder"),
    ],
)
def test_each_reason_names_the_setting_and_the_fix(code: int, why: str, fix: str) -> None:
    message = unusable_reason(Path("/srv/mnemo"), OSError(code, os.strerror(code)))
    assert message.startswith("storage.data_dir (/srv/mnemo) cannot be used: ")
    assert why in message and fix in message
    assert "MNEMO_STORAGE__DATA_DIR" in message


@pytest.fixture
def data_dir_is_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    blocker = tmp_path / "data"
    blocker.write_text("not a folder")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MNEMO_CONFIG", raising=False)
    monkeypatch.setenv("MNEMO_STORAGE__DATA_DIR", str(blocker))
    # The doctor's other checks, quick: the local model, no reranker, no LLM server.
    monkeypatch.setenv("MNEMO_EMBEDDING__MODEL_PATH", str(LOCAL_MODEL_DIRECTORY))
    monkeypatch.setenv("MNEMO_MEMORY__RERANKER_MODEL", "")
    monkeypatch.setenv("MNEMO_LLM__BASE_URL", "http://127.0.0.1:9")
    return blocker


@pytest.mark.parametrize("command", [["reconcile"], ["consolidate", "--no-llm"], ["chat"]])
def test_commands_on_a_data_folder_that_is_a_file_say_one_line_and_exit_2(
    data_dir_is_a_file: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    assert main(command) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"error: storage.data_dir ({data_dir_is_a_file}) cannot be used")
    assert "a file is in the way" in lines[0]
    assert data_dir_is_a_file.read_text() == "not a folder"


def test_doctor_on_a_data_folder_that_is_a_file(
    data_dir_is_a_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["doctor"]) == 2
    output = capsys.readouterr().out
    assert f"FAIL data folder: storage.data_dir ({data_dir_is_a_file}) cannot be used" in output
    assert "skip database: needs a usable data folder" in output
    assert "skip vector index: needs a usable data folder" in output
    assert "the check itself failed" not in output


def test_a_read_only_mount_is_named_as_such(read_only_mount: Path) -> None:
    config = config_in(read_only_mount / "data")
    with pytest.raises(DataFolderError) as refused, data_folder_access(config, DataAccess.WRITE):
        pytest.fail("got the lock on a read-only mount")
    assert "it is on a read-only file system. Fix: mount it read-write" in str(refused.value)
