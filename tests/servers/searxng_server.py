"""A SearXNG-shaped HTTP server on 127.0.0.1, started by tests and benchmarks.

It serves responses in SearXNG's JSON format (``searxng_responses/*.json``, with every field
SearXNG sends: parsed_url, engines, positions, score, answers as objects, infoboxes,
unresponsive_engines) chosen by the words of the query, so that a query that lost its
context ("weather tomorrow" without "Paris") finds nothing, as it would on the real web.
Other modes reproduce what SearXNG does when misconfigured or slow: 403 for ``format=json``
when JSON is not in ``search.formats``, 429 from its limiter, a hang past the client's
timeout, a 500, a non-JSON body. Every request is recorded, so tests can assert on the
query strings it received.
"""

from __future__ import annotations

import json
import threading
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

RESPONSES = Path(__file__).with_name("searxng_responses")

Mode = Literal["recorded", "forbidden", "rate_limited", "slow", "server_error", "not_json"]

# (groups of alternative words, every group must match) -> recorded response
ROUTES: tuple[tuple[tuple[tuple[str, ...], ...], str], ...] = (
    (
        (
            ("paris",),
            ("weather", "forecast", "meteo"),
            ("tomorrow", "2026-11-30", "monday", "demain", "lundi", "30 nov", "november 30"),
        ),
        "paris_weather_tomorrow.json",
    ),
    ((("paris",), ("weather", "meteo")), "paris_weather_today.json"),
    ((("amelie",), ("director", "directed", "realisateur")), "amelie_director.json"),
    ((("usd",), ("eur",)), "legacy_string_answers.json"),
)

# What Flask's abort(403) sends, which is what SearXNG answers when JSON is disabled.
FORBIDDEN_PAGE = (
    b"<!doctype html>\n<html lang=en>\n<title>403 Forbidden</title>\n<h1>Forbidden</h1>\n"
    b"<p>You don't have the permission to access the requested resource. It is either "
    b"read-protected or not readable by the server.</p>\n"
)


def _folded(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(character for character in decomposed if not unicodedata.combining(character))


def recorded_response(query: str) -> dict[str, Any]:
    """The recorded response whose words all appear in ``query``; else an empty result."""
    words = _folded(query)
    for groups, filename in ROUTES:
        if all(any(word in words for word in group) for group in groups):
            body: dict[str, Any] = json.loads((RESPONSES / filename).read_text("utf-8"))
            return body
    empty: dict[str, Any] = json.loads((RESPONSES / "empty.json").read_text("utf-8"))
    return {**empty, "query": query}


@dataclass(frozen=True)
class ReceivedRequest:
    path: str
    parameters: dict[str, str]


@dataclass
class SearxngShapedServer:
    mode: Mode = "recorded"
    slow_seconds: float = 2.0
    requests: list[ReceivedRequest] = field(default_factory=list)
    base_url: str = ""
    _released: threading.Event = field(default_factory=threading.Event)

    @property
    def queries(self) -> list[str]:
        return [request.parameters.get("q", "") for request in self.requests]

    def respond(self, path: str, parameters: dict[str, str]) -> tuple[int, str, bytes]:
        """Status, content type and body for one request, as SearXNG would send them."""
        if path == "/healthz":
            # What SearXNG answers its container's health check.
            return 200, "text/plain", b"OK"
        self.requests.append(ReceivedRequest(path, parameters))
        if path not in ("/search", "/"):
            return 404, "text/plain", b"not found"
        if self.mode == "forbidden" and parameters.get("format") == "json":
            return 403, "text/html; charset=utf-8", FORBIDDEN_PAGE
        if self.mode == "rate_limited":
            # SearXNG's limiter answers API-looking clients with a bare 429.
            return 429, "text/plain", b"Too Many Requests"
        if self.mode == "slow":
            # Released at shutdown, so a stopped server leaves no thread sleeping.
            self._released.wait(self.slow_seconds)
        if self.mode == "server_error":
            return 500, "text/html; charset=utf-8", b"<h1>Internal Server Error</h1>"
        if self.mode == "not_json":
            return 200, "text/html; charset=utf-8", b"<!doctype html><title>SearXNG</title>"
        body = json.dumps(recorded_response(parameters.get("q", "")), ensure_ascii=False)
        return 200, "application/json", body.encode("utf-8")

    def release(self) -> None:
        self._released.set()


def handler_for(state: SearxngShapedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            split = urlsplit(self.path)
            status, content_type, body = state.respond(split.path, dict(parse_qsl(split.query)))
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test); nothing left to answer

        def log_message(self, format: str, *args: Any) -> None:
            return None  # keep test output clean

    return Handler


@contextmanager
def running_searxng(
    mode: Mode = "recorded", *, slow_seconds: float = 2.0
) -> Iterator[SearxngShapedServer]:
    """Start the server on a free port of 127.0.0.1; stop it on exit."""
    state = SearxngShapedServer(mode=mode, slow_seconds=slow_seconds)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(state))
    server.daemon_threads = True
    host, port = server.server_address[:2]
    state.base_url = f"http://{host!s}:{port}"
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield state
    finally:
        state.release()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
