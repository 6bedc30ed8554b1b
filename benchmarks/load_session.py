"""One code version under load: the child process that ``benchmarks/load.py`` starts.

    python benchmarks/load_session.py --code DIR --facts 1000 --scenarios 1x20,10x10,50x4

``--code`` is the folder whose ``bot`` and ``memory`` packages are measured (the current
worktree, or a worktree of an older commit); it goes first on ``sys.path`` before anything
of Mnemo is imported, so this file only uses what every version measured has: ``Config``,
``build_application``, ``core.handle``, the store's ``facts.add`` (in a ``Store.write`` job, or
in ``Store.transaction`` before it) and the index's ``upsert``.
It prints one JSON line with the results; everything else goes to stderr.

Each of ``--people`` people has ``--facts`` facts already stored (real sentences; their
vectors from the real all-MiniLM-L6-v2, one embedding per distinct sentence, reused by every
person). The LLM is an instant stand-in that answers as a model that follows the prompts
would: the reply "OK.", each statement's two facts on extraction, and on the decision ADD
for a new favourite and UPDATE of the first shown fact for a new home, so every write does
real work (extract, embed, candidates, decide, apply, index).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import itertools
import json
import logging
import os
import re
import resource
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPOSITORY = Path(__file__).resolve().parent.parent
MODEL_DIRECTORY = REPOSITORY.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
SUBJECTS = ("sister", "neighbour", "colleague", "cousin", "dentist", "landlord", "friend")
THINGS = ("book", "film", "dish", "city", "song", "game", "tea", "sport", "car", "painter")
FAVOURITE = re.compile(r"My \w+'s favourite \w+ is number \d+")
HOME = re.compile(r"I live in district \d+")
NEW_FACT = re.compile(r"^New fact (\d+): (.*)$", re.MULTILINE)
TAG = re.compile(r"number (\d+)|district (\d+)")
# A fact's number encodes who said it: TAG_BASE + scenario * 100_000 + person * 100 + message.
TAG_BASE = 7_000_000
# A write that failed waits out its backoff (30 s and more): a queue that has not moved for
# this long stops the run, which says why.
STUCK_SECONDS = 180.0
LAG_TICK = 0.02
# How often the queue's length is read while waiting for it to drain (benchmark overhead).
QUEUE_POLL = 0.05


def put_code_first(code: Path) -> None:
    sys.path.insert(0, str(code))


@dataclass(frozen=True)
class Scenario:
    """``NxM``: N people at once, each sending M messages one after another (waiting for
    each answer, as people chat); ``NxMb``: all N x M messages at once (a burst)."""

    people: int
    messages: int
    burst: bool

    @classmethod
    def parse(cls, text: str) -> Scenario:
        people, messages = text.rstrip("b").split("x")
        return cls(int(people), int(messages), text.endswith("b"))

    @property
    def label(self) -> str:
        if self.burst:
            return f"{self.people} x {self.messages}, all messages at once"
        return f"{self.people} x {self.messages}"


@dataclass(frozen=True)
class ScenarioResult:
    label: str
    replies: int
    reply_p50_ms: float
    reply_p95_ms: float
    reply_max_ms: float
    replies_per_second: float
    facts: int
    facts_per_second: float
    drain_seconds: float
    misplaced_facts: int
    missing_facts: int
    queued_after_drain: int
    locked_errors: int
    load_before: float
    load_after: float
    problems: tuple[str, ...]
    cpu_seconds: dict[str, float]
    # CPU milliseconds per reply until the last reply (whole process, and the event loop's
    # thread alone): what the replies cost, whatever share of the cores the process got.
    reply_cpu_ms: float
    reply_loop_cpu_ms: float
    loop_lag_p50_ms: float
    loop_lag_p99_ms: float
    loop_lag_max_ms: float


class InstantModel:
    """The LLM stand-in: answers at once, as a model that follows the prompts would."""

    def __init__(self) -> None:
        self.calls = 0

    @property
    def model_name(self) -> str:
        return "instant-stand-in"

    async def complete(
        self,
        messages: Sequence[Any],
        *,
        kind: Any = None,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float | None = None,
    ) -> str:
        self.calls += 1
        properties = (json_schema or {}).get("properties", {})
        # The message itself, also when the combined prompt lists known facts before it.
        last = str(messages[-1].content).rpartition("\n\nMessage:\n")[2]
        if "facts" in properties:
            return extraction_answer(last)
        if "decisions" in properties:
            return decision_answer(last)
        return "OK."

    async def complete_with_tools(self, messages: Sequence[Any], tools: Any, **_: Any) -> Any:
        from memory.llm import AssistantTurn

        return AssistantTurn("OK.")

    async def aclose(self) -> None:
        return None


def extraction_answer(message: str) -> str:
    texts = FAVOURITE.findall(message) + HOME.findall(message)
    facts = [{"text": text, "category": "other", "valid_from": None} for text in texts]
    return json.dumps({"facts": facts})


def decision_answer(prompt: str) -> str:
    decisions = []
    starts = list(NEW_FACT.finditer(prompt))
    for match, following in zip(starts, [*starts[1:], None], strict=True):
        body = prompt[match.start() : None if following is None else following.start()]
        has_candidates = "    1: " in body
        if match.group(2).startswith("I live in") and has_candidates:
            decisions.append({"fact": int(match.group(1)), "action": "UPDATE", "target": 1})
        else:
            decisions.append({"fact": int(match.group(1)), "action": "ADD", "target": None})
    return json.dumps({"decisions": decisions})


def stored_texts(count: int) -> list[str]:
    combos = itertools.cycle(itertools.product(SUBJECTS, THINGS))
    return [
        f"My {subject}'s favourite {thing} is number {number}"
        for number, (subject, thing) in zip(range(count), combos, strict=False)
    ]


def user_key(person: int) -> str:
    return f"console:person{person}"


def statement(scenario_number: int, person: int, message: int) -> str:
    tag = TAG_BASE + scenario_number * 100_000 + person * 100 + message
    subject = SUBJECTS[(person + message) % len(SUBJECTS)]
    thing = THINGS[message % len(THINGS)]
    return f"My {subject}'s favourite {thing} is number {tag}, and I live in district {tag}."


def thread_group(name: str) -> str:
    """Which part of the process a thread works for, by its Python or OS name."""
    if name == "MainThread":
        return "event loop (main thread)"
    if name.startswith("asyncio_"):
        return "to_thread pool (embedding)"
    if "_connection_worker_thread" in name:
        return "SQLite (aiosqlite threads)"
    if name.startswith("LanceDB"):
        return "LanceDB's Python loop"
    if name.startswith(("lance", "tokio")):
        return "LanceDB (Rust threads)"
    if name == "python":
        # Native threads that kept the process's name: ONNX Runtime's intra-op pool.
        return "ONNX Runtime threads (embedding)"
    return f"other: {name}"


@dataclass(frozen=True)
class ThreadTimes:
    """CPU seconds (user + system) used so far: each thread's by id, and the whole process's."""

    threads: dict[int, tuple[str, float]]
    process: float

    @classmethod
    def now(cls) -> ThreadTimes:
        python_names = {thread.native_id: thread.name for thread in threading.enumerate()}
        ticks = os.sysconf("SC_CLK_TCK")
        threads: dict[int, tuple[str, float]] = {}
        for task in Path(f"/proc/{os.getpid()}/task").iterdir():
            try:
                comm = (task / "comm").read_text().strip()
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # the thread ended meanwhile
            # utime and stime are fields 14 and 15 of stat, counted after the ")" of the name.
            used = (int(fields[11]) + int(fields[12])) / ticks
            thread_id = int(task.name)
            threads[thread_id] = (thread_group(python_names.get(thread_id, comm)), used)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return cls(threads, usage.ru_utime + usage.ru_stime)

    def since(self, earlier: ThreadTimes) -> dict[str, float]:
        """Seconds per thread group between ``earlier`` and now; a thread that ended meanwhile
        (aiosqlite closes a connection's thread with it) counts in the rest."""
        seconds: dict[str, float] = {}
        for thread_id, (group, used) in self.threads.items():
            before = earlier.threads.get(thread_id, (group, 0.0))[1]
            seconds[group] = seconds.get(group, 0.0) + used - before
        whole = self.process - earlier.process
        seconds["threads that ended meanwhile"] = max(0.0, whole - sum(seconds.values()))
        seconds["whole process"] = whole
        return {group: round(value, 2) for group, value in sorted(seconds.items())}


class LoopLag:
    """How late the event loop runs a 20 ms timer: the time it was blocked by something."""

    def __init__(self) -> None:
        self.lags: list[float] = []
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.lags = []
        self._task = asyncio.get_running_loop().create_task(self._tick())

    async def stop(self) -> list[float]:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        return self.lags

    async def _tick(self) -> None:
        while True:
            started = time.perf_counter()
            await asyncio.sleep(LAG_TICK)
            self.lags.append((time.perf_counter() - started - LAG_TICK) * 1000)


class LockedErrors(logging.Handler):
    """Counts log records that mention a locked database."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0
        self.examples: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += str(record.exc_info[1])
        if "locked" in text.lower():
            self.count += 1
            if len(self.examples) < 3:
                self.examples.append(f"{record.name}: {text[:300]}")


class Session:
    def __init__(self, application: Any, database: Path, model: InstantModel) -> None:
        self.application = application
        self.database = database
        self.model = model

    async def fill(self, people: int, count: int) -> None:
        from memory.index.base import IndexedFact
        from memory.scope import Scope

        texts = stored_texts(count)
        # People with 1,000 facts have spoken before: their last message, a day ago.
        spoke_at = datetime.now(UTC) - timedelta(days=1)
        vectors = await self.application.embedder.embed(texts)
        model = self.application.embedder.model_name
        for person in range(people):
            scope = Scope(user_key(person), "console:dm")
            facts = await self.add_person(scope, texts, spoke_at)
            await self.application.index.upsert(
                [
                    IndexedFact(fact.id, fact.owner, fact.room, fact.text, vector, model)
                    for fact, vector in zip(facts, vectors, strict=True)
                ]
            )
        # As reconcile does at start-up: compact the bulk-written fragments.
        await self.application.index.optimize()

    async def add_person(self, scope: Any, texts: list[str], spoke_at: datetime) -> list[Any]:
        """``texts`` as the person's facts and ``texts[0]`` as their last message, in one
        transaction; the facts stored."""
        from memory.records import NewFact, Role

        store = self.application.store
        model = self.application.embedder.model_name

        def add(transaction: Any) -> list[Any]:
            facts = [
                transaction.facts.add(scope, NewFact(text), embedding_model=model) for text in texts
            ]
            transaction.turns.add(
                scope.room, Role.USER, texts[0], author=scope.owner, created_at=spoke_at
            )
            return facts

        if hasattr(store, "write"):
            return list(await store.write(add))
        # Versions before ``Store.write``: an async transaction over async repositories.
        async with store.transaction() as transaction:
            facts = [
                await transaction.facts.add(scope, NewFact(text), embedding_model=model)
                for text in texts
            ]
            await transaction.turns.add(
                scope.room, Role.USER, texts[0], author=scope.owner, created_at=spoke_at
            )
        return facts

    async def search_each_scope(self, people: int) -> None:
        """One search of each person's scope, so that whatever the code keeps of a scope in
        memory (the scope cache) is loaded before the timed scenarios, in every version."""
        from memory.scope import Scope

        index = self.application.index
        vector = (await self.application.embedder.embed(["warm"]))[0]
        # Versions before the search by model took no ``model``.
        by_model = "model" in inspect.signature(index.search).parameters
        model = {"model": self.application.embedder.model_name} if by_model else {}
        for person in range(people):
            scope = Scope(user_key(person), "console:dm")
            await index.search(scope, vector, limit=1, **model)

    async def send(self, person: int, number: int, text: str) -> float:
        from bot.messages import IncomingMessage

        message = IncomingMessage(
            platform="console",
            user_key=user_key(person),
            display_name=f"Person {person}",
            room_key="console:dm",
            text=text,
            time=datetime(2026, 11, 30, tzinfo=UTC) + timedelta(seconds=number),
            is_direct=True,
            message_id=f"load-{person}-{number}-{text[-12:]}",
        )
        started = time.perf_counter()
        replies = await self.application.core.handle(message)
        elapsed = time.perf_counter() - started
        if not replies or replies[0].text != "OK.":
            raise RuntimeError(f"unexpected reply to {text!r}: {replies!r}")
        return elapsed

    async def person_sends(
        self, scenario: Scenario, number: int, person: int
    ) -> list[tuple[float, float]]:
        """(latency, finish time) of each of one person's messages."""
        texts = [statement(number, person, m) for m in range(scenario.messages)]
        if not scenario.burst:
            timings = []
            for m, text in enumerate(texts):
                latency = await self.send(person, number * 1000 + m, text)
                timings.append((latency, time.perf_counter()))
            return timings
        return list(
            await asyncio.gather(
                *(self.timed(person, number * 1000 + m, text) for m, text in enumerate(texts))
            )
        )

    async def timed(self, person: int, number: int, text: str) -> tuple[float, float]:
        latency = await self.send(person, number, text)
        return latency, time.perf_counter()

    async def wait_for_queue(self) -> None:
        """Until every write handed over so far is applied (its queue row gone)."""
        # The base code hands messages to the queue in background tasks after the reply; the
        # current code queues them before it (write-ahead) and has no such tasks.
        hand_offs = getattr(self.application.core, "wait_idle", None)
        if hand_offs is not None:
            await hand_offs()
        last_change, last_count = time.perf_counter(), -1
        while (count := await asyncio.to_thread(self.queued)) > 0:
            if count != last_count:
                last_change, last_count = time.perf_counter(), count
            elif time.perf_counter() - last_change > STUCK_SECONDS:
                raise RuntimeError(f"the queue did not drain: {self.queue_errors()}")
            await asyncio.sleep(QUEUE_POLL)
        drain = getattr(self.application.writer, "drain", None)
        if drain is not None:
            await drain()

    def queued(self) -> int:
        with sqlite3.connect(self.database, timeout=30) as connection:
            (count,) = connection.execute("SELECT count(*) FROM pending_writes").fetchone()
        return int(count)

    def queue_errors(self) -> list[str]:
        with sqlite3.connect(self.database, timeout=30) as connection:
            rows = connection.execute("SELECT last_error FROM pending_writes").fetchall()
        return sorted({str(error) for (error,) in rows})

    def check_scopes(self, number: int, scenario: Scenario) -> tuple[int, int, list[str]]:
        """(facts of this scenario, misplaced, messages missing a fact): each fact in its
        speaker's scope."""
        low = TAG_BASE + number * 100_000
        with sqlite3.connect(self.database, timeout=30) as connection:
            rows = connection.execute("SELECT owner, room, text FROM facts").fetchall()
        found: dict[tuple[int, int], set[str]] = {}
        misplaced = 0
        for owner, room, text in rows:
            match = TAG.search(text)
            if match is None:
                continue
            tag = int(match.group(1) or match.group(2))
            if not low <= tag < low + 100_000:
                continue
            person, message = divmod(tag - low, 100)
            if owner != user_key(person) or room != "console:dm":
                misplaced += 1
            found.setdefault((person, message), set()).add(text.split(" ")[-3])
        missing = [
            f"person {person} message {message}: {sorted(found.get((person, message), set()))}"
            for person in range(scenario.people)
            for message in range(scenario.messages)
            if len(found.get((person, message), set())) != 2
        ]
        count = sum(len(kinds) for kinds in found.values())
        return count, misplaced, missing

    async def run(self, number: int, scenario: Scenario, locked: LockedErrors) -> ScenarioResult:
        import numpy as np

        load_before = os.getloadavg()[0]
        locked.count = 0
        locked.examples = []
        cpu_before = ThreadTimes.now()
        lag = LoopLag()
        lag.start()
        started = time.perf_counter()
        per_person = await asyncio.gather(
            *(self.person_sends(scenario, number, p) for p in range(scenario.people))
        )
        timings = [timing for person in per_person for timing in person]
        last_reply = max(finish for _, finish in timings) - started
        reply_cpu = ThreadTimes.now().since(cpu_before)
        await self.wait_for_queue()
        drained = time.perf_counter() - started
        cpu_after = ThreadTimes.now()
        lags = np.asarray(await lag.stop())
        facts, misplaced, missing = self.check_scopes(number, scenario)
        latencies = np.asarray([latency for latency, _ in timings]) * 1000
        return ScenarioResult(
            label=scenario.label,
            replies=len(timings),
            reply_p50_ms=float(np.percentile(latencies, 50)),
            reply_p95_ms=float(np.percentile(latencies, 95)),
            reply_max_ms=float(latencies.max()),
            replies_per_second=len(timings) / last_reply,
            facts=facts,
            facts_per_second=facts / drained,
            drain_seconds=drained,
            misplaced_facts=misplaced,
            missing_facts=len(missing),
            queued_after_drain=await asyncio.to_thread(self.queued),
            locked_errors=locked.count,
            load_before=load_before,
            load_after=os.getloadavg()[0],
            problems=(*locked.examples, *missing[:3]),
            cpu_seconds=cpu_after.since(cpu_before),
            reply_cpu_ms=reply_cpu["whole process"] * 1000 / len(timings),
            reply_loop_cpu_ms=reply_cpu.get("event loop (main thread)", 0.0) * 1000 / len(timings),
            loop_lag_p50_ms=float(np.percentile(lags, 50)),
            loop_lag_p99_ms=float(np.percentile(lags, 99)),
            loop_lag_max_ms=float(lags.max()),
        )


def session_config(data_dir: Path, background_calls: int | None = None) -> Any:
    """The benchmark's config: the offline model, no reranker, no rate limit (a ``Config`` of
    the code under test, imported here after :func:`put_code_first`); ``background_calls``
    where the code has that setting (0e8e50a sent up to four at once, always)."""
    from bot.config import Config, LLMSettings

    settings: dict[str, Any] = {
        "storage": {"data_dir": str(data_dir)},
        "embedding": {"model_path": str(MODEL_DIRECTORY)},
        "memory": {"reranker_model": ""},
        "chat": {"rate_limit_per_minute": 1_000_000},
    }
    if background_calls is not None and "background_calls" in LLMSettings.model_fields:
        settings["llm"] = {"background_calls": background_calls}
    return Config.model_validate(settings)


async def open_session(
    data_dir: Path, model: InstantModel, background_calls: int | None = None
) -> Session:
    from bot.app import build_application

    config = session_config(data_dir, background_calls)
    # The embedder as each version builds it from the config (its own defaults).
    application = await build_application(config, llm=model)
    database = Path(config.storage.database_path)
    return Session(application, database, model)


class Profiler:
    """py-spy sampling this very process while open: the thread holding the GIL (Python
    CPU time), as raw collapsed stacks."""

    def __init__(self, output: Path | None) -> None:
        self.output = output
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Profiler:
        if self.output is not None:
            py_spy = Path(sys.executable).parent / "py-spy"
            command = [str(py_spy), "record", "--pid", str(os.getpid()), "--threads", "--gil"]
            command += ["--format", "raw", "--rate", "50", "--output", str(self.output)]
            self.process = subprocess.Popen(command, stdout=sys.stderr, stderr=sys.stderr)
            time.sleep(1.0)  # py-spy attaches
        return self

    def __exit__(self, *_: object) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait(timeout=60)


async def measure(
    scenarios: Sequence[Scenario],
    people: int,
    fact_count: int,
    profile: Path | None,
    warm: bool = False,
    background_calls: int | None = None,
) -> dict[str, Any]:
    locked = LockedErrors()
    logging.getLogger().addHandler(locked)
    model = InstantModel()
    with tempfile.TemporaryDirectory() as directory:
        session = await open_session(Path(directory) / "data", model, background_calls)
        try:
            started = time.perf_counter()
            await session.fill(people, fact_count)
            print(
                f"filled {people} x {fact_count} facts in {time.perf_counter() - started:.0f} s",
                file=sys.stderr,
            )
            await session.application.start()
            # Where the code loads the last speakers' scopes at start (a --base before the
            # one writer), the people write after it has: a restart, then people writing.
            warming = getattr(session.application, "warming", None)
            if warming is not None:
                await warming
            if warm:
                await session.search_each_scope(people)
            # Warm-up (not reported): SQLite, LanceDB and ONNX load their caches.
            await session.run(99, Scenario(2, 3, False), locked)
            results = []
            with Profiler(profile):
                for number, scenario in enumerate(scenarios):
                    result = await session.run(number, scenario, locked)
                    print(result, file=sys.stderr)
                    results.append(asdict(result))
        finally:
            await session.application.aclose()
    return {"results": results, "llm_calls": model.calls}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--code", type=Path, default=REPOSITORY)
    parser.add_argument("--facts", type=int, default=1000)
    parser.add_argument("--scenarios", default="1x20,10x10,50x4,50x4b")
    parser.add_argument(
        "--profile", type=Path, default=None, help="py-spy raw stacks of the measured part"
    )
    parser.add_argument(
        "--warm", action="store_true", help="search each person's scope once before timing"
    )
    parser.add_argument("--background-calls", type=int, default=None, help="llm.background_calls")
    arguments = parser.parse_args()
    put_code_first(arguments.code.resolve())
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    scenarios = [Scenario.parse(text) for text in arguments.scenarios.split(",")]
    people = max(scenario.people for scenario in scenarios)
    report = asyncio.run(
        measure(
            scenarios,
            people,
            arguments.facts,
            arguments.profile,
            arguments.warm,
            arguments.background_calls,
        )
    )
    print(json.dumps(report))


if __name__ == "__main__":
    main()
