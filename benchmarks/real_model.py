"""What the benchmarks against a REAL model server share: where the server is, and a bot
config that talks to it (`../shared/llm/serve.sh` serves the 0.5B model on these defaults)."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.config import Config

DEFAULT_BASE_URL = "http://127.0.0.1:18435/v1"
DEFAULT_MODEL = "qwen2.5-coder-0.5b-instruct"


def server_arguments(description: str) -> argparse.ArgumentParser:
    """A parser with ``--base-url`` and ``--model``; the caller adds its own options."""
    parser = argparse.ArgumentParser(description=description.split("\n", 1)[0])
    parser.add_argument("--base-url", default=DEFAULT_BASE_URL)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    return parser


def config(data_dir: Path, base_url: str, model: str) -> Config:
    """The bot's config with its data in ``data_dir``, its model at the server, no reranker."""
    return Config.model_validate(
        {
            "storage": {"data_dir": str(data_dir)},
            "llm": {
                "provider": "openai",
                "base_url": base_url,
                "model": model,
                "timeout_seconds": 600,
            },
            "memory": {"reranker_model": ""},
        }
    )
