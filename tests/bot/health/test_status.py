"""The status judgement, and ``mnemo-healthcheck`` reading a file as the container runs it."""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from bot.health.check import main
from bot.health.status import STALL_SECONDS, Status, problem, read_status, write_status
from tests.conftest import REPOSITORY_ROOT

NOW = 1_800_000_000.0
HEALTHY = Status(
    written_at=NOW - 5,
    interval_seconds=10,
    connected=True,
    applies_writes=True,
    worker_running=True,
    oldest_due_seconds=None,
    last_applied_seconds=None,
)


def test_a_fresh_connected_status_with_an_empty_queue_is_healthy() -> None:
    assert problem(HEALTHY, NOW) is None
    # A worker process has no chat connection at all: that is not a problem.
    assert problem(replace(HEALTHY, connected=None), NOW) is None


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"written_at": NOW - 31}, "last written 31 s ago: the process is stuck or gone"),
        ({"connected": False}, "not connected to the chat server"),
        ({"worker_running": False}, "the write queue's worker has stopped"),
        (
            {"oldest_due_seconds": STALL_SECONDS + 1},
            "a message has waited 601 s for memory and nothing was applied since start",
        ),
        (
            {"oldest_due_seconds": 900.0, "last_applied_seconds": 700.0},
            "nothing was applied for 700 s",
        ),
    ],
)
def test_each_problem_is_named(change: dict[str, float | bool], expected: str) -> None:
    found = problem(replace(HEALTHY, **change), NOW)  # type: ignore[arg-type]
    assert found is not None
    assert expected in found


def test_a_long_queue_that_moves_is_healthy() -> None:
    busy = replace(HEALTHY, oldest_due_seconds=STALL_SECONDS * 3, last_applied_seconds=4.0)
    assert problem(busy, NOW) is None
    # Only the queue worker's own progress counts, not another process's.
    assert problem(replace(busy, worker_running=False), NOW) is not None
    # The bot that leaves the writes to workers needs no worker of its own.
    assert problem(replace(busy, applies_writes=False, worker_running=False), NOW) is None


def test_the_file_round_trips_and_a_broken_one_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "run" / "status.json"
    write_status(path, HEALTHY)
    assert read_status(path) == HEALTHY
    assert [p.name for p in path.parent.iterdir()] == ["status.json"]  # no temporary left
    path.write_text('{"written_at": 1}')
    with pytest.raises(ValueError, match="not a status"):
        read_status(path)
    path.write_text("[]")
    with pytest.raises(ValueError, match="not a JSON object"):
        read_status(path)


def test_the_check_exits_0_only_for_a_healthy_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "status.json"
    assert main([str(path)]) == 1
    assert "cannot be read" in capsys.readouterr().out
    write_status(path, replace(HEALTHY, written_at=time.time()))
    assert main([str(path)]) == 0
    assert capsys.readouterr().out == "healthy\n"
    write_status(path, replace(HEALTHY, written_at=time.time(), connected=False))
    assert main([str(path)]) == 1
    assert capsys.readouterr().out == "unhealthy: not connected to the chat server\n"


def test_the_check_runs_alone_reading_the_path_from_the_environment(tmp_path: Path) -> None:
    """As the HEALTHCHECK runs it: a fresh interpreter, the path in MNEMO_LOGGING__STATUS_FILE,
    and none of the bot's heavy libraries loaded (it runs every 30 s beside the bot)."""
    path = tmp_path / "status.json"
    write_status(path, replace(HEALTHY, written_at=time.time()))
    probe = (
        "import sys; from bot.health.check import main; code = main([]); "
        "heavy = {'sqlalchemy', 'pydantic', 'numpy', 'nio', 'lancedb'} & set(sys.modules); "
        "print(sorted(heavy)); sys.exit(code)"
    )
    finished = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPOSITORY_ROOT,
        env={"MNEMO_LOGGING__STATUS_FILE": str(path), "PYTHONPATH": str(REPOSITORY_ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert finished.returncode == 0, finished
    assert finished.stdout == "healthy\n[]\n"
