"""What a running process says about itself, and the judgement of it (standard library only).

The process rewrites the file every ``interval_seconds``: a file older than a few intervals
means its event loop is stuck or the process is gone. Beside that it says whether the chat
connection is up and whether its write queue moves: a message due for memory that has
waited longer than ``STALL_SECONDS`` while nothing was applied is a queue that stands still.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

# Beyond what a burst of messages or a model's slow answers make a queue wait.
STALL_SECONDS = 600.0
# Missed rewrites before the process counts as stuck (a busy machine delays a few).
MISSED_INTERVALS = 3


@dataclass(frozen=True, slots=True)
class Status:
    written_at: float
    interval_seconds: float
    # None: the process has no chat connection (``mnemo worker``).
    connected: bool | None
    # Whether this process applies queued writes, and whether its queue worker runs.
    applies_writes: bool
    worker_running: bool
    # How long the oldest write that is due has waited; None: none is due.
    oldest_due_seconds: float | None
    # Seconds since this process last applied a queued write; None: not since it started.
    last_applied_seconds: float | None

    def to_json(self) -> str:
        return json.dumps(asdict(self))


def write_status(path: Path, status: Status) -> None:
    """Replace the file whole (a reader never sees half of it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".status-")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(status.to_json())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_status(path: Path) -> Status:
    """The status in ``path``; ValueError (or OSError) if it is missing or not one."""
    data: Any = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    try:
        return Status(**data)
    except TypeError as error:
        raise ValueError(f"not a status: {error}") from error


def problem(status: Status, now: float) -> str | None:
    """What is wrong with the process, in one line; None when it is healthy."""
    age = now - status.written_at
    if age > MISSED_INTERVALS * status.interval_seconds:
        return f"the status was last written {age:.0f} s ago: the process is stuck or gone"
    if status.connected is False:
        return "not connected to the chat server"
    if status.applies_writes and not status.worker_running:
        return "the write queue's worker has stopped"
    waited = status.oldest_due_seconds
    if waited is not None and waited > STALL_SECONDS:
        applied = status.last_applied_seconds
        if applied is None or applied > STALL_SECONDS:
            since = "since start" if applied is None else f"for {applied:.0f} s"
            return (
                f"the write queue stands still: a message has waited {waited:.0f} s for "
                f"memory and nothing was applied {since}"
            )
    return None
