"""An Ollama-shaped HTTP server on 127.0.0.1, for tests of anything that talks to Ollama.

A real HTTP server (stdlib ``ThreadingHTTPServer`` in a thread). It answers like Ollama does:

- ``POST /api/chat``: 404 ``{"error": "model \\"x\\" not found, try pulling it first"}`` for a
  model it does not have, otherwise the next scripted reply; with ``"stream": true`` the
  reply comes as NDJSON chunks ending with ``"done": true``;
- ``GET /api/tags``: the models it has;
- ``POST /api/embed``: a vector of ``embedding_dimension`` numbers per input, from the text's
  length and first letter; past ``embeds_before_hold`` requests, each waits for
  ``embeds_released`` (a model that stalls midway, for a test that kills its client then).

A scripted reply is a string, a callable computing one from the request body, ``DROP``
(close the connection without answering, as a crashing server does), ``Slow(seconds, text)``
(answer late, for timeouts), ``Held(gate, text)`` (answer only once the test opens the gate:
a model that hangs for as long as the test wants), ``Failure(status, message)``,
``ToolCalls(...)`` (an assistant message with ``tool_calls``, as Ollama sends them) or
``Cut(text)`` (an answer that reached ``num_predict``: ``done_reason: "length"``); with
``"stream": true`` a text reply comes in pieces of a few characters. When no
scripted reply is left, ``responder`` (if set) picks any of these from the request body, then
``fallback`` is used. A request offering ``tools`` for a model
in ``models_without_tools`` gets Ollama's 400 "... does not support tools". Every request
body is recorded.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.servers.loopback import LoopbackServer


@dataclass(frozen=True)
class Slow:
    seconds: float
    text: str


@dataclass(frozen=True)
class Failure:
    status: int
    message: str


@dataclass(frozen=True)
class ToolCalls:
    """An assistant message that calls tools: (name, arguments) pairs, and optional text.

    Arguments are sent as given: an object for Ollama; an OpenAI-compatible server sends a
    string as it is (a model's broken JSON) and an object encoded as JSON.
    """

    calls: tuple[tuple[str, dict[str, Any] | str], ...]
    text: str = ""


@dataclass(frozen=True)
class Cut:
    """An answer that stopped at the token budget (``done_reason`` / ``finish_reason``
    ``"length"``)."""

    text: str


@dataclass(frozen=True)
class Held:
    """Answer ``text`` once ``gate`` is set (or after ``limit`` seconds, so no thread is
    left behind for ever)."""

    gate: threading.Event
    text: str
    limit: float = 600.0


class Drop:
    """Close the connection without an answer."""


DROP = Drop()

Reply = str | Callable[[dict[str, Any]], str] | Slow | Held | Failure | Drop | ToolCalls | Cut


def prompt_of(body: dict[str, Any]) -> str:
    """All message contents of a recorded request, joined."""
    return "\n".join(str(message.get("content", "")) for message in body["messages"])


@dataclass
class OllamaServer(LoopbackServer):
    models: tuple[str, ...] = ("llama3.1:8b",)
    models_without_tools: tuple[str, ...] = ()
    replies: list[Reply] = field(default_factory=list)
    fallback: Reply | None = None
    responder: Callable[[dict[str, Any]], Reply] | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    embedding_dimension: int = 3
    embeds_before_hold: int | None = None
    embeds_released: threading.Event = field(default_factory=threading.Event)
    embeds: int = 0  # requests to /api/embed so far
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        return self.origin

    def next_reply(self, body: dict[str, Any]) -> Reply | None:
        with self._lock:
            self.requests.append(body)
            if body.get("model") not in self.models:
                name = body.get("model")
                return Failure(404, f'model "{name}" not found, try pulling it first')
            if body.get("tools") and body.get("model") in self.models_without_tools:
                name = body.get("model")
                return Failure(400, f"registry.ollama.ai/library/{name} does not support tools")
            if self.replies:
                return self.replies.pop(0)
        if self.responder is not None:
            return self.responder(body)
        return self.fallback

    def vector_of(self, text: str) -> list[float]:
        """The text's length and first letter (its meaning is not this server's job), then
        zeros up to ``embedding_dimension``."""
        head = [float(len(text)), float(ord(text[0]) if text else 0), 1.0]
        return (head + [0.0] * self.embedding_dimension)[: self.embedding_dimension]

    def chat_chunk(
        self,
        body: dict[str, Any],
        text: str,
        *,
        done: bool,
        calls: ToolCalls | None = None,
        reason: str = "stop",
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if calls is not None:
            message["tool_calls"] = [
                {"function": {"name": name, "arguments": arguments}}
                for name, arguments in calls.calls
            ]
        chunk: dict[str, Any] = {
            "model": body.get("model"),
            "created_at": "2026-11-29T12:00:00Z",
            "message": message,
            "done": done,
        }
        if done:
            chunk.update(done_reason=reason, total_duration=1, eval_count=len(text.split()))
        return chunk

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path != "/api/tags":
                    self._send(404, {"error": "404 page not found"})
                    return
                self._send(200, {"models": [{"name": m, "model": m} for m in owner.models]})

            def do_POST(self) -> None:
                if self.path == "/api/embed":
                    self._embed()
                    return
                if self.path != "/api/chat":
                    self._send(404, {"error": "404 page not found"})
                    return
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                reply = owner.next_reply(body)
                if reply is None:
                    self._send(500, {"error": "test server has no scripted reply left"})
                elif isinstance(reply, Drop):
                    self.close_connection = True
                    self.connection.close()
                elif isinstance(reply, Failure):
                    self._send(reply.status, {"error": reply.message})
                elif isinstance(reply, ToolCalls):
                    self._send(200, owner.chat_chunk(body, reply.text, done=True, calls=reply))
                elif isinstance(reply, Cut):
                    self._send(200, owner.chat_chunk(body, reply.text, done=True, reason="length"))
                else:
                    if isinstance(reply, Slow):
                        time.sleep(reply.seconds)
                        text = reply.text
                    elif isinstance(reply, Held):
                        reply.gate.wait(reply.limit)
                        text = reply.text
                    else:
                        text = reply(body) if callable(reply) else reply
                    self._answer(body, text)

            def _embed(self) -> None:
                """One vector per input (what was sent is recorded in ``requests``)."""
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                with owner._lock:
                    owner.requests.append(body)
                    owner.embeds += 1
                    hold_after = owner.embeds_before_hold
                    held = hold_after is not None and owner.embeds > hold_after
                if held:
                    owner.embeds_released.wait(600.0)
                if body.get("model") not in owner.models:
                    self._send(404, {"error": f'model "{body.get("model")}" not found'})
                    return
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                vectors = [owner.vector_of(text) for text in texts]
                self._send(200, {"model": body["model"], "embeddings": vectors})

            def _answer(self, body: dict[str, Any], text: str) -> None:
                if not body.get("stream", True):
                    self._send(200, owner.chat_chunk(body, text, done=True))
                    return
                # In pieces of a few characters, as Ollama streams tokens.
                lines = [
                    *(
                        owner.chat_chunk(body, text[start : start + 4], done=False)
                        for start in range(0, len(text), 4)
                    ),
                    owner.chat_chunk(body, "", done=True),
                ]
                data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
                self._write(200, "application/x-ndjson", data)

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                self._write(status, "application/json", json.dumps(payload).encode())

            def _write(self, status: int, content_type: str, data: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client gave up (a timeout test); nothing to answer

            def log_message(self, format: str, *args: Any) -> None:
                return None

        return Handler
