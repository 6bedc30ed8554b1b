"""Doctor check of the cross-encoder reranker used by explicit lookups.

The bot loads it lazily and falls back to cosine order when it cannot, so a broken reranker
costs answer quality, not uptime: the doctor warns (yellow) rather than fails. The check
scores one pair with the same ``FastEmbedReranker`` the bot uses: from
``memory.reranker_model_path`` when set, else from fastembed's cache, and downloads only when
the model hub answers at all, because fastembed retries a failed download for a long while.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.config import Config
from bot.doctor.base import CheckResult
from bot.doctor.http import DEFAULT_TIMEOUT_SECONDS, Unreachable, get
from memory.recall import FastEmbedReranker, Reranker, RerankerError

NAME = "reranker"
MODEL_HUB = "https://huggingface.co"
FALLBACK_NOTE = "until then explicit lookups use cosine order"
OFFLINE_FIX = "or set memory.reranker_model_path to a local ONNX directory"

# (config, local_files_only) -> the reranker to try; tests replace fastembed's engine.
RerankerFactory = Callable[[Config, bool], Reranker]


def build_fastembed_reranker(config: Config, local_files_only: bool) -> Reranker:
    return FastEmbedReranker(
        config.memory.reranker_model,
        model_path=config.memory.reranker_model_path,
        cache_dir=config.embedding.cache_dir,
        local_files_only=local_files_only,
    )


def supported_models() -> set[str]:
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    return {description["model"] for description in TextCrossEncoder.list_supported_models()}


def resolved_cache_dir(cache_dir: Path | None) -> Path:
    """Where fastembed keeps models: the setting, else ``$FASTEMBED_CACHE_PATH`` or a temp dir."""
    from fastembed.common.utils import define_cache_dir

    return Path(define_cache_dir(str(cache_dir) if cache_dir else None))


@contextmanager
def quiet_fastembed() -> Iterator[None]:
    """fastembed logs a cache miss as an ERROR; for the doctor a miss is an expected answer."""
    from loguru import logger

    logger.disable("fastembed")
    try:
        yield
    finally:
        logger.enable("fastembed")


async def scores_a_pair(reranker: Reranker) -> str | None:
    """Load the model by scoring one pair; the reason it failed, or None if it worked."""
    try:
        with quiet_fastembed():
            await reranker.rank("what is my sister's name?", ["My sister is called Ana."])
    except RerankerError as error:
        return str(error)
    finally:
        await reranker.aclose()
    return None


class RerankerCheck:
    name = NAME

    def __init__(
        self,
        *,
        hub_url: str = MODEL_HUB,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        reranker_factory: RerankerFactory = build_fastembed_reranker,
    ) -> None:
        self._hub_url = hub_url
        self._timeout = timeout
        self._build = reranker_factory

    async def __call__(self, config: Config) -> CheckResult:
        model = config.memory.reranker_model
        if not model:
            return CheckResult.skipped(NAME, "memory.reranker_model is empty: no reranker")
        if model not in await asyncio.to_thread(supported_models):
            return CheckResult.failed(
                NAME,
                f"memory.reranker_model {model} is not a cross-encoder fastembed knows: "
                "choose one from fastembed's TextCrossEncoder list",
            )
        if config.memory.reranker_model_path is not None:
            return await self._check_local_directory(config, config.memory.reranker_model_path)
        cache_dir = await asyncio.to_thread(resolved_cache_dir, config.embedding.cache_dir)
        if await scores_a_pair(self._build(config, True)) is None:
            return CheckResult.passed(NAME, f"{model} loads from the cache in {cache_dir}")
        return await self._download(config, cache_dir)

    async def _check_local_directory(self, config: Config, directory: Path) -> CheckResult:
        problem = await scores_a_pair(self._build(config, True))
        if problem is None:
            return CheckResult.passed(
                NAME, f"{config.memory.reranker_model} loads from {directory}"
            )
        return CheckResult.warned(
            NAME, f"{problem}: fix memory.reranker_model_path; {FALLBACK_NOTE}"
        )

    async def _download(self, config: Config, cache_dir: Path) -> CheckResult:
        model = config.memory.reranker_model
        try:
            await get(self._hub_url, timeout_seconds=self._timeout)
        except Unreachable as error:
            return CheckResult.warned(
                NAME,
                f"{model} is not downloaded (cache: {cache_dir}) and the model hub "
                f"{self._hub_url} cannot be reached ({error}): run `mnemo doctor` once where "
                f"the hub is reachable, with the same cache directory, {OFFLINE_FIX}; "
                f"{FALLBACK_NOTE}",
            )
        problem = await scores_a_pair(self._build(config, False))
        if problem is not None:
            return CheckResult.warned(NAME, f"{problem}; {FALLBACK_NOTE}")
        return CheckResult.passed(NAME, f"{model} downloaded into {cache_dir} and loads")
