"""One code version against a real model server: the child that ``benchmarks/first_text.py``
starts.

    python benchmarks/first_text_session.py --code DIR --base-url URL --model NAME

``--code`` goes first on ``sys.path`` before anything of Mnemo is imported, so this file uses
only what every version measured has: ``Config``, ``build_application``, ``core.catch_up``
and the console adapter's ``ConsoleSession.send``. The bot talks to the model through a
recording proxy on 127.0.0.1, which forwards every request to ``--base-url`` as it comes and
its answer as it comes (streamed or not), closes a request at the server when the bot closes
it (a cancelled background call), and reads llama-server's ``timings`` of each
reply call (``prompt_n``: prompt tokens read; ``cache_n``: kept from its cache) and when its
first token went by. It prints one JSON line with the results; the rest goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import io
import json
import logging
import select
import socket
import sys
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPOSITORY = Path(__file__).resolve().parent.parent
MODEL_DIRECTORY = REPOSITORY.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
QUESTIONS = [
    "What is a good name for a grey cat?",
    "How long should I boil an egg?",
    "What is the capital of Portugal?",
    "Give me one tip for sleeping better.",
    "What rhymes with garden?",
    "How many legs does a spider have?",
    "What is a quick lunch idea?",
    "Name a famous painter from Spain.",
    "What should I pack for a day hike?",
    "How do I say thank you in Italian?",
    "What is a good houseplant for a dark room?",
    "How far is the moon, roughly?",
]
STATEMENTS = [
    "I live in Porto and I work as a nurse.",
    "My sister Ana has two dogs called Rex and Lua.",
    "I started learning the violin last month.",
    "I am allergic to peanuts and shellfish.",
    "My favourite film is Spirited Away.",
    "I drive an old blue Volvo to work every day.",
    "I moved to Lyon in 2019 with my partner Sam.",
    "I play chess on Tuesdays at the library.",
    "My daughter Mia turns seven in March.",
    "I prefer green tea over coffee in the mornings.",
]
DM_TURNS = [
    "Hi! I'm Alice, I live in Lisbon.",
    "I have a cat called Miso.",
    "What could I cook tonight?",
    "I work as a teacher at a primary school.",
    "Any idea for a weekend trip from Lisbon?",
    "My brother Tom lives in Porto.",
    "What's a good book for a rainy day?",
    "I love hiking in the mountains.",
    "Remind me, what's my cat called?",
    "Thanks, see you tomorrow!",
]


@dataclass
class Call:
    """One request the bot sent to the model server, as the proxy saw it go by."""

    reply: bool
    stream: bool
    started: float
    first_token: float | None = None
    prompt_n: int | None = None
    cache_n: int | None = None


@dataclass
class Recorder:
    calls: list[Call] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def timings_in(line: bytes) -> dict[str, Any] | None:
    text = line.decode("utf-8", "replace").strip().removeprefix("data:").strip()
    if not text.startswith("{"):
        return None
    try:
        payload = json.loads(text)
    except ValueError:
        return None
    timings = payload.get("timings") if isinstance(payload, dict) else None
    return timings if isinstance(timings, dict) else None


def has_token(line: bytes) -> bool:
    return b'"content":"' in line.replace(b" ", b"") and b'"content":""' not in line.replace(
        b" ", b""
    )


def closed_by_client(client: socket.socket) -> bool:
    """True once the bot has closed its side (it sends nothing after the request)."""
    try:
        readable, _, _ = select.select([client], [], [], 0.1)
        return bool(readable) and client.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def pass_on_close(client: socket.socket, upstream: http.client.HTTPConnection) -> threading.Event:
    """Close the request to the server when the bot closes its request to the proxy, as the
    bot would without the proxy: a cancelled background call stops the server's work then."""
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if closed_by_client(client):
                if upstream.sock is not None:
                    upstream.sock.shutdown(socket.SHUT_RDWR)
                return

    threading.Thread(target=watch, daemon=True).start()
    return done


def proxy(upstream: str, recorder: Recorder) -> ThreadingHTTPServer:
    target = urllib.parse.urlsplit(upstream)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._forward(None)

        def do_POST(self) -> None:
            self._forward(self.rfile.read(int(self.headers.get("Content-Length", "0"))))

        def _forward(self, data: bytes | None) -> None:
            body = json.loads(data) if data else {}
            call = Call(
                reply="response_format" not in body and "messages" in body,
                stream=bool(body.get("stream")),
                started=time.monotonic(),
            )
            host = target.hostname or "127.0.0.1"
            connection = http.client.HTTPConnection(host, target.port, timeout=900)
            done = pass_on_close(self.connection, connection)
            try:
                path = target.path.rstrip("/") + self.path.removeprefix("/v1")
                headers = {"Content-Type": "application/json"}
                connection.request(self.command, path, body=data, headers=headers)
                self._relay(connection.getresponse(), call)
            except OSError:
                return  # the bot went away (a cancelled call) or the server did
            finally:
                done.set()
                connection.close()
            if "messages" in body:
                with recorder.lock:
                    recorder.calls.append(call)

        def _relay(self, answer: http.client.HTTPResponse, call: Call) -> None:
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.headers.get("Content-Type", "application/json"))
            self.send_header("Connection", "close")
            self.end_headers()
            for line in answer:
                if call.first_token is None and has_token(line):
                    call.first_token = time.monotonic()
                timings = timings_in(line)
                if timings is not None:
                    call.prompt_n, call.cache_n = timings.get("prompt_n"), timings.get("cache_n")
                self.wfile.write(line)
                self.wfile.flush()
            self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Screen(io.StringIO):
    """The terminal: when the bot's first text of the current answer appeared."""

    def __init__(self) -> None:
        super().__init__()
        self.first_write: float | None = None

    def write(self, text: str) -> int:
        if self.first_write is None and text.strip():
            self.first_write = time.monotonic()
        return super().write(text)


async def never() -> str | None:
    return None


class Bench:
    def __init__(self, application: Any, recorder: Recorder) -> None:
        self.app = application
        self.recorder = recorder
        self.screen = Screen()
        self.session = self.person("alice")
        self.clock = datetime(2026, 12, 1, 9, tzinfo=UTC)
        self.sent = 0

    def person(self, name: str) -> Any:
        """A console session of ``name``'s (a DM), printing to the screen."""
        from adapters.console.session import ConsoleIdentity, ConsoleSession

        return ConsoleSession(
            self.app.core,
            ConsoleIdentity(name),
            read_line=never,
            output=self.screen,
            export_directory=Path(tempfile.gettempdir()),
        )

    async def ask(self, text: str) -> dict[str, float | None]:
        """Alice says ``text``; when her answer's first text showed, and the model's first
        token of it went by, after she sent it (ms); the prompt tokens the server read."""
        self.screen.first_write = None
        before = len(self.recorder.calls)
        start = time.monotonic()
        await self.session.send(text)
        replies = [c for c in self.recorder.calls[before:] if c.reply]
        token = replies[-1].first_token if replies else None
        shown = self.screen.first_write
        return {
            "visible_ms": None if shown is None else (shown - start) * 1000,
            "token_ms": None if token is None else (token - start) * 1000,
            "prompt_n": replies[-1].prompt_n if replies else None,
            "cache_n": replies[-1].cache_n if replies else None,
        }

    async def queue_others(self, count: int) -> None:
        """``count`` other people's statements, queued for memory (learned, not answered)."""
        from bot.messages import IncomingMessage

        for number in range(count):
            self.sent += 1
            self.clock += timedelta(seconds=1)
            await self.app.core.catch_up(
                IncomingMessage(
                    platform="console",
                    user_key=f"console:person{self.sent}",
                    display_name=f"Person{self.sent}",
                    room_key="console:dm",
                    text=STATEMENTS[number % len(STATEMENTS)],
                    time=self.clock,
                    is_direct=True,
                    message_id=f"bench-{self.sent}",
                )
            )


async def measure(arguments: argparse.Namespace, recorder: Recorder, url: str) -> dict[str, Any]:
    from bot.app import build_application
    from bot.config import Config

    with tempfile.TemporaryDirectory() as directory:
        config = Config.model_validate(
            {
                "storage": {"data_dir": directory},
                "embedding": {"model_path": str(MODEL_DIRECTORY)},
                "memory": {"reranker_model": ""},
                "llm": {
                    "provider": "openai",
                    "base_url": url,
                    "model": arguments.model,
                    "timeout_seconds": 900,
                    "seed": 7,
                    # Short answers keep a run within minutes on two busy cores.
                    "max_tokens_reply": 256,
                },
            }
        )
        application = await build_application(config)
        await application.start()
        try:
            return await scenarios(Bench(application, recorder), arguments)
        finally:
            await application.aclose()


async def scenarios(bench: Bench, arguments: argparse.Namespace) -> dict[str, Any]:
    writer = bench.app.writer
    results: dict[str, Any] = {"idle": [], "queued": [], "dm": []}
    for question in QUESTIONS[: arguments.idle]:
        await writer.drain()
        results["idle"].append(await bench.ask(question))
        log(f"idle {results['idle'][-1]}")
    for round_number in range(arguments.queued):
        await writer.drain()
        await bench.queue_others(10)
        await asyncio.sleep(arguments.after)
        results["queued"].append(await bench.ask(QUESTIONS[-1 - round_number % 4]))
        log(f"queued {results['queued'][-1]}")
    await writer.drain()
    bench.session = bench.person("dora")
    for text in DM_TURNS:
        before = len(bench.recorder.calls)
        await bench.ask(text)
        reply = [c for c in bench.recorder.calls[before:] if c.reply][-1]
        results["dm"].append({"prompt_n": reply.prompt_n, "cache_n": reply.cache_n})
        log(f"dm {results['dm'][-1]}")
        # The person reads and types; background calls of the last message run meanwhile.
        await asyncio.sleep(arguments.pause)
    return results


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--code", type=Path, required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--idle", type=int, default=10)
    parser.add_argument("--queued", type=int, default=6)
    parser.add_argument("--after", type=float, default=3.0, help="seconds after the ten")
    parser.add_argument("--pause", type=float, default=1.0, help="seconds between DM turns")
    arguments = parser.parse_args()
    sys.path.insert(0, str(arguments.code.resolve()))
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    recorder = Recorder()
    server = proxy(arguments.base_url, recorder)
    host, port = server.server_address[:2]
    try:
        results = asyncio.run(measure(arguments, recorder, f"http://{host!s}:{port}/v1"))
    finally:
        server.shutdown()
    print(json.dumps(results))


if __name__ == "__main__":
    main()
