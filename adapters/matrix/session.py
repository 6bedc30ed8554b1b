"""Logging in and keeping the same device across restarts.

The store directory holds ``session.json`` (the device id, and for password logins the access
token) next to matrix-nio's crypto store (``<user>_<device>.db``, which also keeps the sync
token). A restart restores the saved session instead of creating a new device each time.

A lost store is detected, not papered over: when the crypto store of a device is missing but
the homeserver still has keys for that device, encrypted rooms cannot work with it any more
(its Olm account and Megolm sessions are gone). Token logins then stop with a message that
says what to do; password logins say so in the log and start a fresh device.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nio import Api, AsyncClient, AsyncClientConfig, LoginResponse, WhoamiResponse

from adapters.matrix.errors import MatrixLoginError, MatrixStoreLost
from adapters.matrix.settings import MatrixConnection, PasswordLogin, TokenLogin

logger = logging.getLogger(__name__)

SESSION_FILE = "session.json"
DEVICE_NAME = "Mnemo"


@dataclass(frozen=True, slots=True)
class SavedSession:
    user_id: str
    device_id: str
    access_token: str | None


def crypto_store_file(store_path: Path, user_id: str, device_id: str) -> Path:
    """The file matrix-nio's default store keeps the Olm account and sync token in."""
    return store_path / f"{user_id}_{device_id}.db"


def read_session(store_path: Path) -> SavedSession | None:
    path = store_path / SESSION_FILE
    if not path.exists():
        return None
    try:
        raw = json.loads(path.read_text())
        return SavedSession(raw["user_id"], raw["device_id"], raw.get("access_token"))
    except (ValueError, KeyError, TypeError) as error:
        raise MatrixLoginError(
            f"{path} is damaged ({error}); delete it to log in as a new device"
        ) from error


def write_session(store_path: Path, session: SavedSession) -> None:
    path = store_path / SESSION_FILE
    path.write_text(
        json.dumps(
            {
                "user_id": session.user_id,
                "device_id": session.device_id,
                "access_token": session.access_token,
            }
        )
    )
    # The file may hold an access token: readable by the bot's user only.
    path.chmod(0o600)


def new_client(connection: MatrixConnection, device_id: str | None = None) -> AsyncClient:
    config = AsyncClientConfig(store_sync_tokens=True, encryption_enabled=True)
    return AsyncClient(
        connection.homeserver,
        connection.user_id,
        device_id=device_id,
        store_path=str(connection.store_path),
        config=config,
    )


def prepare_store(store_path: Path) -> None:
    try:
        store_path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as error:
        raise MatrixLoginError(
            f"matrix.store_path {store_path} cannot be created: {error.strerror}"
        ) from error


async def server_has_device_keys(client: AsyncClient) -> bool:
    """Whether the homeserver holds identity keys for the client's own device."""
    method, path, data = Api.keys_query(client.access_token, {client.user_id})
    response = await client.send(method, path, data)
    body: dict[str, Any] = await response.json()
    devices = body.get("device_keys", {}).get(client.user_id, {})
    return client.device_id in devices


async def log_in(connection: MatrixConnection) -> AsyncClient:
    """A logged-in client with its crypto store loaded, on the same device as last time."""
    # Small local file work, but still kept off the event loop like every blocking call.
    await asyncio.to_thread(prepare_store, connection.store_path)
    if isinstance(connection.login, TokenLogin):
        return await _token_login(connection, connection.login)
    return await _password_login(connection, connection.login)


async def _token_login(connection: MatrixConnection, login: TokenLogin) -> AsyncClient:
    store_file = crypto_store_file(connection.store_path, connection.user_id, login.device_id)
    store_existed = await asyncio.to_thread(store_file.exists)
    client = new_client(connection, login.device_id)
    client.restore_login(connection.user_id, login.device_id, login.access_token)
    await _check_token(client)
    if not store_existed and await server_has_device_keys(client):
        await client.close()
        raise MatrixStoreLost(
            f"the crypto store for device {login.device_id} is not in {connection.store_path}, "
            "but the homeserver still has that device's keys: the store was lost or moved, "
            "and encrypted rooms cannot work with this device any more. Put the store back, "
            "or log in again to get a new device (a new matrix.access_token and "
            "matrix.device_id, or matrix.password) and remove the old device in your client."
        )
    session = SavedSession(connection.user_id, login.device_id, None)
    await asyncio.to_thread(write_session, connection.store_path, session)
    return client


async def _check_token(client: AsyncClient) -> None:
    # Read before asking: matrix-nio overwrites client.user_id with whoami's answer.
    expected: str = client.user_id
    response = await client.whoami()
    if not isinstance(response, WhoamiResponse):
        await client.close()
        raise MatrixLoginError(
            f"the homeserver refused matrix.access_token for {client.user_id}: {response.message}"
        )
    if response.user_id != expected:
        await client.close()
        raise MatrixLoginError(
            f"matrix.access_token belongs to {response.user_id}, not matrix.user_id {expected}"
        )


async def _password_login(connection: MatrixConnection, login: PasswordLogin) -> AsyncClient:
    saved = await asyncio.to_thread(read_session, connection.store_path)
    if saved is not None and saved.user_id != connection.user_id:
        saved = None
    if saved is not None:
        restored = await _restore_saved(connection, saved)
        if restored is not None:
            return restored
    elif await asyncio.to_thread(_has_crypto_stores, connection):
        logger.warning(
            "%s is missing from %s but crypto stores are there: logging in as a new device; "
            "remove the old devices of %s in your client",
            SESSION_FILE,
            connection.store_path,
            connection.user_id,
        )
    return await _fresh_password_login(connection, login, None)


def _has_crypto_stores(connection: MatrixConnection) -> bool:
    return any(connection.store_path.glob(f"{connection.user_id}_*.db"))


async def _restore_saved(connection: MatrixConnection, saved: SavedSession) -> AsyncClient | None:
    """The saved device, or None when its crypto store is lost and a new device is needed."""
    store_file = crypto_store_file(connection.store_path, saved.user_id, saved.device_id)
    store_existed = await asyncio.to_thread(store_file.exists)
    if not store_existed:
        logger.error(
            "the crypto store of device %s is missing from %s (lost or moved): encrypted rooms "
            "cannot work with that device any more, so Mnemo logs in as a new device; remove "
            "device %s in your client",
            saved.device_id,
            connection.store_path,
            saved.device_id,
        )
        return None
    client = new_client(connection, saved.device_id)
    assert isinstance(connection.login, PasswordLogin)
    if saved.access_token:
        client.restore_login(saved.user_id, saved.device_id, saved.access_token)
        if isinstance(await client.whoami(), WhoamiResponse):
            return client
        await client.close()
        client = new_client(connection, saved.device_id)
    # The token expired or was revoked: a password login that names the device keeps it.
    return await _fresh_password_login(connection, connection.login, saved.device_id, client)


async def _fresh_password_login(
    connection: MatrixConnection,
    login: PasswordLogin,
    device_id: str | None,
    client: AsyncClient | None = None,
) -> AsyncClient:
    client = client or new_client(connection, device_id)
    response = await client.login(login.password, device_name=DEVICE_NAME)
    if not isinstance(response, LoginResponse):
        await client.close()
        raise MatrixLoginError(
            f"the homeserver refused the password login for {connection.user_id}: "
            f"{response.message}"
        )
    session = SavedSession(connection.user_id, response.device_id, response.access_token)
    await asyncio.to_thread(write_session, connection.store_path, session)
    logger.info("logged in as %s, device %s", connection.user_id, response.device_id)
    return client
