"""A fake Discord (test double) on 127.0.0.1: REST API and gateway, as far as Mnemo uses them.

No real gateway can run here, so the tests point discord.py's own HTTP client and websocket
at this server. discord.py then does everything it does against Discord: logs in, syncs
commands, parses gateway events into Message and Interaction objects, and sends replies,
interaction responses and follow-ups as real HTTP requests whose bodies the tests inspect.
Messages can be edited and deleted; ``rate_limited`` gives the next edits Discord's 429
(with its retry-after, and the ``Via`` header discord.py expects of Discord's answers).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import BodyPartReader, WSMsgType, web

from tests.adapters.discord import payloads

API = "/api/v10"
PRIVILEGED_INTENTS_CLOSE_CODE = 4014


@dataclass
class Recorded:
    """One request discord.py sent: method, path (without /api/v10), JSON body, files."""

    method: str
    path: str
    body: dict[str, Any]
    files: dict[str, bytes] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)
    at: float = field(default_factory=time.monotonic)
    status: int = 200

    @property
    def flags(self) -> int:
        data = self.body.get("data", self.body)
        return int(data.get("flags") or 0) if isinstance(data, dict) else 0

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & 64)


class FakeDiscord:
    def __init__(self, *, refuse_message_content: bool = False) -> None:
        self.token = payloads.TOKEN
        self.refuse_message_content = refuse_message_content
        self.requests: list[Recorded] = []
        self.commands: list[dict[str, Any]] = []
        self.send_forbidden: set[int] = set()
        self.deleted_messages: set[int] = set()
        self.typing_forbidden: set[int] = set()
        # Retry-afters (seconds) of the 429s the next message edits get, one each.
        self.rate_limited: list[float] = []
        # The ids of the messages the bot sent (channel messages and follow-ups), in order.
        self.sent_ids: list[int] = []
        self.ready_guilds: list[dict[str, Any]] = []
        # Messages by channel id, as the history endpoint gives them (any order here).
        self.history: dict[int, list[dict[str, Any]]] = {}
        self.identify: dict[str, Any] | None = None
        self.identifies: list[dict[str, Any]] = []
        self._ids = itertools.count(1_300_000_000_000_000_000)
        self._sequence = itertools.count(1)
        self._sockets: list[web.WebSocketResponse] = []
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{API}"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", API + "/{path:.*}", self._rest)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]

    async def aclose(self) -> None:
        for socket in self._sockets:
            await socket.close()
        if self._runner is not None:
            await self._runner.cleanup()

    # ---- what the tests use -------------------------------------------------------------

    def final_texts(self) -> list[str]:
        """What each message the bot sent says now, after its edits, in the order sent."""
        texts: dict[int, str] = {}
        sent = iter(self.sent_ids)
        for request in self.requests:
            named = request.path.rsplit("/", 1)[1].isdigit()
            if request.status != 200 or (request.method != "POST" and not named):
                continue
            is_send = request.method == "POST" and (
                request.path.endswith("/messages") or request.path.startswith("/webhooks/")
            )
            if is_send:
                texts[next(sent)] = str(request.body.get("content") or "")
            elif request.method == "PATCH" and "/messages/" in request.path:
                texts[int(request.path.rsplit("/", 1)[1])] = str(request.body.get("content"))
            elif request.method == "DELETE" and "/messages/" in request.path:
                texts.pop(int(request.path.rsplit("/", 1)[1]), None)
        return list(texts.values())

    def matching(self, method: str, path_start: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method and r.path.startswith(path_start)]

    async def wait_for(self, predicate: Callable[[list[Recorded]], bool]) -> list[Recorded]:
        """Wait (at most 10 s, then fail) until ``predicate`` holds for the requests so far."""
        async with asyncio.timeout(10), self._changed:
            await self._changed.wait_for(lambda: predicate(self.requests))
        return self.requests

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send a gateway event to every connected client."""
        frame = {"op": 0, "t": event, "s": next(self._sequence), "d": data}
        for socket in self._sockets:
            await socket.send_str(json.dumps(frame))

    # ---- REST ---------------------------------------------------------------------------

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["path"]
        body, files = await _read_body(request)
        query = dict(request.query)
        recorded = Recorded(request.method, path, body, files, query)
        if request.method == "PATCH" and self.rate_limited:
            recorded.status = 429
            await self._record(recorded)
            return rate_limited(self.rate_limited.pop(0))
        await self._record(recorded)
        # Interaction webhooks are authorised by the token in their URL, not a header.
        if request.headers.get("Authorization") not in (f"Bot {self.token}", None):
            return json_response({"message": "401: Unauthorized", "code": 0}, status=401)
        return self._answer(request.method, path, body, query)

    async def _record(self, recorded: Recorded) -> None:
        async with self._changed:
            self.requests.append(recorded)
            self._changed.notify_all()

    def _answer(
        self, method: str, path: str, body: dict[str, Any], query: dict[str, str]
    ) -> web.StreamResponse:
        parts = path.strip("/").split("/")
        if path == "/users/@me" and method == "GET":
            return json_response(payloads.BOT_USER)
        if path == "/oauth2/applications/@me":
            return json_response(payloads.application())
        if path == "/gateway/bot":
            return json_response({"url": self.gateway_url, "shards": 1, "session_start_limit": {}})
        if parts[0] == "applications" and parts[-1] == "commands":
            return self._commands(method, body)
        if parts[0] == "channels" and parts[-1] == "typing":
            if int(parts[1]) in self.typing_forbidden:
                return json_response({"message": "Missing Permissions", "code": 50013}, status=403)
            return web.Response(status=204)
        if parts[0] == "channels" and parts[-1] == "messages" and method == "POST":
            return self._message_to(int(parts[1]), body)
        if parts[0] == "channels" and parts[-1] == "messages" and method == "GET":
            return json_response(self._history(int(parts[1]), query))
        if parts[0] == "channels" and len(parts) == 4 and method == "PATCH":
            return json_response(self._edited(int(parts[1]), int(parts[3]), body))
        if parts[0] == "channels" and len(parts) == 4 and method == "DELETE":
            return web.Response(status=204)
        if parts[0] == "channels" and len(parts) == 4 and parts[2] == "messages":
            return self._one_message(int(parts[1]), int(parts[3]))
        if parts[0] == "channels" and "reactions" in parts and method == "PUT":
            return web.Response(status=204)
        if path == "/users/@me/channels":
            return self._open_direct_channel(int(body["recipient_id"]))
        if parts[0] == "interactions" and parts[-1] == "callback":
            return json_response(self._callback(parts[1], body))
        if parts[0] == "webhooks" and method == "DELETE":
            return web.Response(status=204)
        if parts[0] == "webhooks" and method == "PATCH" and parts[-2] == "messages":
            return json_response(self._edited(payloads.CHANNEL_ID, int(parts[-1]), body))
        if parts[0] == "webhooks":
            return json_response(self._message_payload(payloads.CHANNEL_ID, body))
        return json_response({"message": f"fake Discord has no {method} {path}"}, status=404)

    def _history(self, channel_id: int, query: dict[str, str]) -> list[dict[str, Any]]:
        """Newest first, as Discord pages them: ``limit`` next to ``before`` or ``after``."""
        messages = sorted(self.history.get(channel_id, []), key=lambda m: -int(m["id"]))
        limit = int(query.get("limit", 50))
        if "before" in query:
            return [m for m in messages if int(m["id"]) < int(query["before"])][:limit]
        if "after" in query:
            later = [m for m in messages if int(m["id"]) > int(query["after"])]
            return later[-limit:]
        return messages[:limit]

    def _one_message(self, channel_id: int, message_id: int) -> web.Response:
        for message in self.history.get(channel_id, []):
            if int(message["id"]) == message_id:
                return json_response(message)
        return json_response({"message": "Unknown Message", "code": 10008}, status=404)

    def _commands(self, method: str, body: Any) -> web.Response:
        if method == "PUT":
            self.commands = [
                {**command, "id": str(next(self._ids)), "application_id": str(payloads.APP_ID)}
                for command in body["_list"]
            ]
        return json_response(self.commands)

    def _message_to(self, channel_id: int, body: dict[str, Any]) -> web.Response:
        if channel_id in self.send_forbidden:
            return json_response({"message": "Missing Permissions", "code": 50013}, status=403)
        reference = body.get("message_reference") or {}
        if int(reference.get("message_id") or 0) in self.deleted_messages and reference.get(
            "fail_if_not_exists", True
        ):
            return json_response(
                {"message": "Invalid Form Body", "code": 50035, "errors": {"message_reference": {
                    "_errors": [{"code": "REPLIES_UNKNOWN_MESSAGE", "message": "Unknown message"}]
                }}},
                status=400,
            )  # fmt: skip
        return json_response(self._message_payload(channel_id, body))

    def _open_direct_channel(self, user_id: int) -> web.Response:
        # The DM channel's id is the user's id + 1, so a test can refuse DMs by user.
        return json_response(
            {"id": str(user_id + 1), "type": 1, "recipients": [payloads.user(user_id, "someone")]}
        )

    def _callback(self, interaction_id: str, body: dict[str, Any]) -> dict[str, Any]:
        data = body.get("data") or {}
        return {
            "interaction": {
                "id": interaction_id,
                "type": 2,
                "response_message_loading": body.get("type") == 5,
                "response_message_ephemeral": bool(int(data.get("flags") or 0) & 64),
            },
            "resource": {"type": body.get("type")},
        }

    def _edited(self, channel_id: int, message_id: int, body: dict[str, Any]) -> dict[str, Any]:
        content = str(body.get("content") or "")
        return payloads.message(message_id, channel_id, payloads.BOT_USER, content, guild_id=None)

    def _message_payload(self, channel_id: int, body: dict[str, Any]) -> dict[str, Any]:
        self.sent_ids.append(next(self._ids))
        return payloads.message(
            self.sent_ids[-1],
            channel_id,
            payloads.BOT_USER,
            str(body.get("content") or ""),
            guild_id=None,
        )

    # ---- gateway ------------------------------------------------------------------------

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        self._sockets.append(socket)
        await socket.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 45_000}}))
        async for frame in socket:
            if frame.type is not WSMsgType.TEXT:
                break
            await self._on_gateway_frame(socket, json.loads(frame.data))
        self._sockets.remove(socket)
        return socket

    async def _on_gateway_frame(self, socket: web.WebSocketResponse, frame: dict[str, Any]) -> None:
        if frame["op"] == 1:
            await socket.send_str(json.dumps({"op": 11}))
        elif frame["op"] == 2:
            self.identify = frame["d"]
            self.identifies.append(frame["d"])
            if self.refuse_message_content:
                await socket.close(code=PRIVILEGED_INTENTS_CLOSE_CODE)
                return
            ready = payloads.ready(self.gateway_url, self.ready_guilds)
            if "shard" in frame["d"]:
                ready["shard"] = frame["d"]["shard"]  # as Discord answers a sharded session
            frame = {"op": 0, "t": "READY", "s": next(self._sequence), "d": ready}
            await socket.send_str(json.dumps(frame))


def rate_limited(retry_after: float) -> web.Response:
    """Discord's 429: the retry-after in the body and headers, behind its proxy (``Via``)."""
    body = {"message": "You are being rate limited.", "retry_after": retry_after, "global": False}
    headers = {
        "Content-Type": "application/json",
        "Via": "1.1 google",
        "Retry-After": str(retry_after),
        "X-RateLimit-Scope": "user",
    }
    return web.Response(body=json.dumps(body).encode(), status=429, headers=headers)


def json_response(data: Any, status: int = 200) -> web.Response:
    # Exactly "application/json": discord.py compares the header verbatim, and aiohttp's own
    # json_response appends a charset.
    return web.Response(
        body=json.dumps(data).encode(), status=status, headers={"Content-Type": "application/json"}
    )


async def _read_body(request: web.Request) -> tuple[dict[str, Any], dict[str, bytes]]:
    """JSON body, or the ``payload_json`` part and the files of a multipart upload."""
    if request.content_type.startswith("multipart/"):
        body: dict[str, Any] = {}
        files: dict[str, bytes] = {}
        reader = await request.multipart()
        async for part in reader:
            if not isinstance(part, BodyPartReader):
                continue
            content = await part.read()
            if part.name == "payload_json":
                body = json.loads(content)
            elif part.filename:
                files[part.filename] = bytes(content)
        return body, files
    if not request.can_read_body:
        return {}, {}
    parsed = await request.json()
    return (parsed if isinstance(parsed, dict) else {"_list": parsed}), {}
