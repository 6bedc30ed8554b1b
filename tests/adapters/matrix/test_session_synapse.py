"""Login, the persistent device, and a lost store, against a real Synapse."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from adapters.matrix import MatrixLoginError, MatrixStoreLost, log_in
from adapters.matrix.allowlist import AllowList
from adapters.matrix.session import SESSION_FILE, crypto_store_file
from adapters.matrix.settings import MatrixConnection, PasswordLogin, TokenLogin
from tests.servers.synapse import RegisteredUser, SynapseServer

pytestmark = pytest.mark.synapse


def connection(
    synapse: SynapseServer, account: RegisteredUser, store: Path, login: PasswordLogin | TokenLogin
) -> MatrixConnection:
    return MatrixConnection(synapse.url, account.user_id, login, store, AllowList(()))


async def first_login_with_keys(
    synapse: SynapseServer, account: RegisteredUser, store: Path
) -> tuple[str, str]:
    """Log in by password and upload the device keys, as the first run of the bot does."""
    client = await log_in(connection(synapse, account, store, PasswordLogin(account.password)))
    await client.keys_upload()
    device_id: str = client.device_id
    token: str = client.access_token
    await client.close()
    return device_id, token


async def test_password_login_keeps_its_device_across_restarts(
    synapse: SynapseServer, bot_account: RegisteredUser, tmp_path: Path
) -> None:
    device_id, _ = await first_login_with_keys(synapse, bot_account, tmp_path)
    login = PasswordLogin(bot_account.password)

    again = await log_in(connection(synapse, bot_account, tmp_path, login))
    await again.close()

    assert again.device_id == device_id
    saved = json.loads((tmp_path / SESSION_FILE).read_text())
    assert saved["device_id"] == device_id
    assert (tmp_path / SESSION_FILE).stat().st_mode & 0o077 == 0


async def test_token_login_with_a_lost_store_stops_with_a_clear_message(
    synapse: SynapseServer, bot_account: RegisteredUser, tmp_path: Path
) -> None:
    device_id, token = await first_login_with_keys(synapse, bot_account, tmp_path / "old")
    empty_store = tmp_path / "new"

    with pytest.raises(MatrixStoreLost) as raised:
        await log_in(connection(synapse, bot_account, empty_store, TokenLogin(token, device_id)))

    assert f"crypto store for device {device_id} is not in {empty_store}" in str(raised.value)
    assert "log in again to get a new device" in str(raised.value)


async def test_token_login_with_its_store_works(
    synapse: SynapseServer, bot_account: RegisteredUser, tmp_path: Path
) -> None:
    device_id, token = await first_login_with_keys(synapse, bot_account, tmp_path)

    client = await log_in(connection(synapse, bot_account, tmp_path, TokenLogin(token, device_id)))
    await client.close()

    assert client.device_id == device_id


async def test_password_login_with_a_lost_crypto_store_starts_a_new_device(
    synapse: SynapseServer,
    bot_account: RegisteredUser,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    device_id, _ = await first_login_with_keys(synapse, bot_account, tmp_path)
    await asyncio.to_thread(crypto_store_file(tmp_path, bot_account.user_id, device_id).unlink)

    client = await log_in(
        connection(synapse, bot_account, tmp_path, PasswordLogin(bot_account.password))
    )
    await client.close()

    assert client.device_id != device_id
    assert f"the crypto store of device {device_id} is missing" in caplog.text


async def test_wrong_password_is_a_login_error(
    synapse: SynapseServer, bot_account: RegisteredUser, tmp_path: Path
) -> None:
    with pytest.raises(MatrixLoginError, match="refused the password login for @mnemo"):
        await log_in(connection(synapse, bot_account, tmp_path, PasswordLogin("wrong")))


async def test_unknown_token_is_a_login_error(
    synapse: SynapseServer, bot_account: RegisteredUser, tmp_path: Path
) -> None:
    with pytest.raises(MatrixLoginError, match=r"refused matrix\.access_token"):
        await log_in(connection(synapse, bot_account, tmp_path, TokenLogin("nope", "DEVICE")))


async def test_token_of_another_account_is_refused(
    synapse: SynapseServer, bot_account: RegisteredUser, tmp_path: Path
) -> None:
    other = synapse.register(f"other{bot_account.localpart}")
    device_id, token = await first_login_with_keys(synapse, other, tmp_path / "other")

    with pytest.raises(
        MatrixLoginError, match=re.escape(f"belongs to {other.user_id}, not matrix.user_id")
    ):
        await log_in(connection(synapse, bot_account, tmp_path, TokenLogin(token, device_id)))
