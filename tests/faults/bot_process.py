"""Real bot processes for the fault suite, and what they left in their data folder.

:class:`BotProcess` runs ``tests/faults/driver.py`` (the real Application, many people over
JSON lines); :func:`run_mnemo` runs the real ``mnemo`` command line (``chat`` with piped
stdin, ``doctor``, ``reconcile`` ...). Both get their settings as ``mnemo`` does, from
``MNEMO_*`` variables made by :class:`BotSettings`. The functions at the end read the data
folder from outside, as an operator would: SQLite read-only, the index read-only, raw bytes.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import sqlite3
import sys
from collections.abc import Mapping
from contextlib import closing
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any, ClassVar
from urllib.parse import quote

from memory.index import LanceFactIndex
from tests.conftest import LOCAL_MODEL_DIRECTORY, REPOSITORY_ROOT
from tests.faults.driver import ANNOUNCE_INDEX_WRITES
from tests.faults.llm_stand_in import MODEL

START_SECONDS = 120.0


@dataclass(frozen=True)
class BotSettings:
    """The config of every process of one test: same data folder, same model server."""

    data_dir: Path
    llm_url: str
    llm_timeout_seconds: float = 30.0
    extra: Mapping[str, str] = field(default_factory=dict)
    # Where the processes' logs go: beside the data folder unless that disk is the test's.
    log_dir: Path | None = None

    @property
    def logs(self) -> Path:
        return self.log_dir or self.data_dir.parent

    def environment(self) -> dict[str, str]:
        settings = {
            "MNEMO_STORAGE__DATA_DIR": str(self.data_dir),
            "MNEMO_EMBEDDING__MODEL_PATH": str(LOCAL_MODEL_DIRECTORY),
            "MNEMO_MEMORY__RERANKER_MODEL": "",
            "MNEMO_LLM__BASE_URL": self.llm_url,
            "MNEMO_LLM__MODEL": MODEL,
            "MNEMO_LLM__TIMEOUT_SECONDS": str(self.llm_timeout_seconds),
            "MNEMO_CHAT__RATE_LIMIT_PER_MINUTE": "10000",
            "MNEMO_LOGGING__LEVEL": "INFO",
            # The driver lives in tests/, which is not installed.
            "PYTHONPATH": str(REPOSITORY_ROOT),
            **self.extra,
        }
        inherited = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
        return {**inherited, **settings}

    def with_extra(self, **extra: str) -> BotSettings:
        return replace(self, extra={**self.extra, **extra})


class BotProcess:
    """One running driver process: send messages, read replies and events, kill it."""

    # Each process of a test logs to its own file beside the data folder.
    _started = itertools.count(1)
    # Every process started and not yet ended: a failed test's are killed by the fixture.
    running: ClassVar[set[BotProcess]] = set()

    def __init__(self, process: asyncio.subprocess.Process, log: IO[bytes], log_path: Path):
        self.process = process
        self.pid = process.pid
        self.log_path = log_path
        self._log = log
        self._next_id = 0
        self._replies: dict[int, asyncio.Future[list[str]]] = {}
        # When the process wrote each answer, on its monotonic clock (the test's too).
        self.answered_at: dict[int, float] = {}
        self.events: list[dict[str, Any]] = []
        self._event_added = asyncio.Condition()
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def start(
        cls,
        settings: BotSettings,
        *,
        announce_index_writes: bool = False,
        wait_until_ready: bool = True,
    ) -> BotProcess:
        environment = settings.environment()
        if announce_index_writes:
            environment[ANNOUNCE_INDEX_WRITES] = "1"
        log_path = settings.logs / f"bot-{next(cls._started)}.log"
        log = log_path.open("wb")
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.faults.driver",
            cwd=settings.data_dir.parent,
            env=environment,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
        )
        bot = cls(process, log, log_path)
        cls.running.add(bot)
        if wait_until_ready:
            await bot.event("ready", within=START_SECONDS)
        return bot

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            record = json.loads(line)
            if "id" in record:
                self.answered_at[record["id"]] = record["at"]
                future = self._replies.get(record["id"])
                if future is not None and not future.done():
                    future.set_result(record["replies"])
                continue
            async with self._event_added:
                self.events.append(record)
                self._event_added.notify_all()
        for future in self._replies.values():
            if not future.done():
                future.set_exception(ConnectionError("the bot process ended without answering"))
        async with self._event_added:
            self._event_added.notify_all()

    # -- talking to it ---------------------------------------------------------------------

    async def send(self, user: str, text: str, *, room: str | None = None) -> int:
        """Hand a message to the process; returns its id (see :meth:`reply`)."""
        assert self.process.stdin is not None
        self._next_id += 1
        number = self._next_id
        self._replies[number] = asyncio.get_running_loop().create_future()
        line = json.dumps({"id": number, "user": user, "text": text, "room": room})
        self.process.stdin.write(line.encode() + b"\n")
        await self.process.stdin.drain()
        return number

    async def reply(self, number: int, *, within: float = 60.0) -> list[str]:
        """The replies to message ``number``, waiting for them."""
        return await asyncio.wait_for(asyncio.shield(self._replies[number]), within)

    async def say(
        self, user: str, text: str, *, room: str | None = None, within: float = 60.0
    ) -> str:
        """Send, wait for the one reply, return its text."""
        replies = await self.reply(await self.send(user, text, room=room), within=within)
        assert len(replies) == 1, replies
        return replies[0]

    async def event(self, name: str, *, after: int = 0, within: float = 60.0) -> dict[str, Any]:
        """The first event ``name`` among those from index ``after`` on, waiting for it."""

        def found() -> dict[str, Any] | None:
            return next((e for e in self.events[after:] if e.get("event") == name), None)

        async with asyncio.timeout(within), self._event_added:
            while (record := found()) is None:
                if self._reader.done():
                    raise AssertionError(f"the bot ended before {name!r}:\n{self.log()}")
                await self._event_added.wait()
        return record

    async def logged(self, text: str, *, within: float = 60.0) -> None:
        """Until the process's log has a line with ``text`` (what it tells the operator)."""
        # Another process's file: nothing to be notified by, so it is polled.
        async with asyncio.timeout(within):
            while True:
                if text in await asyncio.to_thread(self.log):
                    return
                await asyncio.sleep(0.2)

    # -- ending it ---------------------------------------------------------------------------

    async def kill(self) -> None:
        """SIGKILL: no clean-up of any kind, as a power cut or the OOM killer."""
        self.process.send_signal(signal.SIGKILL)
        await self._ended()

    async def stop(self, *, within: float = 120.0) -> int:
        """End of input: the process answers what is in flight, closes and exits."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            code = await asyncio.wait_for(self.process.wait(), within)
        finally:
            if self.process.returncode is None:
                self.process.send_signal(signal.SIGKILL)
            await self._ended()
        return code

    async def _ended(self) -> None:
        await self.process.wait()
        await self._reader
        self._log.close()
        BotProcess.running.discard(self)

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(encoding="utf-8", errors="replace")


@dataclass(frozen=True)
class Finished:
    code: int
    stdout: str
    stderr: str


async def run_mnemo(
    settings: BotSettings, *arguments: str, stdin: bytes = b"", within: float = 180.0
) -> Finished:
    """``mnemo ARGUMENTS`` as a real process, as an operator runs it; stdin piped in."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "adapters.main",
        *arguments,
        cwd=settings.data_dir.parent,
        env=settings.environment(),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(stdin), within)
    assert process.returncode is not None
    return Finished(
        process.returncode,
        stdout.decode("utf-8", errors="replace"),
        stderr.decode("utf-8", errors="replace"),
    )


# -- the data folder, read from outside --------------------------------------------------


@dataclass(frozen=True)
class StoredFact:
    id: int
    owner: str
    room: str
    text: str
    status: str


def _read_only(data_dir: Path) -> sqlite3.Connection:
    path = data_dir / "mnemo.sqlite3"
    return sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)


def _stored_facts(data_dir: Path) -> list[StoredFact]:
    with closing(_read_only(data_dir)) as connection:
        rows = connection.execute("SELECT id, owner, room, text, status FROM facts ORDER BY id")
        return [StoredFact(*row) for row in rows.fetchall()]


async def stored_facts(data_dir: Path) -> list[StoredFact]:
    return await asyncio.to_thread(_stored_facts, data_dir)


async def active_facts(data_dir: Path) -> list[StoredFact]:
    return [fact for fact in await stored_facts(data_dir) if fact.status == "active"]


def _count(data_dir: Path, table: str) -> int:
    with closing(_read_only(data_dir)) as connection:
        return int(connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


async def queued_writes(data_dir: Path) -> int:
    return await asyncio.to_thread(_count, data_dir, "pending_writes")


def _integrity(data_dir: Path) -> str:
    with closing(_read_only(data_dir)) as connection:
        return str(connection.execute("PRAGMA integrity_check").fetchone()[0])


async def integrity(data_dir: Path) -> str:
    return await asyncio.to_thread(_integrity, data_dir)


async def indexed_ids(data_dir: Path) -> set[int]:
    index = await LanceFactIndex.open_read_only(data_dir / "index")
    if index is None:
        return set()
    try:
        return set(await index.indexed_models())
    finally:
        await index.aclose()


def _files_holding(data_dir: Path, needle: bytes) -> list[Path]:
    return [
        path
        for path in sorted(data_dir.rglob("*"))
        if path.is_file() and needle in path.read_bytes()
    ]


async def files_holding(data_dir: Path, needle: str) -> list[Path]:
    """Every file under ``data_dir`` with ``needle`` (UTF-8) anywhere in its bytes."""
    return await asyncio.to_thread(_files_holding, data_dir, needle.encode("utf-8"))


async def learn_the_rest(settings: BotSettings) -> None:
    """Start the bot once more until nothing is queued (a stopped ``mnemo chat`` gives its
    queue only a short grace; the rest is learned at the next start)."""
    bot = await BotProcess.start(settings)
    await wait_until_learned(settings.data_dir)
    assert await bot.stop() == 0


async def wait_until_learned(data_dir: Path, *, within: float = 120.0) -> None:
    """Until no write is queued (the process learns in the background)."""
    # Another process's database: nothing to be notified by, so it is polled.
    async with asyncio.timeout(within):
        while True:
            if not await queued_writes(data_dir):
                return
            await asyncio.sleep(0.2)
