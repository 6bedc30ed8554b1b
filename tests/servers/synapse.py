"""A real, temporary Synapse homeserver for integration tests.

Synapse runs from its own virtual environment (``scripts/install-synapse.sh`` makes
``.venv-synapse``; ``MNEMO_SYNAPSE_PYTHON`` may point elsewhere) because its pinned
dependencies would clash with ours. Each server lives in a temporary directory: SQLite,
127.0.0.1 on a free port, no federation, registration only through the shared-secret admin API,
rate limits raised so tests are not throttled.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

REPOSITORY_ROOT = Path(__file__).resolve().parent.parent.parent
SYNAPSE_PYTHON_VARIABLE = "MNEMO_SYNAPSE_PYTHON"
SERVER_NAME = "localhost"
START_TIMEOUT_SECONDS = 90.0

_HIGH_RATE = {"per_second": 1000, "burst_count": 1000}


def synapse_python() -> Path | None:
    """The interpreter that has ``synapse`` installed, or None if it is not installed."""
    configured = os.environ.get(SYNAPSE_PYTHON_VARIABLE)
    candidate = (
        Path(configured) if configured else REPOSITORY_ROOT / ".venv-synapse" / "bin" / "python"
    )
    return candidate if candidate.exists() else None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _signing_key() -> str:
    # Synapse's key file format: "<algorithm> <version> <unpadded base64 of the 32-byte seed>".
    seed = base64.b64encode(secrets.token_bytes(32)).decode().rstrip("=")
    return f"ed25519 a_test {seed}\n"


def homeserver_config(
    directory: Path, port: int, shared_secret: str, bind_address: str = "127.0.0.1"
) -> dict[str, object]:
    """The homeserver.yaml content (JSON is valid YAML, so no YAML writer is needed)."""
    return {
        "server_name": SERVER_NAME,
        "pid_file": str(directory / "homeserver.pid"),
        "listeners": [
            {
                "port": port,
                "bind_addresses": [bind_address],
                "type": "http",
                "tls": False,
                "x_forwarded": False,
                "resources": [{"names": ["client"], "compress": False}],
            }
        ],
        "database": {"name": "sqlite3", "args": {"database": str(directory / "homeserver.db")}},
        "log_config": str(directory / "log.config.yaml"),
        "media_store_path": str(directory / "media"),
        "signing_key_path": str(directory / "signing.key"),
        "registration_shared_secret": shared_secret,
        "enable_registration": False,
        # The lowest cost bcrypt accepts: registering and logging in test users stays fast.
        "bcrypt_rounds": 4,
        "macaroon_secret_key": secrets.token_hex(16),
        "form_secret": secrets.token_hex(16),
        "report_stats": False,
        "enable_metrics": False,
        "trusted_key_servers": [],
        "suppress_key_server_warning": True,
        "federation_domain_whitelist": [],
        "presence": {"enabled": False},
        "url_preview_enabled": False,
        "rc_message": _HIGH_RATE,
        "rc_registration": _HIGH_RATE,
        "rc_login": {
            "address": _HIGH_RATE,
            "account": _HIGH_RATE,
            "failed_attempts": _HIGH_RATE,
        },
        "rc_joins": {"local": _HIGH_RATE, "remote": _HIGH_RATE},
        "rc_joins_per_room": _HIGH_RATE,
        "rc_invites": {"per_room": _HIGH_RATE, "per_user": _HIGH_RATE, "per_issuer": _HIGH_RATE},
        "rc_key_requests": _HIGH_RATE,
        "rc_admin_redaction": _HIGH_RATE,
        "rc_3pid_validation": _HIGH_RATE,
        "rc_room_creation": _HIGH_RATE,
        "rc_presence": {"per_user": _HIGH_RATE},
        "rc_delayed_event_mgmt": _HIGH_RATE,
    }


def log_config(directory: Path) -> dict[str, object]:
    return {
        "version": 1,
        "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
        "handlers": {
            "file": {
                "class": "logging.FileHandler",
                "formatter": "plain",
                "filename": str(directory / "homeserver.log"),
            }
        },
        "root": {"level": "WARNING", "handlers": ["file"]},
        "disable_existing_loggers": False,
    }


@dataclass(frozen=True, slots=True)
class RegisteredUser:
    user_id: str
    password: str
    localpart: str


class SynapseServer:
    """One Synapse process; ``start()`` waits until the client API answers."""

    def __init__(self, python: Path, directory: Path, bind_address: str = "127.0.0.1") -> None:
        """``bind_address``: another address of this machine, for clients in containers."""
        self.python = python
        self.directory = directory
        self.bind_address = bind_address
        self.port = free_port()
        self.shared_secret = secrets.token_hex(16)
        self.url = f"http://{bind_address}:{self.port}"
        self.startup_seconds: float | None = None
        self._process: subprocess.Popen[bytes] | None = None

    def write_config(self) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / "media").mkdir(exist_ok=True)
        (self.directory / "signing.key").write_text(_signing_key())
        (self.directory / "log.config.yaml").write_text(json.dumps(log_config(self.directory)))
        config_path = self.directory / "homeserver.yaml"
        config = homeserver_config(self.directory, self.port, self.shared_secret, self.bind_address)
        config_path.write_text(json.dumps(config, indent=2))
        return config_path

    def start(self) -> None:
        config_path = self.write_config()
        began = time.monotonic()
        output = (self.directory / "stdout.log").open("wb")
        self._process = subprocess.Popen(
            [str(self.python), "-m", "synapse.app.homeserver", "--config-path", str(config_path)],
            cwd=self.directory,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        output.close()
        self._wait_until_ready(began)
        self.startup_seconds = time.monotonic() - began

    def _wait_until_ready(self, began: float) -> None:
        with httpx.Client(timeout=2.0) as client:
            while time.monotonic() - began < START_TIMEOUT_SECONDS:
                if self._process is not None and self._process.poll() is not None:
                    raise RuntimeError(f"Synapse exited early:\n{self.log_tail()}")
                try:
                    if client.get(f"{self.url}/_matrix/client/versions").status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                time.sleep(0.2)
        self.stop()
        tail = self.log_tail()
        raise RuntimeError(f"Synapse did not answer in {START_TIMEOUT_SECONDS}s:\n{tail}")

    def log_tail(self, lines: int = 40) -> str:
        texts = []
        for name in ("stdout.log", "homeserver.log"):
            path = self.directory / name
            if path.exists():
                texts.append("\n".join(path.read_text(errors="replace").splitlines()[-lines:]))
        return "\n".join(texts)

    def stop(self) -> None:
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=5)
        self._process = None

    def register(self, localpart: str, password: str | None = None) -> RegisteredUser:
        """Create an account through the shared-secret admin API (registration is closed)."""
        password = password or secrets.token_hex(12)
        endpoint = f"{self.url}/_synapse/admin/v1/register"
        with httpx.Client(timeout=30.0) as client:
            nonce = client.get(endpoint).raise_for_status().json()["nonce"]
            message = b"\x00".join(
                (nonce.encode(), localpart.encode(), password.encode(), b"notadmin")
            )
            mac = hmac.new(self.shared_secret.encode(), message, hashlib.sha1).hexdigest()
            body = {
                "nonce": nonce,
                "username": localpart,
                "password": password,
                "admin": False,
                "mac": mac,
            }
            response = client.post(endpoint, json=body)
            response.raise_for_status()
            user_id: str = response.json()["user_id"]
        return RegisteredUser(user_id=user_id, password=password, localpart=localpart)
