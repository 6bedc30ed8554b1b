"""One HTTP GET for a check, with every way it can fail turned into a short reason."""

from __future__ import annotations

import json
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

DEFAULT_TIMEOUT_SECONDS = 5.0


@dataclass(frozen=True, slots=True)
class Answer:
    """What a server said: the status, and the body as JSON when it was JSON."""

    status_code: int
    body: Any
    is_json: bool

    def field(self, name: str) -> Any:
        return self.body.get(name) if isinstance(self.body, dict) else None


class Unreachable(Exception):
    """No HTTP answer at all; the message says why in a few words."""


async def get(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    params: Mapping[str, str] | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> Answer:
    """GET ``url``; raises ``Unreachable`` when no answer came back."""
    try:
        async with httpx.AsyncClient(timeout=timeout_seconds, follow_redirects=True) as client:
            response = await client.get(url, headers=headers, params=params)
    except httpx.TimeoutException as error:
        raise Unreachable(f"no answer within {timeout_seconds:g} s") from error
    except httpx.ConnectError as error:
        raise Unreachable(_connect_reason(error)) from error
    except httpx.UnsupportedProtocol as error:
        raise Unreachable("not an http:// or https:// URL") from error
    except httpx.HTTPError as error:
        raise Unreachable(f"{type(error).__name__}: {error}") from error
    try:
        return Answer(response.status_code, response.json(), is_json=True)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return Answer(response.status_code, response.text, is_json=False)


def _connect_reason(error: httpx.ConnectError) -> str:
    """The operating system's reason, found down the chain of causes (httpx wraps it twice)."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, socket.gaierror):
            return "host name not found"
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror
        cause = cause.__cause__ or cause.__context__
    return str(error) or "cannot connect"


def join(base_url: str, path: str) -> str:
    """``http://host:1/`` + ``/api/tags`` -> ``http://host:1/api/tags``."""
    return base_url.rstrip("/") + "/" + path.lstrip("/")
