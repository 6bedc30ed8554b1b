"""How long ``mnemo doctor`` takes, check by check, on a healthy local stack.

    .venv/bin/python -m benchmarks.doctor [--runs 3]

The services are the Ollama-, SearXNG- and Discord-shaped servers of the tests on 127.0.0.1
(no real ones run here); the database and index are fresh files in a temp directory; the
embedding model is the real all-MiniLM-L6-v2. The reranker check is pointed at a closed port
(no hub here), so it measures the cache miss the doctor reports on an offline machine.
Prints the median seconds of each check over ``--runs`` runs and of the whole run.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import tempfile
import time
from pathlib import Path

from bot.config import Config
from bot.doctor import Check, default_checks
from bot.doctor.reranker import RerankerCheck
from bot.doctor.searxng import SearxngCheck
from tests.conftest import LOCAL_MODEL_DIRECTORY
from tests.servers.discord_api_server import DiscordApiServer
from tests.servers.ollama_server import OllamaServer
from tests.servers.searxng_server import running_searxng


def closed_port_url() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def checks_for_local_stack(discord_api: str, model_hub: str) -> list[Check]:
    checks = default_checks(discord_api=discord_api, model_hub=model_hub)
    # The recorded SearXNG answers "paris weather" with results; "weather" alone finds none.
    return [
        SearxngCheck(probe_query="paris weather") if isinstance(check, SearxngCheck) else check
        for check in checks
    ]


async def timed_run(config: Config, checks: list[Check]) -> dict[str, float]:
    seconds: dict[str, float] = {}
    for check in checks:
        started = time.perf_counter()
        result = await check(config)
        seconds[f"{result.status.value:4} {result.name}"] = time.perf_counter() - started
    return seconds


async def main(runs: int) -> None:
    with (
        tempfile.TemporaryDirectory() as directory,
        OllamaServer(models=("llama3.1:8b",)) as ollama,
        running_searxng() as searxng,
        DiscordApiServer() as discord,
    ):
        config = Config.model_validate(
            {
                "storage": {"data_dir": str(Path(directory) / "data")},
                "embedding": {"model_path": str(LOCAL_MODEL_DIRECTORY)},
                "llm": {"base_url": ollama.base_url},
                "search": {"searxng_url": searxng.base_url},
                "discord": {"token": discord.token},
            }
        )
        checks = checks_for_local_stack(discord.base_url, closed_port_url())
        assert any(isinstance(check, RerankerCheck) for check in checks)
        samples = [await timed_run(config, checks) for _ in range(runs)]
    print(f"median of {runs} runs, seconds")
    for name in samples[0]:
        print(f"{name:32} {statistics.median(sample[name] for sample in samples):7.3f}")
    total = statistics.median(sum(sample.values()) for sample in samples)
    print(f"{'whole doctor':32} {total:7.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    asyncio.run(main(parser.parse_args().runs))
