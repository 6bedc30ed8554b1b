"""Doctor check of the Matrix credentials, without logging in.

A password login would create a new device (and new encryption keys) on every run, so with a
password the check only asks whether the homeserver offers password login. An access token
is checked with ``whoami``, which also names the device the token belongs to.
"""

from __future__ import annotations

from bot.config import Config, MatrixSettings
from bot.doctor.base import CheckResult
from bot.doctor.http import DEFAULT_TIMEOUT_SECONDS, Answer, Unreachable, get, join

NAME = "matrix"
PASSWORD_FLOW = "m.login.password"


class MatrixCheck:
    name = NAME

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        self._timeout = timeout

    async def __call__(self, config: Config) -> CheckResult:
        settings = config.matrix
        if not settings.homeserver:
            return CheckResult.skipped(NAME, "matrix.homeserver is not set: Matrix is off")
        problem = settings_problem(settings)
        if problem:
            return CheckResult.failed(NAME, problem)
        try:
            return await self._check_server(settings, settings.homeserver)
        except Unreachable as error:
            return CheckResult.failed(
                NAME,
                f"cannot reach the homeserver {settings.homeserver} ({error}): set "
                "matrix.homeserver to its client URL (the base_url in "
                "https://<server>/.well-known/matrix/client)",
            )

    async def _check_server(self, settings: MatrixSettings, homeserver: str) -> CheckResult:
        versions = await get(
            join(homeserver, "/_matrix/client/versions"), timeout_seconds=self._timeout
        )
        if versions.status_code != 200 or not isinstance(versions.field("versions"), list):
            return CheckResult.failed(
                NAME,
                f"{homeserver} answered HTTP {versions.status_code} to /_matrix/client/versions: "
                "it is not a Matrix client API; check matrix.homeserver",
            )
        if settings.access_token:
            whoami = await get(
                join(homeserver, "/_matrix/client/v3/account/whoami"),
                headers={"Authorization": f"Bearer {settings.access_token}"},
                timeout_seconds=self._timeout,
            )
            return judge_whoami(whoami, settings)
        login = await get(
            join(homeserver, "/_matrix/client/v3/login"), timeout_seconds=self._timeout
        )
        return judge_login_flows(login, homeserver, settings)


def settings_problem(settings: MatrixSettings) -> str | None:
    """What is missing or contradictory in ``[matrix]`` before asking the server anything."""
    return settings.login_problem()


def judge_whoami(answer: Answer, settings: MatrixSettings) -> CheckResult:
    if answer.status_code == 401:
        code = answer.field("errcode") or "HTTP 401"
        return CheckResult.failed(
            NAME,
            f"the homeserver rejected matrix.access_token ({code}): log in again and put the "
            "new token in MNEMO_MATRIX__ACCESS_TOKEN, or use MNEMO_MATRIX__PASSWORD instead",
        )
    user_id, device_id = answer.field("user_id"), answer.field("device_id")
    if answer.status_code != 200 or not isinstance(user_id, str):
        return CheckResult.failed(
            NAME, f"whoami answered HTTP {answer.status_code}: see the homeserver's log"
        )
    if user_id != settings.user_id:
        return CheckResult.failed(
            NAME,
            f"matrix.access_token belongs to {user_id}, not to matrix.user_id "
            f"{settings.user_id}: fix one of them",
        )
    return _judge_device(user_id, device_id, settings.device_id)


def _judge_device(user_id: str, device_id: object, configured: str | None) -> CheckResult:
    if isinstance(device_id, str) and configured != device_id:
        # The E2EE store belongs to one device: a token of another device cannot decrypt.
        what = "is not set" if configured is None else f"is {configured}"
        return CheckResult.failed(
            NAME,
            f"the access token is for device {device_id}, but matrix.device_id {what}: "
            f"set matrix.device_id = {device_id!r}",
        )
    return CheckResult.passed(NAME, f"access token works for {user_id} (device {device_id})")


def judge_login_flows(answer: Answer, homeserver: str, settings: MatrixSettings) -> CheckResult:
    flows = answer.field("flows")
    types = (
        [flow.get("type") for flow in flows if isinstance(flow, dict)]
        if isinstance(flows, list)
        else []
    )
    if PASSWORD_FLOW not in types:
        offered = ", ".join(str(kind) for kind in types) or f"HTTP {answer.status_code}"
        return CheckResult.failed(
            NAME,
            f"{homeserver} does not offer password login ({offered}): log in once with a "
            "client and use MNEMO_MATRIX__ACCESS_TOKEN with matrix.device_id instead",
        )
    return CheckResult.passed(
        NAME,
        f"{homeserver} offers password login for {settings.user_id} (the password itself is "
        "tried at start-up: a test login would create a new device)",
    )
