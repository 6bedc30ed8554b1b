"""``mnemo doctor`` against real HTTP servers on 127.0.0.1 shaped like healthy and broken
Ollama, OpenAI-compatible servers, SearXNG and the Discord REST API.

No such service can run here, so each is a small server from ``tests/servers`` that answers
the way the real one does (status codes and bodies). Matrix is checked against a real Synapse
in ``test_doctor_matrix.py``.
"""

from __future__ import annotations

import argparse
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.cli.doctor import DoctorCommand
from bot.config import Config
from bot.doctor import Check, CheckResult, CheckStatus
from bot.doctor.discord import DiscordCheck, invite_url
from bot.doctor.http import Answer
from bot.doctor.llm import LanguageModelCheck, OllamaEmbeddingModelCheck, ollama_tag
from bot.doctor.matrix import MatrixCheck
from bot.doctor.reranker import RerankerCheck
from bot.doctor.searxng import SearxngCheck, judge
from memory.recall import ScriptedReranker
from tests.servers.discord_api_server import FLAGS_WITHOUT_MESSAGE_CONTENT, DiscordApiServer
from tests.servers.ollama_server import OllamaServer
from tests.servers.openai_server import OpenAICompatibleServer
from tests.servers.searxng_server import SearxngShapedServer, running_searxng


def config_with(**sections: dict[str, Any]) -> Config:
    return Config.model_validate(sections)


@pytest.fixture
def closed_url() -> str:
    """A URL on 127.0.0.1 where nothing listens: connection refused, at once."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def searxng() -> Iterator[SearxngShapedServer]:
    with running_searxng() as server:
        yield server


# -- language model ---------------------------------------------------------------------------


async def test_ollama_with_the_model_pulled_is_green() -> None:
    with OllamaServer(models=("qwen2.5:7b", "llama3.1:8b")) as ollama:
        base_url = ollama.base_url
        config = config_with(llm={"base_url": base_url, "model": "llama3.1:8b"})
        result = await LanguageModelCheck()(config)
    assert result.status is CheckStatus.OK
    assert result.detail.startswith("llama3.1:8b pulled on Ollama")
    assert result.detail.endswith(f"at {base_url}")


async def test_ollama_without_the_model_names_the_pull_command() -> None:
    with OllamaServer(models=("qwen2.5:7b",)) as ollama:
        config = config_with(llm={"base_url": ollama.base_url, "model": "llama3.1:8b"})
        result = await LanguageModelCheck()(config)
    assert result.status is CheckStatus.FAIL
    assert result.detail == (
        "llm.model llama3.1:8b is not pulled (pulled: qwen2.5:7b): run `ollama pull "
        "llama3.1:8b` (with compose: `docker compose run --rm pull-models`)"
    )


async def test_a_model_without_tag_means_latest() -> None:
    assert ollama_tag("mistral") == "mistral:latest"
    assert ollama_tag("hf.co/org/model:Q4_K_M") == "hf.co/org/model:Q4_K_M"
    assert ollama_tag("localhost:5000/mistral") == "localhost:5000/mistral:latest"
    with OllamaServer(models=("mistral:latest",)) as ollama:
        config = config_with(llm={"base_url": ollama.base_url, "model": "mistral"})
        assert (await LanguageModelCheck()(config)).status is CheckStatus.OK


async def test_ollama_not_running_says_how_to_start_it(closed_url: str) -> None:
    result = await LanguageModelCheck()(config_with(llm={"base_url": closed_url}))
    assert result.status is CheckStatus.FAIL
    assert result.detail == (
        f"cannot reach Ollama at {closed_url} (connection refused): start it (`ollama serve`, "
        "or `docker compose up -d ollama`) or fix llm.base_url"
    )


async def test_a_server_that_is_not_ollama(searxng: SearxngShapedServer) -> None:
    result = await LanguageModelCheck()(config_with(llm={"base_url": searxng.base_url}))
    assert result.status is CheckStatus.FAIL
    assert "answered HTTP 404 to /api/tags, not like Ollama" in result.detail
    assert "is llm.base_url the Ollama server's URL?" in result.detail


async def test_ollama_configured_at_an_openai_compatible_server_suggests_openai() -> None:
    """The issue's case: provider "ollama" pointed at llama.cpp's server."""
    with OpenAICompatibleServer(model="qwen") as server:
        for base_url in (server.origin, server.base_url):
            result = await LanguageModelCheck()(config_with(llm={"base_url": base_url}))
            assert result.status is CheckStatus.FAIL
            assert result.detail == (
                f"{base_url} is an OpenAI-compatible server, not Ollama: set "
                f'llm.provider = "openai" and llm.base_url = "{server.base_url}"'
            )


async def test_openai_configured_at_ollama_suggests_its_v1_root_or_ollama() -> None:
    with OllamaServer(models=("llama3.1:8b",)) as server:
        root = server.base_url
        llm = {"provider": "openai", "base_url": root, "model": "llama3.1:8b"}
        result = await LanguageModelCheck()(config_with(llm=llm))
    assert result.status is CheckStatus.FAIL
    assert f'set llm.base_url = "{root}/v1"' in result.detail
    assert f'or llm.provider = "ollama" and llm.base_url = "{root}"' in result.detail


async def test_openai_compatible_server_lists_the_model() -> None:
    with OpenAICompatibleServer(model="qwen2.5-7b-instruct", api_key="sk-local") as server:
        base_url = server.base_url
        llm = {"provider": "openai", "base_url": base_url, "model": "qwen2.5-7b-instruct"}
        good = await LanguageModelCheck()(config_with(llm={**llm, "api_key": "sk-local"}))
        wrong_key = await LanguageModelCheck()(config_with(llm={**llm, "api_key": "sk-other"}))
        wrong_model = await LanguageModelCheck()(
            config_with(llm={**llm, "api_key": "sk-local", "model": "llama3"})
        )
    assert good.status is CheckStatus.OK
    assert good.detail == f"qwen2.5-7b-instruct served at {base_url}"
    assert wrong_key.status is CheckStatus.FAIL
    assert "refused the API key (HTTP 401): set MNEMO_LLM__API_KEY" in wrong_key.detail
    assert wrong_model.status is CheckStatus.FAIL
    assert "llm.model llama3 is not served" in wrong_model.detail
    assert "(served: qwen2.5-7b-instruct)" in wrong_model.detail


async def test_ollama_embedding_model_is_checked_only_for_the_ollama_backend() -> None:
    with OllamaServer(models=("llama3.1:8b",)) as ollama:
        skipped = await OllamaEmbeddingModelCheck()(Config())
        embedding = {
            "backend": "ollama",
            "model": "nomic-embed-text",
            "ollama_url": ollama.base_url,
        }
        missing = await OllamaEmbeddingModelCheck()(config_with(embedding=embedding))
        ollama.models = (*ollama.models, "nomic-embed-text:latest")
        present = await OllamaEmbeddingModelCheck()(config_with(embedding=embedding))
    assert skipped.status is CheckStatus.SKIP
    assert skipped.detail == "embedding.backend is fastembed, not ollama"
    assert missing.status is CheckStatus.FAIL
    assert missing.detail.startswith(
        "embedding.model nomic-embed-text is not pulled (pulled: llama3.1:8b): "
        "run `ollama pull nomic-embed-text`"
    )
    assert present.status is CheckStatus.OK


# -- SearXNG ----------------------------------------------------------------------------------


async def test_searxng_not_configured_is_skipped() -> None:
    result = await SearxngCheck()(Config())
    assert result.status is CheckStatus.SKIP
    assert result.detail == "search.searxng_url is not set: web search is off"


async def test_searxng_answering_json_is_green(searxng: SearxngShapedServer) -> None:
    check = SearxngCheck(probe_query="paris weather")
    result = await check(config_with(search={"searxng_url": searxng.base_url}))
    assert result.status is CheckStatus.OK
    assert result.detail.startswith(f"{searxng.base_url} answers JSON (")
    assert "0 results" not in result.detail
    # It asked the way the bot asks: /search with format=json.
    assert searxng.requests[-1].path == "/search"
    assert searxng.requests[-1].parameters["format"] == "json"


async def test_searxng_with_json_disabled_says_to_add_json_to_formats() -> None:
    with running_searxng("forbidden") as searxng:
        result = await SearxngCheck()(config_with(search={"searxng_url": searxng.base_url}))
    assert result.status is CheckStatus.FAIL
    assert result.detail == (
        f"{searxng.base_url} refuses format=json (HTTP 403): add json to search.formats in "
        "SearXNG's settings.yml (search: formats: [html, json]) and restart SearXNG"
    )


async def test_searxng_whose_engines_all_failed(searxng: SearxngShapedServer) -> None:
    # The recorded empty answer lists brave and duckduckgo as timed out.
    result = await SearxngCheck()(config_with(search={"searxng_url": searxng.base_url}))
    assert result.status is CheckStatus.FAIL
    assert "its engines failed (brave (timeout), duckduckgo (timeout))" in result.detail
    assert "can reach the internet" in result.detail


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("not_json", "answered, but not with SearXNG's JSON"),
        ("server_error", "answered HTTP 500 to a search: see SearXNG's log"),
    ],
)
async def test_searxng_other_failures(mode: Any, expected: str) -> None:
    with running_searxng(mode) as searxng:
        result = await SearxngCheck()(config_with(search={"searxng_url": searxng.base_url}))
    assert result.status is CheckStatus.FAIL
    assert expected in result.detail


async def test_searxng_not_running(closed_url: str) -> None:
    result = await SearxngCheck()(config_with(search={"searxng_url": closed_url}))
    assert result.status is CheckStatus.FAIL
    assert result.detail == (
        f"cannot reach SearXNG at {closed_url} (connection refused): start it "
        "(`docker compose up -d searxng`) or fix search.searxng_url"
    )


def test_searxng_limiter_answer_says_to_turn_it_off() -> None:
    # SearXNG's limiter answers 429; the test server has no limiter mode, so judge the answer.
    result = judge(Answer(429, "Too Many Requests", is_json=False), "http://searxng:8080")
    assert result.status is CheckStatus.FAIL
    assert "rate-limits the bot (HTTP 429)" in result.detail
    assert "server: limiter: false" in result.detail


# -- Discord ----------------------------------------------------------------------------------


async def test_discord_without_token_is_skipped_and_calls_nothing() -> None:
    with DiscordApiServer() as discord:
        result = await DiscordCheck(api_base_url=discord.base_url)(Config())
    assert result.status is CheckStatus.SKIP
    assert result.detail == "discord.token is not set: Discord is off"
    assert discord.authorizations == []


async def test_discord_valid_token_with_intent_gives_the_invite_link() -> None:
    with DiscordApiServer(token="good-token") as discord:
        check = DiscordCheck(api_base_url=discord.base_url)
        result = await check(config_with(discord={"token": "good-token"}))
    assert result.status is CheckStatus.OK
    assert result.detail == (
        f"token works for mnemo ({discord.bot_id}), Message Content intent on; invite: "
        f"{invite_url(discord.bot_id)}"
    )
    assert discord.authorizations == ["Bot good-token", "Bot good-token"]
    assert "scope=bot+applications.commands" in invite_url(discord.bot_id)


async def test_discord_rejected_token_says_how_to_reset_it() -> None:
    with DiscordApiServer(token="good-token") as discord:
        check = DiscordCheck(api_base_url=discord.base_url)
        result = await check(config_with(discord={"token": "stale-token"}))
    assert result.status is CheckStatus.FAIL
    assert result.detail == (
        "Discord rejected discord.token (HTTP 401): in the Developer Portal, Bot -> Reset "
        "Token, and put the new token in MNEMO_DISCORD__TOKEN"
    )


async def test_discord_without_message_content_intent() -> None:
    with DiscordApiServer(application_flags=FLAGS_WITHOUT_MESSAGE_CONTENT) as discord:
        check = DiscordCheck(api_base_url=discord.base_url)
        result = await check(config_with(discord={"token": discord.token}))
    assert result.status is CheckStatus.FAIL
    assert "the Message Content intent is off" in result.detail
    assert "Privileged Gateway Intents" in result.detail


async def test_discord_api_unreachable(closed_url: str) -> None:
    check = DiscordCheck(api_base_url=closed_url)
    result = await check(config_with(discord={"token": "any"}))
    assert result.status is CheckStatus.FAIL
    assert result.detail == (
        f"cannot reach the Discord API at {closed_url} (connection refused): the bot needs "
        "outgoing HTTPS to discord.com; check this machine's DNS and firewall"
    )


# -- Matrix: what is decided before asking the homeserver ------------------------------------


@pytest.mark.parametrize(
    ("matrix", "expected"),
    [
        ({}, "matrix.homeserver is not set: Matrix is off"),
        ({"homeserver": "http://127.0.0.1:9"}, "matrix.user_id must be the bot account"),
        (
            {"homeserver": "http://127.0.0.1:9", "user_id": "mnemo", "password": "p"},
            "matrix.user_id must be the bot account, like @mnemo:example.org (got 'mnemo')",
        ),
        (
            {
                "homeserver": "http://127.0.0.1:9",
                "user_id": "@mnemo:x",
                "password": "p",
                "device_id": "MNEMOBOT",
            },
            "matrix.device_id goes with matrix.access_token",
        ),
        (
            {"homeserver": "http://127.0.0.1:9", "user_id": "@mnemo:x"},
            "no credentials: set MNEMO_MATRIX__ACCESS_TOKEN (with matrix.device_id) or "
            "MNEMO_MATRIX__PASSWORD in .env",
        ),
        (
            {
                "homeserver": "http://127.0.0.1:9",
                "user_id": "@mnemo:x",
                "password": "p",
                "access_token": "t",
            },
            "both matrix.password and matrix.access_token are set: keep one",
        ),
    ],
)
async def test_matrix_settings_problems(matrix: dict[str, str], expected: str) -> None:
    result = await MatrixCheck()(config_with(matrix=matrix))
    assert result.status is (CheckStatus.SKIP if not matrix else CheckStatus.FAIL)
    assert result.detail.startswith(expected)


async def test_matrix_homeserver_unreachable(closed_url: str) -> None:
    matrix = {"homeserver": closed_url, "user_id": "@mnemo:x", "password": "p"}
    result = await MatrixCheck()(config_with(matrix=matrix))
    assert result.status is CheckStatus.FAIL
    assert result.detail.startswith(
        f"cannot reach the homeserver {closed_url} (connection refused): set matrix.homeserver"
    )


async def test_matrix_homeserver_that_is_not_matrix(searxng: SearxngShapedServer) -> None:
    matrix = {"homeserver": searxng.base_url, "user_id": "@mnemo:x", "password": "p"}
    result = await MatrixCheck()(config_with(matrix=matrix))
    assert result.status is CheckStatus.FAIL
    assert "HTTP 404 to /_matrix/client/versions: it is not a Matrix client API" in result.detail


# -- reranker ---------------------------------------------------------------------------------


async def test_reranker_that_cannot_be_downloaded_warns_clearly(
    tmp_path: Path, closed_url: str
) -> None:
    # No cross-encoder is cached here and no model hub is reachable: the bot would fall back
    # to cosine order, and the doctor says so, with where the model is expected.
    config = config_with(embedding={"cache_dir": str(tmp_path / "models")})
    result = await RerankerCheck(hub_url=closed_url)(config)
    assert result.status is CheckStatus.WARN
    assert result.ok  # a warning does not fail the doctor
    assert result.detail == (
        f"Xenova/ms-marco-MiniLM-L-6-v2 is not downloaded (cache: {tmp_path / 'models'}) and "
        f"the model hub {closed_url} cannot be reached (connection refused): run `mnemo "
        "doctor` once where the hub is reachable, with the same cache directory, or set "
        "memory.reranker_model_path to a local ONNX directory; until then explicit lookups "
        "use cosine order"
    )


async def test_reranker_from_a_wrong_local_directory_warns(tmp_path: Path) -> None:
    config = config_with(memory={"reranker_model_path": str(tmp_path / "missing")})
    result = await RerankerCheck()(config)
    assert result.status is CheckStatus.WARN
    assert result.detail.startswith(
        "could not load reranker model 'Xenova/ms-marco-MiniLM-L-6-v2' from "
        f"{tmp_path / 'missing'}: {tmp_path / 'missing'} is not a directory"
    )
    assert result.detail.endswith(
        ": fix memory.reranker_model_path; until then explicit lookups use cosine order"
    )


async def test_reranker_that_loads_is_green(tmp_path: Path, closed_url: str) -> None:
    # Test double: no cross-encoder weights can be had here, so a scripted reranker stands
    # in for a cached model; the check must score a pair with it, then close it.
    used: list[tuple[ScriptedReranker, bool]] = []

    def factory(config: Config, local_files_only: bool) -> ScriptedReranker:
        used.append((ScriptedReranker(default=1.0), local_files_only))
        return used[-1][0]

    config = config_with(embedding={"cache_dir": str(tmp_path)})
    result = await RerankerCheck(hub_url=closed_url, reranker_factory=factory)(config)
    assert result.status is CheckStatus.OK
    assert result.detail == f"Xenova/ms-marco-MiniLM-L-6-v2 loads from the cache in {tmp_path}"
    [(reranker, local_files_only)] = used
    assert local_files_only  # the cache is tried without any download
    assert reranker.calls and reranker.closed


async def test_reranker_turned_off_is_skipped() -> None:
    result = await RerankerCheck()(config_with(memory={"reranker_model": ""}))
    assert result.status is CheckStatus.SKIP


async def test_reranker_model_fastembed_does_not_know_fails() -> None:
    result = await RerankerCheck()(config_with(memory={"reranker_model": "nobody/no-such"}))
    assert result.status is CheckStatus.FAIL
    assert result.detail.startswith(
        "memory.reranker_model nobody/no-such is not a cross-encoder fastembed knows"
    )


# -- the command: one line per check, exit code 1 only for red -------------------------------


def service_checks(discord: DiscordApiServer) -> Callable[[], list[Check]]:
    """The service checks, with Discord's API on 127.0.0.1 (the storage ones are in test_cli)."""
    return lambda: [
        LanguageModelCheck(),
        SearxngCheck(probe_query="paris weather"),
        MatrixCheck(),
        DiscordCheck(api_base_url=discord.base_url),
    ]


async def run_doctor(checks: Callable[[], list[Check]], config: Config) -> int:
    return await DoctorCommand(checks).run(argparse.Namespace(), config)


async def test_doctor_on_a_healthy_stack_is_all_green(
    searxng: SearxngShapedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    with OllamaServer(models=("llama3.1:8b",)) as ollama, DiscordApiServer() as discord:
        config = config_with(
            llm={"base_url": ollama.base_url},
            search={"searxng_url": searxng.base_url},
            discord={"token": discord.token},
        )
        exit_code = await run_doctor(service_checks(discord), config)
    lines = capsys.readouterr().out.splitlines()
    assert exit_code == 0
    assert [line.split(":", 1)[0] for line in lines] == [
        "ok   language model",
        "ok   web search",
        "skip matrix",
        "ok   discord",
    ]


async def test_doctor_on_a_broken_stack_prints_the_fixes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with (
        OllamaServer(models=()) as ollama,
        running_searxng("forbidden") as searxng,
        DiscordApiServer(token="the-real-token") as discord,
    ):
        config = config_with(
            llm={"base_url": ollama.base_url, "model": "llama3.1:8b"},
            search={"searxng_url": searxng.base_url},
            discord={"token": "an-old-token"},
        )
        exit_code = await run_doctor(service_checks(discord), config)
    lines = capsys.readouterr().out.splitlines()
    assert exit_code == 1
    assert lines == [
        "FAIL language model: llm.model llama3.1:8b is not pulled (pulled: none): run `ollama "
        "pull llama3.1:8b` (with compose: `docker compose run --rm pull-models`)",
        f"FAIL web search: {searxng.base_url} refuses format=json (HTTP 403): add json to "
        "search.formats in SearXNG's settings.yml (search: formats: [html, json]) and restart "
        "SearXNG",
        "skip matrix: matrix.homeserver is not set: Matrix is off",
        "FAIL discord: Discord rejected discord.token (HTTP 401): in the Developer Portal, Bot "
        "-> Reset Token, and put the new token in MNEMO_DISCORD__TOKEN",
    ]


async def test_a_warning_does_not_fail_the_doctor(
    tmp_path: Path, closed_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_with(embedding={"cache_dir": str(tmp_path)})
    exit_code = await run_doctor(lambda: [RerankerCheck(hub_url=closed_url)], config)
    assert exit_code == 0
    assert capsys.readouterr().out.startswith("warn reranker: Xenova/ms-marco-MiniLM-L-6-v2 is")


async def test_a_check_that_breaks_is_a_red_line_and_the_others_still_run(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    class BrokenCheck:
        name = "broken"

        async def __call__(self, config: Config) -> CheckResult:
            raise RuntimeError("disk on fire")

    checks: list[Check] = [BrokenCheck(), SearxngCheck()]
    exit_code = await run_doctor(lambda: checks, Config())
    assert exit_code == 1
    assert capsys.readouterr().out.splitlines() == [
        "FAIL broken: the check itself failed (RuntimeError: disk on fire); see the log",
        "skip web search: search.searxng_url is not set: web search is off",
    ]
    assert "doctor check broken failed unexpectedly" in caplog.text
    assert "RuntimeError: disk on fire" in caplog.text  # the traceback, for the operator
