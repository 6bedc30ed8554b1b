"""Streamed replies as a person's client sees them, per platform: how long after the model's
first token the first text of the answer shows, how the edits follow, and whether the last
one is the whole answer.

    .venv/bin/python -m benchmarks.stream_first_text [--messages 10] [--tokens 40]
        [--per-second 8] [--platforms console discord matrix] [--base-url URL --model NAME]
        [--json]

Everything but the model is real and in this process: the core (SQLite, LanceDB,
all-MiniLM-L6-v2) built from a config as ``mnemo`` builds it, each adapter with its own edit
interval where ``chat.stream_replies`` streams (the default: all), and on each side a
person's client. Console: ``ConsoleSession`` printing to a recording screen. Discord:
discord.py and Mnemo's client against the fake Discord of the tests (gateway and REST on
127.0.0.1); what the person sees is the fake API receiving the message and its edits.
Matrix: a temporary Synapse (its rate limits raised, as in the tests), the bot's
``MatrixAdapter``, and a matrix-nio client of the person's, in a DM without and with
encryption; the person sees what their sync receives.

The model is :class:`PacedModelServer` on 127.0.0.1, a test double of a CPU-bound model
server (``--tokens`` tokens at ``--per-second``), or with ``--base-url`` a running
OpenAI-compatible server. Between the bot and the model the recording proxy of
``benchmarks/first_text_session.py`` notes when the answer's first token passes. Each
platform gets one warm-up message, then ``--messages`` DM messages, one at a time with the
write queue drained between them. Measured per message:

- from the model's first token to the first text of the answer at the person's client;
- how many edits followed it, and the largest gap between two updates the client saw;
- whether the text shown at the end equals the answer the bot stored (a mismatch is printed).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import itertools
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Protocol

import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route
from discord.utils import time_snowflake
from nio import MatrixRoom, RoomMessage

from adapters.console.session import ConsoleIdentity, ConsoleSession
from adapters.discord.access import AccessPolicy
from adapters.discord.streaming import EDIT_INTERVAL_SECONDS as DISCORD_INTERVAL
from adapters.matrix import MatrixAdapter, log_in
from adapters.matrix.allowlist import AllowList
from adapters.matrix.settings import MatrixConnection, PasswordLogin
from adapters.matrix.streaming import EDIT_INTERVAL_SECONDS as MATRIX_INTERVAL
from benchmarks import real_model
from benchmarks.first_text import percentile, spread
from benchmarks.first_text_session import QUESTIONS, Call, Recorder, proxy
from benchmarks.real_model import DEFAULT_MODEL
from bot.app import Application, build_application
from bot.config import Config
from memory.records import Role
from memory.scope import direct_room_key
from tests.adapters.discord import payloads
from tests.adapters.discord.conftest import running
from tests.adapters.discord.fake_discord import FakeDiscord
from tests.adapters.matrix.people import Person
from tests.adapters.matrix.rooms import open_dm
from tests.conftest import real_embedder
from tests.servers.loopback import LoopbackServer
from tests.servers.synapse import SynapseServer, synapse_python

DOUBLE_MODEL = "paced-test-model"
PLATFORMS = ("console", "discord", "matrix")
SENTENCE = "A streamed answer grows one token at a time, as a model on a small CPU writes it."
# How long the text shown may take to become the whole answer once the bot stored it.
SETTLE_SECONDS = 15.0

# ---- the model server (test double) ------------------------------------------------------


def answer_tokens(count: int) -> list[str]:
    """``count`` tokens of an answer: words, each after the first with its leading space."""
    words = itertools.islice(itertools.cycle(SENTENCE.split()), count)
    return [word if number == 0 else f" {word}" for number, word in enumerate(words)]


def chunk(delta: dict[str, str], finish_reason: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
    return {"object": "chat.completion.chunk", "model": DOUBLE_MODEL, "choices": [choice]}


def sse_events(tokens: list[str]) -> Iterator[bytes]:
    """A streamed chat completion as llama-server frames it: one event per token, the
    finish reason, then ``[DONE]``."""
    for token in tokens:
        yield f"data: {json.dumps(chunk({'content': token}))}\n\n".encode()
    yield f"data: {json.dumps(chunk({}, 'stop'))}\n\n".encode()
    yield b"data: [DONE]\n\n"


def completion(text: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": text}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return {"object": "chat.completion", "model": DOUBLE_MODEL, "choices": [choice]}


@dataclass
class PacedModelServer(LoopbackServer):
    """Test double of an OpenAI-compatible model server on a CPU: a streamed call gets
    ``tokens`` tokens, one every ``1 / per_second`` s; any other call (extraction and the
    memory's other structured calls) at once ``{"facts": []}``, so nothing is learned."""

    tokens: int = 40
    per_second: float = 8.0

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                if self.path != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no {self.path} here"}})
                elif body.get("stream"):
                    self._stream()
                else:
                    self._send(200, completion(json.dumps({"facts": []})))

            def _stream(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                events = sse_events(answer_tokens(owner.tokens))
                for number, event in enumerate(events):
                    if number < owner.tokens:
                        time.sleep(1 / owner.per_second)  # a thread of its own per request
                    self.wfile.write(event)
                    self.wfile.flush()
                self.close_connection = True

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        return Handler


# ---- what the person's client saw ----------------------------------------------------------


@dataclass(frozen=True)
class Seen:
    """One answer at the person's client: when each update of it arrived (the first text,
    then each edit), and the text of each message it is in, as shown now."""

    times: list[float]
    texts: list[str]


class Platform(Protocol):
    name: str
    room_key: str

    async def send(self, text: str) -> None:
        """The person sends ``text`` to the bot in their DM (returns once it is sent)."""
        ...

    def seen(self) -> Seen | None:
        """The answer to the last message sent, as the client has it so far."""
        ...


class Screen(io.StringIO):
    """The console's terminal: each write and when it came."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[tuple[float, str]] = []

    def write(self, text: str) -> int:
        self.writes.append((time.monotonic(), text))
        return super().write(text)


class ConsolePlatform:
    name = "console"
    room_key = direct_room_key("console")

    def __init__(self, application: Application) -> None:
        self.screen = Screen()
        chat = application.config.chat
        self.prompt = f"{chat.bot_name}> "
        self.session = ConsoleSession(
            application.core,
            ConsoleIdentity("alice"),
            read_line=self._no_lines,
            output=self.screen,
            export_directory=Path(tempfile.gettempdir()),
            bot_name=chat.bot_name,
            stream=chat.streams_on("console"),
        )

    @staticmethod
    async def _no_lines() -> str | None:
        return None

    async def send(self, text: str) -> None:
        self.screen.writes.clear()
        await self.session.send(text)  # returns once the whole answer is printed

    def seen(self) -> Seen | None:
        shown = [(at, text) for at, text in self.screen.writes if text.strip()]
        if not shown:
            return None
        printed = "".join(text for _, text in self.screen.writes)
        return Seen([at for at, _ in shown], [printed.strip().removeprefix(self.prompt)])


class DiscordPlatform:
    name = "discord"
    room_key = direct_room_key("discord")

    def __init__(self, fake: FakeDiscord) -> None:
        self.fake = fake
        self.ids = itertools.count(time_snowflake(payloads.MESSAGE_TIME))
        self.requests_before = 0
        self.sent_before = 0

    async def send(self, text: str) -> None:
        self.requests_before, self.sent_before = len(self.fake.requests), len(self.fake.sent_ids)
        message = payloads.message(
            next(self.ids), payloads.DM_CHANNEL_ID, payloads.ALICE, text, guild_id=None
        )
        await self.fake.dispatch("MESSAGE_CREATE", message)

    def seen(self) -> Seen | None:
        messages = f"/channels/{payloads.DM_CHANNEL_ID}/messages"
        updates = [
            request.at
            for request in self.fake.requests[self.requests_before :]
            if request.status == 200
            and (
                (request.method == "POST" and request.path == messages)
                or (request.method == "PATCH" and request.path.startswith(messages + "/"))
            )
        ]
        if not updates:
            return None
        return Seen(updates, self.fake.final_texts()[self.sent_before :])


@dataclass
class MatrixClientView:
    """What a person's matrix-nio client received from the bot, with when each event came."""

    bot_id: str
    events: list[tuple[float, str, str, dict[str, Any]]] = field(default_factory=list)

    async def on_message(self, room: MatrixRoom, event: RoomMessage) -> None:
        if event.sender == self.bot_id:
            content = event.source.get("content", {})
            self.events.append((time.monotonic(), room.room_id, event.event_id, content))

    def answer_to(self, room_id: str, asked: str) -> Seen | None:
        """The bot's reply to event ``asked`` and its ``m.replace`` edits, in arrival order."""
        first = next(
            (
                (at, event_id, content)
                for at, room, event_id, content in self.events
                if room == room_id
                and content.get("m.relates_to", {}).get("m.in_reply_to", {}).get("event_id")
                == asked
            ),
            None,
        )
        if first is None:
            return None
        first_at, first_id, first_content = first
        edits = [
            (at, content)
            for at, room, _, content in self.events
            if room == room_id
            and content.get("m.relates_to", {}).get("rel_type") == "m.replace"
            and content["m.relates_to"].get("event_id") == first_id
        ]
        text = edits[-1][1]["m.new_content"]["body"] if edits else first_content["body"]
        return Seen([first_at, *(at for at, _ in edits)], [text])


class MatrixPlatform:
    room_key = direct_room_key("matrix")

    def __init__(self, name: str, person: Person, view: MatrixClientView, room_id: str) -> None:
        self.name = name
        self.person = person
        self.view = view
        self.room_id = room_id
        self.asked = ""

    async def send(self, text: str) -> None:
        self.asked = await self.person.send(self.room_id, text)

    def seen(self) -> Seen | None:
        return self.view.answer_to(self.room_id, self.asked)


# ---- one message, measured -----------------------------------------------------------------


async def until(holds: Callable[[], bool], seconds: float) -> bool:
    """Whether ``holds()`` became true within ``seconds`` (checked every 50 ms)."""
    deadline = time.monotonic() + seconds
    while not holds():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def last_answer(application: Application, room_key: str) -> tuple[int, str] | None:
    """The id and text of the bot's last stored answer in ``room_key``."""
    turns = await application.store.read(lambda tx: tx.turns.recent(room_key, limit=2))
    answers = [turn for turn in turns if turn.role is Role.ASSISTANT]
    return (answers[-1].id, answers[-1].text) if answers else None


async def next_answer(
    application: Application, room_key: str, before: tuple[int, str] | None, seconds: float
) -> str:
    """The text of the answer stored after ``before``, waiting for it."""
    deadline = time.monotonic() + seconds
    while (answer := await last_answer(application, room_key)) == before or answer is None:
        if time.monotonic() > deadline:
            raise SystemExit(f"no answer was stored in {room_key} within {seconds:.0f} s")
        await asyncio.sleep(0.05)
    return answer[1]


def first_streamed(calls: list[Call]) -> Call | None:
    return next((call for call in calls if call.stream and call.first_token is not None), None)


@dataclass(frozen=True)
class Sample:
    platform: str
    after_first_token_ms: float
    edits: int
    largest_gap_ms: float | None
    whole: bool


async def measure_one(
    platform: Platform, text: str, application: Application, recorder: Recorder, wait: float
) -> Sample:
    await application.writer.drain()
    calls_before = len(recorder.calls)
    stored_before = await last_answer(application, platform.room_key)
    await platform.send(text)
    # The proxy notes a call once it ended; the answer is stored just after that.
    await until(lambda: first_streamed(recorder.calls[calls_before:]) is not None, wait)
    call = first_streamed(recorder.calls[calls_before:])
    if call is None or call.first_token is None:
        raise SystemExit(f"{platform.name}: no streamed model call was seen for {text!r}")
    answer = await next_answer(application, platform.room_key, stored_before, SETTLE_SECONDS)

    def whole() -> bool:
        seen = platform.seen()
        return seen is not None and seen.texts == [answer]

    matched = await until(whole, SETTLE_SECONDS)
    seen = platform.seen()
    if seen is None:
        raise SystemExit(f"{platform.name}: nothing of the answer to {text!r} was shown")
    if not matched:
        print(
            f"MISMATCH on {platform.name}: shown {seen.texts!r}, stored {answer!r}", file=sys.stderr
        )
    gaps = [later - earlier for earlier, later in itertools.pairwise(seen.times)]
    return Sample(
        platform=platform.name,
        after_first_token_ms=(seen.times[0] - call.first_token) * 1000,
        edits=len(seen.times) - 1,
        largest_gap_ms=max(gaps) * 1000 if gaps else None,
        whole=matched,
    )


async def measure(
    platform: Platform,
    application: Application,
    recorder: Recorder,
    arguments: argparse.Namespace,
) -> list[Sample]:
    log(f"{platform.name}: warm-up")
    await measure_one(platform, QUESTIONS[-1], application, recorder, arguments.wait)
    samples = []
    for number in range(arguments.messages):
        question = QUESTIONS[number % len(QUESTIONS)]
        samples.append(await measure_one(platform, question, application, recorder, arguments.wait))
        log(f"{platform.name}: {samples[-1]}")
    return samples


# ---- the platforms, set up -------------------------------------------------------------------


@contextlib.asynccontextmanager
async def discord_platform(application: Application) -> AsyncIterator[DiscordPlatform]:
    fake = FakeDiscord()
    await fake.start()
    fake.ready_guilds = [payloads.guild()]
    Route.BASE = fake.base_url
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(fake.gateway_url)
    interval = DISCORD_INTERVAL if application.config.chat.streams_on("discord") else None
    try:
        async with running(application.core, AccessPolicy(), stream_interval=interval):
            yield DiscordPlatform(fake)
    finally:
        await fake.aclose()


@contextlib.asynccontextmanager
async def matrix_platforms(
    application: Application, directory: Path
) -> AsyncIterator[list[MatrixPlatform]]:
    python = synapse_python()
    if python is None:
        raise SystemExit("Synapse is not installed: run scripts/install-synapse.sh")
    server = SynapseServer(python, directory / "synapse")
    await asyncio.to_thread(server.start)
    try:
        bot_account, alice_account = server.register("mnemo"), server.register("alice")
        connection = MatrixConnection(
            server.url,
            bot_account.user_id,
            PasswordLogin(bot_account.password),
            directory / "bot-store",
            AllowList(("@*:localhost",)),
        )
        client = await log_in(connection)
        streams = application.config.chat.streams_on("matrix")
        adapter = MatrixAdapter(
            client,
            application.core,
            connection.allowed_users,
            max_message_chars=application.config.chat.max_message_chars,
            stream_interval=MATRIX_INTERVAL if streams else None,
        )
        task = asyncio.create_task(adapter.run())
        await adapter.ready.wait()
        alice = await Person.log_in(server.url, alice_account, directory / "alice")
        view = MatrixClientView(bot_account.user_id)
        alice.client.add_event_callback(view.on_message, RoomMessage)
        try:
            plain = await open_dm(alice, adapter.user_id)
            encrypted = await open_dm(alice, adapter.user_id, encrypted=True)
            yield [
                MatrixPlatform("matrix", alice, view, plain),
                MatrixPlatform("matrix encrypted", alice, view, encrypted),
            ]
        finally:
            await alice.close()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await client.close()
    finally:
        await asyncio.to_thread(server.stop)


def config(directory: Path, base_url: str, model: str) -> Config:
    settings = real_model.config(directory / "data", base_url, model)
    # One person sends every message of a platform within a few minutes.
    chat = settings.chat.model_copy(update={"rate_limit_per_minute": 600})
    return settings.model_copy(update={"chat": chat})


async def run(arguments: argparse.Namespace, model_url: str, model: str) -> list[Sample]:
    recorder = Recorder()
    relay = proxy(model_url, recorder)
    host, port = relay.server_address[:2]
    samples: list[Sample] = []
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        settings = config(directory, f"http://{host!s}:{port}/v1", model)
        application = await build_application(settings, embedder=real_embedder())
        await application.start()
        try:
            if "console" in arguments.platforms:
                platform = ConsolePlatform(application)
                samples += await measure(platform, application, recorder, arguments)
            if "discord" in arguments.platforms:
                async with discord_platform(application) as discord:
                    samples += await measure(discord, application, recorder, arguments)
            if "matrix" in arguments.platforms:
                async with matrix_platforms(application, directory) as rooms:
                    for room in rooms:
                        samples += await measure(room, application, recorder, arguments)
        finally:
            await application.aclose()
            relay.shutdown()
    return samples


# ---- the report ------------------------------------------------------------------------------


def by_platform(samples: list[Sample]) -> dict[str, list[Sample]]:
    grouped: dict[str, list[Sample]] = {}
    for sample in samples:
        grouped.setdefault(sample.platform, []).append(sample)
    return grouped


def gaps_of(samples: list[Sample]) -> list[float]:
    return [sample.largest_gap_ms for sample in samples if sample.largest_gap_ms is not None]


def p50_p95(values: list[float]) -> dict[str, float] | None:
    return {"p50": percentile(values, 0.5), "p95": percentile(values, 0.95)} if values else None


def summary(samples: list[Sample]) -> dict[str, dict[str, Any]]:
    return {
        name: {
            "messages": len(mine),
            "after_first_token_ms": p50_p95([sample.after_first_token_ms for sample in mine]),
            "edits_median": statistics.median(sample.edits for sample in mine),
            "edits_max": max(sample.edits for sample in mine),
            "largest_gap_ms": p50_p95(gaps_of(mine)),
            "whole_at_the_end": sum(sample.whole for sample in mine),
        }
        for name, mine in by_platform(samples).items()
    }


def print_table(samples: list[Sample]) -> None:
    print(
        "| platform | messages | first text after the model's first token p50 / p95 | "
        "edits per answer median / max | largest gap between updates p50 / p95 | "
        "last text = whole answer |"
    )
    print("|---|---|---|---|---|---|")
    for name, mine in by_platform(samples).items():
        edits = [sample.edits for sample in mine]
        print(
            f"| {name} | {len(mine)} | {spread([s.after_first_token_ms for s in mine])} | "
            f"{statistics.median(edits):g} / {max(edits)} | {spread(gaps_of(mine))} | "
            f"{sum(sample.whole for sample in mine)} of {len(mine)} |"
        )


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=10, help="DM messages per platform")
    parser.add_argument("--tokens", type=int, default=40, help="the double's answer, in tokens")
    parser.add_argument("--per-second", type=float, default=8.0, help="the double's tokens/s")
    parser.add_argument("--platforms", nargs="+", choices=PLATFORMS, default=list(PLATFORMS))
    parser.add_argument("--base-url", help="a running OpenAI-compatible server, not the double")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="the model at --base-url")
    parser.add_argument("--wait", type=float, default=600.0, help="seconds an answer may take")
    parser.add_argument("--json", action="store_true", help="the samples as JSON, after the table")
    arguments = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    if arguments.base_url is not None:
        samples = asyncio.run(run(arguments, arguments.base_url, arguments.model))
        model = arguments.model
    else:
        with PacedModelServer(tokens=arguments.tokens, per_second=arguments.per_second) as double:
            samples = asyncio.run(run(arguments, double.base_url, arguments.model))
        model = f"the double, {arguments.tokens} tokens at {arguments.per_second:g} a second"
    load = " ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"model: {model}; load at the end {load}\n")
    print_table(samples)
    if arguments.json:
        print(json.dumps({"samples": [asdict(s) for s in samples], "summary": summary(samples)}))


if __name__ == "__main__":
    main()
