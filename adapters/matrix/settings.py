"""The ``[matrix]`` settings checked once into what the adapter needs, with key-path errors."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from adapters.matrix.allowlist import AllowList
from adapters.matrix.errors import MatrixConfigError
from bot.config import MatrixSettings


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
    for pattern in settings.allowed_users:
        if not pattern.startswith("@"):
            raise MatrixConfigError(
                f"matrix.allowed_users: {pattern!r} must be a user id pattern such as "
                "@alice:example.org or @*:example.org"
            )
    login = _login(settings)
    assert settings.user_id is not None  # checked by _login, with the credentials
    return MatrixConnection(
        homeserver=settings.homeserver.rstrip("/"),
        user_id=settings.user_id,
        login=login,
        store_path=settings.store_path or data_dir / "matrix",
        allowed_users=AllowList(settings.allowed_users),
    )


def _login(settings: MatrixSettings) -> PasswordLogin | TokenLogin:
    problem = settings.login_problem()
    if problem is not None:
        raise MatrixConfigError(problem)
    if settings.password:
        return PasswordLogin(settings.password)
    if not settings.device_id:
        raise MatrixConfigError(
            "matrix.access_token needs matrix.device_id: the device the token was issued for"
        )
    assert settings.access_token is not None
    return TokenLogin(settings.access_token, settings.device_id)
