"""A Discord-REST-shaped HTTP server on 127.0.0.1 (no Discord API can be reached from here).

It answers the two calls ``mnemo doctor`` makes, the way ``https://discord.com/api/v10``
does: ``GET /users/@me`` and ``GET /applications/@me`` with ``Authorization: Bot <token>``
give the bot user and its application (whose ``flags`` carry the privileged intents), and
any other token gets ``401 {"message": "401: Unauthorized", "code": 0}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.servers.loopback import LoopbackServer

GATEWAY_MESSAGE_CONTENT_LIMITED = 1 << 19
# What the Developer Portal sets for a bot in under 100 servers with the intent switched on.
FLAGS_WITH_MESSAGE_CONTENT = GATEWAY_MESSAGE_CONTENT_LIMITED | (1 << 23)
FLAGS_WITHOUT_MESSAGE_CONTENT = 1 << 23  # only APPLICATION_COMMAND_BADGE

UNAUTHORIZED = {"message": "401: Unauthorized", "code": 0}


@dataclass
class DiscordApiServer(LoopbackServer):
    token: str = "test-bot-token"
    bot_id: str = "1180000000000000001"
    username: str = "mnemo"
    application_flags: int = FLAGS_WITH_MESSAGE_CONTENT
    authorizations: list[str] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return self.origin + "/api/v10"

    def answer(self, path: str, authorization: str) -> tuple[int, dict[str, Any]]:
        self.authorizations.append(authorization)
        if authorization != f"Bot {self.token}":
            return 401, UNAUTHORIZED
        if path == "/api/v10/users/@me":
            return 200, {
                "id": self.bot_id,
                "username": self.username,
                "discriminator": "0",
                "global_name": None,
                "bot": True,
                "verified": True,
                "flags": 0,
            }
        if path == "/api/v10/applications/@me":
            return 200, {
                "id": self.bot_id,
                "name": "Mnemo",
                "bot_public": False,
                "bot_require_code_grant": False,
                "flags": self.application_flags,
            }
        return 404, {"message": "404: Not Found", "code": 0}

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, payload = owner.answer(self.path, self.headers.get("Authorization", ""))
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        return Handler
