"""Matrix adapter timings against a real, temporary Synapse.

Prints Synapse's start-up time, the bot's login and first-sync time, and the round trip of a
DM message (person sends -> adapter -> echo core -> answer arrives at the person's client),
in a plain and in an encrypted room. The core is an echo test double, so the numbers are the
adapter's and Synapse's share of an answer's latency, not the LLM's.

    .venv/bin/python -m benchmarks.matrix_roundtrip [--messages 20]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
import time
from pathlib import Path

from adapters.matrix import MatrixAdapter, log_in
from adapters.matrix.allowlist import AllowList
from adapters.matrix.settings import MatrixConnection, PasswordLogin
from tests.adapters.matrix.conftest import RecordingCore
from tests.adapters.matrix.people import Person
from tests.servers.synapse import SynapseServer, synapse_python


async def round_trips(person: Person, room_id: str, bot_id: str, count: int) -> list[float]:
    timings = []
    for number in range(count):
        began = time.perf_counter()
        sent = await person.send(room_id, f"message {number}")
        await person.wait_for_reply(bot_id, room_id, sent)
        timings.append((time.perf_counter() - began) * 1000)
    return timings


def describe(name: str, timings: list[float]) -> str:
    ordered = sorted(timings)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    return (
        f"{name:<22} n={len(timings):<3} median {statistics.median(timings):7.1f} ms   "
        f"p95 {p95:7.1f} ms   max {ordered[-1]:7.1f} ms"
    )


async def measure(directory: Path, server: SynapseServer, count: int) -> None:
    bot_account = server.register("mnemo")
    alice_account = server.register("alice")
    connection = MatrixConnection(
        server.url,
        bot_account.user_id,
        PasswordLogin(bot_account.password),
        directory / "bot-store",
        AllowList(("@*:localhost",)),
    )
    began = time.perf_counter()
    client = await log_in(connection)
    adapter = MatrixAdapter(
        client, RecordingCore(), connection.allowed_users, max_message_chars=4000
    )
    task = asyncio.create_task(adapter.run())
    await adapter.ready.wait()
    print(f"bot login + first sync  {(time.perf_counter() - began) * 1000:7.1f} ms")
    alice = await Person.log_in(server.url, alice_account, directory / "alice")
    try:
        for encrypted in (False, True):
            room_id = await alice.create_room(
                [bot_account.user_id], direct=True, encrypted=encrypted
            )
            await alice.wait_for_members(room_id, {alice.user_id, bot_account.user_id})
            await round_trips(alice, room_id, bot_account.user_id, 2)  # warm-up, not counted
            timings = await round_trips(alice, room_id, bot_account.user_id, count)
            print(describe("encrypted DM" if encrypted else "plain DM", timings))
    finally:
        await alice.close()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20)
    arguments = parser.parse_args()
    python = synapse_python()
    if python is None:
        raise SystemExit("Synapse is not installed: run scripts/install-synapse.sh")
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        server = SynapseServer(python, directory / "synapse")
        server.start()
        try:
            startup = server.startup_seconds or 0.0
            print(f"synapse start-up        {startup * 1000:7.1f} ms")
            asyncio.run(measure(directory, server, arguments.messages))
        finally:
            server.stop()


if __name__ == "__main__":
    main()
