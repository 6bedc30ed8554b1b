"""A Docker daemon of the test's own: its data, exec root and socket under a cache folder.

Debian's ``docker.io`` starts as root on these machines with no bridge and no iptables
(containers that must reach the package registries, the builds, run with the host's
network). Images stay in the data root between runs, so a second run builds from cache.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

CACHE_VARIABLE = "MNEMO_DEPLOY_CACHE"
START_SECONDS = 60.0
STOP_SECONDS = 30.0
PACKAGES = {"dockerd": "docker.io", "debootstrap": "debootstrap"}


def cache_directory() -> Path:
    configured = os.environ.get(CACHE_VARIABLE)
    return Path(configured) if configured else Path.home() / ".cache" / "mnemo-deploy"


def why_not_here() -> str | None:
    """Why the deploy tests cannot run on this machine, or None if they can."""
    if os.geteuid() != 0:
        return "the deploy tests start their own Docker daemon, which needs root"
    if shutil.which("docker") is None:
        return "no docker client on PATH"
    if not all(shutil.which(tool) for tool in PACKAGES) and shutil.which("apt-get") is None:
        return "dockerd or debootstrap missing and no apt-get to install them"
    return None


def install_missing_packages() -> None:
    """``apt-get install docker.io debootstrap`` where they are missing (idempotent)."""
    missing = sorted({package for tool, package in PACKAGES.items() if not shutil.which(tool)})
    if not missing:
        return
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=environment)
    subprocess.run(
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing],
        check=True,
        env=environment,
    )


class DockerDaemon:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.socket = directory / "docker.sock"
        self.host = f"unix://{self.socket}"
        self.storage_driver: str | None = None
        self._process: subprocess.Popen[bytes] | None = None

    def environment(self) -> dict[str, str]:
        """The environment for ``docker`` and ``docker compose`` against this daemon."""
        return {**os.environ, "DOCKER_HOST": self.host}

    def start(self) -> None:
        """overlay2 first (about twice as fast); vfs only if overlay mounts fail here."""
        self.directory.mkdir(parents=True, exist_ok=True)
        for driver in ("overlay2", "vfs"):
            if self._start_with(driver):
                self.storage_driver = driver
                return
        raise RuntimeError(f"dockerd did not start:\n{self.log_tail()}")

    def _start_with(self, driver: str) -> bool:
        data_root = self.directory / f"data-{driver}"
        exec_root = self.directory / "exec"
        self.socket.unlink(missing_ok=True)
        log = (self.directory / "dockerd.log").open("ab")
        self._process = subprocess.Popen(
            [
                "nice", "-n", "10", "dockerd",
                f"--storage-driver={driver}",
                "--iptables=false", "--ip-masq=false", "--bridge=none",
                "--data-root", str(data_root),
                "--exec-root", str(exec_root),
                "--pidfile", str(self.directory / "docker.pid"),
                "-H", self.host,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        log.close()
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                return False
            if self._answers():
                return True
            time.sleep(0.5)
        self.stop()
        return False

    def _answers(self) -> bool:
        finished = subprocess.run(
            ["docker", "info", "--format", "{{.Driver}}"],
            env=self.environment(),
            capture_output=True,
            timeout=30,
        )
        return finished.returncode == 0

    def log_tail(self, lines: int = 30) -> str:
        path = self.directory / "dockerd.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """Stop dockerd (it stops its containers and containerd first)."""
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=10)
        self._process = None
        # dockerd leaves its own network namespace mounted in the exec root.
        namespace = self.directory / "exec" / "netns" / "default"
        if os.path.ismount(namespace):  # Path.is_mount says False for a file before 3.12
            subprocess.run(["umount", str(namespace)], check=False, capture_output=True)
