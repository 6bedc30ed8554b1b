from __future__ import annotations

from pathlib import Path

import pytest

from adapters.matrix.errors import MatrixConfigError
from adapters.matrix.settings import PasswordLogin, TokenLogin, connection_from_settings
from bot.config import MatrixSettings

BASE = {"homeserver": "https://matrix.example.org/", "user_id": "@mnemo:example.org"}


def settings(**values: object) -> MatrixSettings:
    return MatrixSettings.model_validate({**BASE, **values})


def test_password_login_with_default_store_under_the_data_dir() -> None:
    connection = connection_from_settings(settings(password="secret"), Path("/data"))

    assert connection.login == PasswordLogin("secret")
    assert connection.store_path == Path("/data/matrix")
    assert connection.homeserver == "https://matrix.example.org"


def test_token_login_needs_the_device_id() -> None:
    connection = connection_from_settings(
        settings(access_token="tok", device_id="DEV", store_path="/s"), Path("/data")
    )
    assert connection.login == TokenLogin("tok", "DEV")
    assert connection.store_path == Path("/s")

    with pytest.raises(MatrixConfigError, match=r"matrix\.access_token needs matrix\.device_id"):
        connection_from_settings(settings(access_token="tok"), Path("/data"))


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({}, "no credentials: set MNEMO_MATRIX__ACCESS_TOKEN"),
        (
            {"password": "p", "access_token": "t", "device_id": "D"},
            r"both matrix\.password and matrix\.access_token are set",
        ),
        ({"password": "p", "device_id": "D"}, r"matrix\.device_id goes with matrix\.access_token"),
        ({"password": "p", "homeserver": None}, r"matrix\.homeserver is not set"),
        ({"password": "p", "homeserver": "matrix.org"}, "must start with http"),
        ({"password": "p", "user_id": "mnemo"}, r"matrix\.user_id must be the bot account"),
        ({"password": "p", "allowed_users": ["*:example.org"]}, "must be a user id pattern"),
    ],
)
def test_unusable_settings_name_the_key(values: dict[str, object], message: str) -> None:
    with pytest.raises(MatrixConfigError, match=message):
        connection_from_settings(settings(**values), Path("/data"))
