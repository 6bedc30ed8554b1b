"""Doctor check of the cross-encoder reranker used by explicit lookups.

The bot loads it lazily and falls back to cosine order when it cannot, so a broken reranker
costs answer quality, not uptime: the doctor warns (yellow) rather than fails. Loading is
tried from the local cache first; a download is attempted only when the model hub answers at
all, because fastembed retries a failed download for about 40 seconds.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.config import Config
from bot.doctor.base import CheckResult
from bot.doctor.http import DEFAULT_TIMEOUT_SECONDS, Unreachable, get

NAME = "reranker"
# fastembed's default cross-encoder (Apache-2.0), until the read path makes it configurable.
DEFAULT_RERANKER_MODEL = "Xenova/ms-marco-MiniLM-L-6-v2"
MODEL_HUB = "https://huggingface.co"
FALLBACK_NOTE = "until then explicit lookups use cosine order"


class CrossEncoderLoadError(Exception):
    """fastembed could not load the model; the message is fastembed's."""


def supported_models() -> set[str]:
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    return {description["model"] for description in TextCrossEncoder.list_supported_models()}


def resolved_cache_dir(cache_dir: Path | None) -> Path:
    """Where fastembed keeps models: the setting, else ``$FASTEMBED_CACHE_PATH`` or a temp dir."""
    from fastembed.common.utils import define_cache_dir

    return Path(define_cache_dir(str(cache_dir) if cache_dir else None))


def load_cross_encoder(model: str, cache_dir: Path, *, local_files_only: bool) -> None:
    """Load (and with ``local_files_only=False`` maybe download) the model, or raise."""
    from fastembed.rerank.cross_encoder import TextCrossEncoder
    from loguru import logger

    # fastembed logs a cache miss as an ERROR; here a miss is an expected answer.
    logger.disable("fastembed")
    try:
        TextCrossEncoder(model, cache_dir=str(cache_dir), local_files_only=local_files_only)
    except Exception as error:  # fastembed raises ValueError, OSError, onnxruntime errors
        raise CrossEncoderLoadError(str(error)) from error
    finally:
        logger.enable("fastembed")


class RerankerCheck:
    def __init__(
        self,
        *,
        model: str = DEFAULT_RERANKER_MODEL,
        hub_url: str = MODEL_HUB,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> None:
        self._model = model
        self._hub_url = hub_url
        self._timeout = timeout

    async def __call__(self, config: Config) -> CheckResult:
        model = self._model
        if model not in await asyncio.to_thread(supported_models):
            return CheckResult.failed(
                NAME, f"{model} is not a cross-encoder fastembed knows: choose one it lists"
            )
        cache_dir = await asyncio.to_thread(resolved_cache_dir, config.embedding.cache_dir)
        try:
            await asyncio.to_thread(load_cross_encoder, model, cache_dir, local_files_only=True)
            return CheckResult.passed(NAME, f"{model} loads from the cache in {cache_dir}")
        except CrossEncoderLoadError:
            pass  # not downloaded yet
        return await self._download(model, cache_dir)

    async def _download(self, model: str, cache_dir: Path) -> CheckResult:
        try:
            await get(self._hub_url, timeout_seconds=self._timeout)
        except Unreachable as error:
            return CheckResult.warned(
                NAME,
                f"{model} is not downloaded (cache: {cache_dir}) and the model hub "
                f"{self._hub_url} cannot be reached ({error}): run `mnemo doctor` once where "
                f"the hub is reachable, with the same cache directory; {FALLBACK_NOTE}",
            )
        try:
            await asyncio.to_thread(load_cross_encoder, model, cache_dir, local_files_only=False)
        except CrossEncoderLoadError as error:
            return CheckResult.warned(
                NAME, f"{model} could not be downloaded into {cache_dir} ({error}); {FALLBACK_NOTE}"
            )
        return CheckResult.passed(NAME, f"{model} downloaded into {cache_dir} and loads")
