"""The images the stack needs, built on this machine: no image registry is reachable here.

- ``python:3.11-slim``: a stand-in made from Debian's own packages with debootstrap (once;
  it stays in the daemon's data root between runs);
- ``mnemo:local``: the project's Dockerfile as it is;
- stand-ins for ``ollama/ollama``, ``searxng/searxng`` and ``pgvector/pgvector`` (test
  doubles in ``standins/``), tagged with the names the compose file uses.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

import yaml

from tests.conftest import LOCAL_MODEL_DIRECTORY, REPOSITORY_ROOT

BASE = "python:3.11-slim"
MNEMO = "mnemo:local"
STANDINS = Path(__file__).with_name("standins")
DEBIAN_PACKAGES = "python3,python3-pip,python3-venv,ca-certificates"
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
BUILD_SECONDS = 1800

# The Python files each stand-in runs, relative to the repository (with their packages).
OLLAMA_FILES = (
    "tests/servers/loopback.py",
    "tests/servers/ollama_server.py",
    "tests/faults/llm_stand_in.py",
    "tests/deploy/standins/ollama.py",
    "tests/deploy/standins/ollama_cli.py",
)
SEARXNG_FILES = ("tests/servers/searxng_server.py", "tests/deploy/standins/searxng.py")


class Docker:
    """The docker client against one daemon."""

    def __init__(self, environment: Mapping[str, str]) -> None:
        self.environment = dict(environment)

    def run(
        self, *arguments: str, check: bool = True, timeout: float = 600, stdin: bytes = b""
    ) -> subprocess.CompletedProcess[str]:
        finished = subprocess.run(
            ["docker", *arguments],
            env=self.environment,
            input=stdin.decode(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and finished.returncode != 0:
            raise RuntimeError(
                f"docker {' '.join(arguments)} failed ({finished.returncode}):\n"
                f"{finished.stdout[-3000:]}\n{finished.stderr[-3000:]}"
            )
        return finished

    def has_image(self, name: str) -> bool:
        return self.run("image", "inspect", name, check=False).returncode == 0

    def build(self, tag: str, context: Path, dockerfile: Path | None = None) -> None:
        """``docker build`` with the host's network (there is no bridge to reach PyPI)."""
        command = ["nice", "-n", "10", "docker", "build", "--network=host", "-t", tag]
        if dockerfile is not None:
            command += ["-f", str(dockerfile)]
        finished = subprocess.run(
            [*command, str(context)],
            env=self.environment,
            capture_output=True,
            text=True,
            timeout=BUILD_SECONDS,
        )
        if finished.returncode != 0:
            raise RuntimeError(
                f"building {tag} failed:\n{finished.stdout[-4000:]}{finished.stderr}"
            )

    def image_size(self, name: str) -> int:
        return int(self.run("image", "inspect", "--format", "{{.Size}}", name).stdout)


def build_base(docker: Docker, work: Path) -> None:
    """``python:3.11-slim`` from Debian bookworm, as the issue describes it; once."""
    if docker.has_image(BASE):
        return
    root = work / "rootfs"
    shutil.rmtree(root, ignore_errors=True)
    subprocess.run(
        ["nice", "-n", "10", "debootstrap", "--variant=minbase",
         f"--include={DEBIAN_PACKAGES}", "bookworm", str(root)],
        check=True, capture_output=True, timeout=BUILD_SECONDS,
    )  # fmt: skip
    (root / "usr/local/bin/python").symlink_to("/usr/bin/python3")
    (root / "usr/local/bin/pip").symlink_to("/usr/bin/pip3")
    for marker in root.glob("usr/lib/python3*/EXTERNALLY-MANAGED"):
        marker.unlink()
    shutil.copyfile(HOST_CA_BUNDLE, root / "etc/ssl/certs/ca-certificates.crt")
    for leftover in (root / "var/cache/apt/archives").glob("*.deb"):
        leftover.unlink()
    with subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE) as archive:
        subprocess.run(
            ["docker", "import", "-", BASE],
            stdin=archive.stdout,
            env=docker.environment,
            check=True,
            capture_output=True,
            timeout=BUILD_SECONDS,
        )
    if archive.returncode != 0:
        raise RuntimeError(f"tar of the base's root file system failed ({archive.returncode})")
    shutil.rmtree(root, ignore_errors=True)


def compose_images() -> dict[str, str]:
    """The image each stand-in must be tagged as: whatever docker-compose.yml names."""
    services = yaml.safe_load((REPOSITORY_ROOT / "docker-compose.yml").read_text())["services"]
    return {
        "ollama": services["ollama"]["image"],
        "searxng": services["searxng"]["image"],
        "pgvector": services["postgres"]["image"],
    }


def copy_sources(files: tuple[str, ...], into: Path) -> None:
    """The files with every package ``__init__.py`` above them, so they import as in tests."""
    for name in files:
        source = REPOSITORY_ROOT / name
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        for package in Path(name).parents:
            if package != Path("."):
                shutil.copyfile(
                    REPOSITORY_ROOT / package / "__init__.py", into / package / "__init__.py"
                )


def build_standins(docker: Docker) -> None:
    names = compose_images()
    with tempfile.TemporaryDirectory(prefix="mnemo-standin-") as temporary:
        work = Path(temporary)
        ollama = work / "ollama"
        copy_sources(OLLAMA_FILES, ollama / "standin")
        shutil.copytree(LOCAL_MODEL_DIRECTORY, ollama / "model")
        docker.build(names["ollama"], ollama, STANDINS / "images" / "ollama.Dockerfile")

        searxng = work / "searxng"
        copy_sources(SEARXNG_FILES, searxng / "standin")
        shutil.copytree(
            REPOSITORY_ROOT / "tests/servers/searxng_responses",
            searxng / "standin/tests/servers/searxng_responses",
        )
        docker.build(names["searxng"], searxng, STANDINS / "images" / "searxng.Dockerfile")

        pgvector = work / "pgvector"
        pgvector.mkdir()
        shutil.copyfile(
            STANDINS / "images" / "postgres-entrypoint.sh", pgvector / "postgres-entrypoint.sh"
        )
        docker.build(names["pgvector"], pgvector, STANDINS / "images" / "pgvector.Dockerfile")
