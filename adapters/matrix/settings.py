"""The ``[matrix]`` settings checked once into what the adapter needs, with key-path errors."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from adapters.matrix.allowlist import AllowList
from adapters.matrix.errors import MatrixConfigError
from bot.config import MatrixSettings

USER_ID_PATTERN = re.compile(r"^@[^:\s]+:[^\s]+$")


@dataclass(frozen=True, slots=True)
class PasswordLogin:
    password: str


@dataclass(frozen=True, slots=True)
class TokenLogin:
    access_token: str
    device_id: str


@dataclass(frozen=True, slots=True)
class MatrixConnection:
    homeserver: str
    user_id: str
    login: PasswordLogin | TokenLogin
    store_path: Path
    allowed_users: AllowList


def connection_from_settings(settings: MatrixSettings, data_dir: Path) -> MatrixConnection:
    """Raise :class:`MatrixConfigError` naming the key when the settings cannot be used."""
    if not settings.homeserver:
        raise MatrixConfigError("matrix.homeserver is not set (e.g. https://matrix.example.org)")
    if not settings.homeserver.startswith(("http://", "https://")):
        raise MatrixConfigError(
            f"matrix.homeserver must start with http:// or https:// (got {settings.homeserver!r})"
        )
    if not settings.user_id or not USER_ID_PATTERN.match(settings.user_id):
        raise MatrixConfigError(
            f"matrix.user_id must look like @name:server (got {settings.user_id!r})"
        )
    for pattern in settings.allowed_users:
        if not pattern.startswith("@"):
            raise MatrixConfigError(
                f"matrix.allowed_users: {pattern!r} must be a user id pattern such as "
                "@alice:example.org or @*:example.org"
            )
    return MatrixConnection(
        homeserver=settings.homeserver.rstrip("/"),
        user_id=settings.user_id,
        login=_login(settings),
        store_path=settings.store_path or data_dir / "matrix",
        allowed_users=AllowList(settings.allowed_users),
    )


def _login(settings: MatrixSettings) -> PasswordLogin | TokenLogin:
    has_password = bool(settings.password)
    has_token = bool(settings.access_token)
    if has_password == has_token:
        raise MatrixConfigError(
            "set exactly one of matrix.password or matrix.access_token "
            f"(got {'both' if has_password else 'neither'})"
        )
    if settings.password:
        if settings.device_id:
            raise MatrixConfigError(
                "matrix.device_id goes with matrix.access_token; with matrix.password the "
                "device id is chosen at the first login and kept in matrix.store_path"
            )
        return PasswordLogin(settings.password)
    if not settings.device_id:
        raise MatrixConfigError(
            "matrix.access_token needs matrix.device_id: the device the token was issued for"
        )
    assert settings.access_token is not None
    return TokenLogin(settings.access_token, settings.device_id)
