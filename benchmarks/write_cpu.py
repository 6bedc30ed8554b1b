"""The write queue alone: CPU per queued message, SQL statements, connections, scope loads.

    python benchmarks/write_cpu.py [--code DIR] [--people 50] [--messages 4] [--profile]

``--code`` is the folder whose ``bot`` and ``memory`` are measured (as in
``benchmarks/load_session.py``, whose people, facts and instant model this uses: 1,000 facts
per person, every message teaching two facts). ``--people`` x ``--messages`` statements are
queued first by a process that does not apply them; then a process that does is started and
the queue drained, with nobody waiting for a reply. Printed per message: the event loop's
CPU (``time.thread_time``) and the whole process's, the SQL statements and commits, the
SQLite connections opened, and the scope loads of the LanceDB scope cache (where the code
has one). ``--profile``: a cProfile of the event loop's thread, own time by package.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import cProfile
import resource
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

from benchmarks import load_session  # noqa: E402


class Counts:
    """SQL statements, commits and new connections, from SQLAlchemy's events."""

    def __init__(self) -> None:
        from sqlalchemy import event
        from sqlalchemy.engine import Engine
        from sqlalchemy.pool import Pool

        self.seen: collections.Counter[str] = collections.Counter()
        event.listen(Pool, "connect", lambda *_: self.count("connections"))
        event.listen(Engine, "before_cursor_execute", lambda *_: self.count("statements"))
        event.listen(Engine, "commit", lambda *_: self.count("commits"))

    def count(self, what: str) -> None:
        self.seen[what] += 1


async def queue_messages(data: Path, people: int, messages: int) -> None:
    from bot.app import build_application
    from bot.messages import IncomingMessage

    application = await build_application(
        load_session.session_config(data), llm=load_session.InstantModel(), apply_queued=False
    )
    try:
        for number in range(messages):
            for person in range(people):
                await application.core.handle(
                    IncomingMessage(
                        platform="console",
                        user_key=load_session.user_key(person),
                        display_name=f"Person {person}",
                        room_key="console:dm",
                        text=load_session.statement(1, person, number),
                        time=datetime(2026, 11, 30, tzinfo=UTC) + timedelta(seconds=number),
                        is_direct=True,
                        message_id=f"write-{person}-{number}",
                    )
                )
    finally:
        await application.aclose()


def scope_loads(application: Any) -> int | None:
    index = getattr(application.index, "_index", application.index)  # under the healing one
    cache = getattr(index, "scope_cache", None)
    return None if cache is None else int(cache.misses)


def print_profile(profile: cProfile.Profile, messages: int) -> None:
    # Imported here: reply_cpu imports bot, which must come from --code (put_code_first).
    from benchmarks.reply_cpu import own_seconds_by, package_of

    by_package = collections.Counter(
        own_seconds_by(profile, lambda filename, _, __: package_of(filename))
    )
    total = sum(by_package.values())
    print(f"event loop thread, own time by package ({total * 1000 / messages:.2f} ms/message):")
    for package, seconds in by_package.most_common(10):
        print(f"  {package:14s} {seconds * 1000 / messages:6.2f} ms  {100 * seconds / total:4.1f}%")


async def run(people: int, messages: int, profiled: bool) -> None:
    from bot.app import build_application

    counts = Counts()
    with tempfile.TemporaryDirectory() as directory:
        data = Path(directory) / "data"
        session = await load_session.open_session(data, load_session.InstantModel())
        await session.fill(people, 1000)
        await session.application.aclose()
        await queue_messages(data, people, messages)
        application = await build_application(
            load_session.session_config(data), llm=load_session.InstantModel(), apply_queued=True
        )
        try:
            counts.seen.clear()
            profile = cProfile.Profile(time.thread_time) if profiled else None
            loop_before, started = time.thread_time(), time.perf_counter()
            usage = resource.getrusage(resource.RUSAGE_SELF)
            if profile is not None:
                profile.enable()
            application.writer.start()
            while await asyncio.to_thread(session.queued) > 0:
                await application.writer.worker.drain()
            if profile is not None:
                profile.disable()
            after = resource.getrusage(resource.RUSAGE_SELF)
            count = people * messages
            process = after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime
            print(
                f"{count} messages drained in {time.perf_counter() - started:.1f} s: event loop "
                f"CPU {(time.thread_time() - loop_before) * 1000 / count:.1f} ms/message, "
                f"process CPU {process * 1000 / count:.1f} ms/message; per message: "
                + ", ".join(f"{what} {n / count:.2f}" for what, n in sorted(counts.seen.items()))
                + f"; scope loads {scope_loads(application)}"
            )
            if profile is not None:
                print_profile(profile, count)
        finally:
            await application.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--code", type=Path, default=REPOSITORY)
    parser.add_argument("--people", type=int, default=50)
    parser.add_argument("--messages", type=int, default=4)
    parser.add_argument("--profile", action="store_true")
    arguments = parser.parse_args()
    load_session.put_code_first(arguments.code.resolve())
    asyncio.run(run(arguments.people, arguments.messages, arguments.profile))


if __name__ == "__main__":
    main()
