"""A bot process for the fault suite: the real Application, many people, JSON lines.

``python -m tests.faults.driver`` reads the config as ``mnemo`` does (``MNEMO_*``), takes the
data folder's lock as every writing command does, builds the real Application (SQLite,
LanceDB, the embedding model, the LLM over HTTP) and then acts as a chat platform with many
people: each stdin line is a message, handed to the core at once, so several people (or one
person's quick messages) are in flight together, in arrival order.

In:  ``{"id": 1, "user": "alice", "text": "...", "room": null}`` (``room`` null: a DM)
Out (each with ``"at"``, the process's ``time.monotonic()``):
     ``{"event": "built", "pid": N}`` before ``Application.start()``, ``{"event": "ready"}``
     after it, ``{"id": 1, "replies": ["..."]}`` per message, and with
     ``MNEMO_FAULTS_ANNOUNCE_INDEX_WRITES=1`` ``{"event": "index-write"}`` as each vector
     index write begins (a probe, so a test can kill the process during one).
At the end of input it waits for the answers in flight, closes the Application and prints
``{"event": "closed"}``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from bot.app import Application, build_application
from bot.config import Config, load_config
from bot.data_folder import DataAccess, DataFolderError, data_folder_access
from bot.messages import IncomingMessage
from memory.index import IndexedFact, LanceFactIndex

PLATFORM = "test"
ANNOUNCE_INDEX_WRITES = "MNEMO_FAULTS_ANNOUNCE_INDEX_WRITES"


def emit(record: dict[str, Any]) -> None:
    # CLOCK_MONOTONIC is one clock for every process: a test can subtract these.
    sys.stdout.write(json.dumps({**record, "at": time.monotonic()}) + "\n")
    sys.stdout.flush()


def message_from(request: dict[str, Any]) -> IncomingMessage:
    user = str(request["user"])
    room = request.get("room")
    return IncomingMessage(
        platform=PLATFORM,
        user_key=f"{PLATFORM}:{user}",
        display_name=user,
        room_key=f"{PLATFORM}:dm" if room is None else f"{PLATFORM}:{room}",
        text=str(request["text"]),
        time=datetime.now(UTC),
        is_direct=room is None,
        mentions_bot=True,
        message_id=f"{PLATFORM}-{uuid.uuid4().hex}",
    )


def announce_index_writes() -> None:
    """Print an event as each index write begins (test instrumentation of this process)."""
    upsert = LanceFactIndex.upsert

    async def announced(index: LanceFactIndex, facts: Sequence[IndexedFact]) -> None:
        if facts:
            emit({"event": "index-write", "facts": len(facts)})
        await upsert(index, facts)

    LanceFactIndex.upsert = announced  # type: ignore[method-assign, assignment]


async def answer(application: Application, request: dict[str, Any]) -> None:
    replies = await application.core.handle(message_from(request))
    emit({"id": request["id"], "replies": [reply.text for reply in replies]})


async def serve(application: Application) -> None:
    in_flight: set[asyncio.Task[None]] = set()
    while line := await asyncio.to_thread(sys.stdin.readline):
        if not line.strip():
            continue
        # A task per message, created in arrival order: the core orders one person's.
        task = asyncio.create_task(answer(application, json.loads(line)))
        in_flight.add(task)
        task.add_done_callback(in_flight.discard)
    await asyncio.gather(*in_flight)


async def run(config: Config) -> None:
    application = await build_application(config)
    emit({"event": "built", "pid": os.getpid()})
    try:
        await application.start()
        emit({"event": "ready"})
        await serve(application)
    finally:
        await application.aclose()
    emit({"event": "closed"})


def main() -> int:
    if os.environ.get(ANNOUNCE_INDEX_WRITES) == "1":
        announce_index_writes()
    config = load_config()
    logging.basicConfig(
        level=config.logging.level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        with data_folder_access(config, DataAccess.WRITE):
            asyncio.run(run(config))
    except DataFolderError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
