"""An OpenAI-compatible chat-completions server on 127.0.0.1, for tests.

A real HTTP server (stdlib ``ThreadingHTTPServer`` in a thread, so it also serves a
subprocess while the test blocks). It answers ``POST /v1/chat/completions`` like vLLM or
llama.cpp do: 404 with ``"The model ... does not exist"`` for an unknown model, 401 without the
expected API key (also on ``GET /v1/models``, which lists the one model), and otherwise the
next scripted reply (a string, a callable computing one from the request body, or
``ToolCalls``: a message with ``tool_calls``, arguments as a JSON string; or ``Cut(text)``:
an answer that reached ``max_tokens``, ``finish_reason: "length"``). With
``tools_refusal=(status, message)`` a request offering ``tools`` gets that error, as servers
without tool support answer. With ``"stream": true`` the answer comes as server-sent events,
its text in pieces of a few characters (tool calls as fragments of their arguments), as
llama.cpp streams; ``Broken(text)`` streams ``text`` and then closes the connection without
finishing, as a server that dies midway does. Every request body is recorded for assertions.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.servers.loopback import LoopbackServer
from tests.servers.ollama_server import Cut, ToolCalls

PIECE_CHARS = 4


@dataclass(frozen=True)
class Broken:
    """A streamed answer that breaks off after ``text``."""

    text: str


Reply = str | Callable[[dict[str, Any]], str] | ToolCalls | Cut | Broken


def prompt_of(body: dict[str, Any]) -> str:
    """All message contents of a recorded request, joined."""
    return "\n".join(str(message.get("content", "")) for message in body["messages"])


def tool_calls_message(reply: ToolCalls) -> dict[str, Any]:
    calls = [
        {
            "id": f"call_{number}",
            "type": "function",
            "function": {
                "name": name,
                "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
            },
        }
        for number, (name, arguments) in enumerate(reply.calls)
    ]
    return {"role": "assistant", "content": reply.text or None, "tool_calls": calls}


@dataclass
class OpenAICompatibleServer(LoopbackServer):
    model: str = "test-model"
    replies: list[Reply] = field(default_factory=list)
    fallback: Reply | None = None
    api_key: str | None = None
    tools_refusal: tuple[int, str] | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"

    def next_reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | Reply:
        """An error answer, or the reply to give."""
        with self._lock:
            self.requests.append(body)
            if body.get("model") != self.model:
                message = f"The model `{body.get('model')}` does not exist."
                return 404, {"error": {"message": message, "type": "NotFoundError"}}
            if body.get("tools") and self.tools_refusal is not None:
                status, message = self.tools_refusal
                return status, {"error": {"message": message, "type": "BadRequestError"}}
            reply = self.replies.pop(0) if self.replies else self.fallback
        if reply is None:
            return 500, {"error": {"message": "test server has no scripted reply left"}}
        return reply

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        reply = self.next_reply(body)
        if isinstance(reply, tuple):
            return reply
        if isinstance(reply, Broken):
            return 500, {"error": {"message": "a broken stream was scripted for a plain call"}}
        if isinstance(reply, ToolCalls):
            return 200, self.completion(tool_calls_message(reply), "tool_calls")
        if isinstance(reply, Cut):
            return 200, self.completion({"role": "assistant", "content": reply.text}, "length")
        text = reply(body) if callable(reply) else reply
        return 200, self.completion({"role": "assistant", "content": text}, "stop")

    def completion(self, message: dict[str, Any], finish_reason: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        }

    def events(self, body: dict[str, Any], reply: Reply) -> tuple[list[dict[str, Any]], bool]:
        """The chunks of a streamed reply, and whether the stream ends properly."""
        if isinstance(reply, ToolCalls):
            message = tool_calls_message(reply)
            deltas: list[dict[str, Any]] = [{"content": piece} for piece in pieces(reply.text)]
            for index, call in enumerate(message["tool_calls"]):
                head = {"index": index, "id": call["id"], "type": "function"}
                deltas.append(
                    {"tool_calls": [{**head, "function": {"name": call["function"]["name"]}}]}
                )
                for piece in pieces(call["function"]["arguments"]):
                    deltas.append(
                        {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
                    )
            return [*map(self.chunk, deltas), self.chunk({}, "tool_calls")], True
        if isinstance(reply, Cut | Broken):
            text, reason = reply.text, "length"
        else:
            text, reason = (reply(body) if callable(reply) else reply), "stop"
        chunks = [self.chunk({"content": piece}) for piece in pieces(text)]
        if isinstance(reply, Broken):
            return chunks, False
        return [*chunks, self.chunk({}, reason)], True

    def chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion.chunk",
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                # GET /v1/models, as vLLM and llama.cpp's server list what they serve.
                if self.path != "/v1/models":
                    self._send(404, {"detail": "Not Found"})
                    return
                expected = f"Bearer {owner.api_key}" if owner.api_key else None
                if expected is not None and self.headers.get("Authorization") != expected:
                    self._send(401, {"error": {"message": "Incorrect API key provided"}})
                    return
                model = {"id": owner.model, "object": "model", "owned_by": "test"}
                self._send(200, {"object": "list", "data": [model]})

            def do_POST(self) -> None:
                if self.path != "/v1/chat/completions":
                    self._send(404, {"detail": "Not Found"})
                    return
                expected = f"Bearer {owner.api_key}" if owner.api_key else None
                if expected is not None and self.headers.get("Authorization") != expected:
                    self._send(401, {"error": {"message": "Incorrect API key provided"}})
                    return
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                if not body.get("stream"):
                    self._send(*owner.answer(body))
                    return
                reply = owner.next_reply(body)
                if isinstance(reply, tuple):
                    self._send(*reply)
                    return
                self._stream(*owner.events(body, reply))

            def _stream(self, chunks: list[dict[str, Any]], finished: bool) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in chunks:
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                if finished:
                    self.wfile.write(b"data: [DONE]\n\n")
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


def pieces(text: str) -> list[str]:
    return [text[start : start + PIECE_CHARS] for start in range(0, len(text), PIECE_CHARS)]
