"""``mnemo doctor``'s Matrix check against a real Synapse on 127.0.0.1."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import httpx
import pytest

from bot.config import Config
from bot.doctor import CheckStatus
from bot.doctor.matrix import MatrixCheck
from tests.servers.synapse import RegisteredUser, SynapseServer

pytestmark = pytest.mark.synapse


@dataclass(frozen=True)
class Session:
    user: RegisteredUser
    access_token: str
    device_id: str


def log_in(synapse: SynapseServer, user: RegisteredUser, device_id: str) -> Session:
    body = {
        "type": "m.login.password",
        "identifier": {"type": "m.id.user", "user": user.localpart},
        "password": user.password,
        "device_id": device_id,
    }
    response = httpx.post(f"{synapse.url}/_matrix/client/v3/login", json=body, timeout=30)
    answer = response.raise_for_status().json()
    return Session(user, answer["access_token"], answer["device_id"])


def log_out(synapse: SynapseServer, session: Session) -> None:
    headers = {"Authorization": f"Bearer {session.access_token}"}
    url = f"{synapse.url}/_matrix/client/v3/logout"
    httpx.post(url, headers=headers, json={}, timeout=30).raise_for_status()


@pytest.fixture(scope="module")
def bot(synapse: SynapseServer) -> Session:
    user = synapse.register(f"mnemo{uuid.uuid4().hex[:8]}")
    return log_in(synapse, user, "MNEMOBOT")


def matrix_config(synapse: SynapseServer, **matrix: str) -> Config:
    return Config.model_validate({"matrix": {"homeserver": synapse.url, **matrix}})


async def test_access_token_of_the_configured_device_is_green(
    synapse: SynapseServer, bot: Session
) -> None:
    config = matrix_config(
        synapse, user_id=bot.user.user_id, access_token=bot.access_token, device_id="MNEMOBOT"
    )
    result = await MatrixCheck()(config)
    assert result.status is CheckStatus.OK
    assert result.detail == f"access token works for {bot.user.user_id} (device MNEMOBOT)"


async def test_access_token_without_device_id_names_the_device(
    synapse: SynapseServer, bot: Session
) -> None:
    config = matrix_config(synapse, user_id=bot.user.user_id, access_token=bot.access_token)
    result = await MatrixCheck()(config)
    assert result.status is CheckStatus.FAIL
    assert result.detail == (
        "the access token is for device MNEMOBOT, but matrix.device_id is not set: "
        "set matrix.device_id = 'MNEMOBOT'"
    )


async def test_access_token_of_another_account(synapse: SynapseServer, bot: Session) -> None:
    config = matrix_config(
        synapse, user_id="@someone:localhost", access_token=bot.access_token, device_id="MNEMOBOT"
    )
    result = await MatrixCheck()(config)
    assert result.status is CheckStatus.FAIL
    assert result.detail.startswith(
        f"matrix.access_token belongs to {bot.user.user_id}, not to matrix.user_id "
        "@someone:localhost"
    )


async def test_logged_out_token_is_rejected_with_the_fix(synapse: SynapseServer) -> None:
    user = synapse.register(f"gone{uuid.uuid4().hex[:8]}")
    session = log_in(synapse, user, "OLDDEVICE")
    log_out(synapse, session)
    config = matrix_config(
        synapse, user_id=user.user_id, access_token=session.access_token, device_id="OLDDEVICE"
    )
    result = await MatrixCheck()(config)
    assert result.status is CheckStatus.FAIL
    assert result.detail.startswith(
        "the homeserver rejected matrix.access_token (M_UNKNOWN_TOKEN): log in again"
    )


async def test_password_login_is_offered_but_not_tried(
    synapse: SynapseServer, bot: Session
) -> None:
    devices_before = device_ids(synapse, bot)
    config = matrix_config(synapse, user_id=bot.user.user_id, password=bot.user.password)
    result = await MatrixCheck()(config)
    assert result.status is CheckStatus.OK
    assert result.detail.startswith(f"{synapse.url} offers password login for {bot.user.user_id}")
    # Nothing logged in: a test login would have left a new device (and new keys) behind.
    assert device_ids(synapse, bot) == devices_before


def device_ids(synapse: SynapseServer, session: Session) -> set[str]:
    headers = {"Authorization": f"Bearer {session.access_token}"}
    devices = httpx.get(f"{synapse.url}/_matrix/client/v3/devices", headers=headers, timeout=30)
    return {device["device_id"] for device in devices.raise_for_status().json()["devices"]}
