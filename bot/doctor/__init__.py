"""``mnemo doctor``: one line per check, green or red, with the fix for what is wrong.

Checks of services that are not configured are skipped, not failed. Each check is a callable
``(Config) -> CheckResult``; the ones that talk to servers take their URLs and timeouts in the
constructor, so tests can point them at servers on 127.0.0.1.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from bot.config import Config
from bot.doctor.base import Check, CheckResult, CheckStatus
from bot.doctor.configuration import check_config
from bot.doctor.discord import DISCORD_API, DiscordCheck
from bot.doctor.llm import LanguageModelCheck, OllamaEmbeddingModelCheck
from bot.doctor.matrix import MatrixCheck
from bot.doctor.reranker import MODEL_HUB, RerankerCheck
from bot.doctor.searxng import SearxngCheck
from bot.doctor.storage import (
    check_data_folder,
    check_database,
    check_embedding,
    check_index,
    check_memory_language,
    check_storage_space,
)

log = logging.getLogger(__name__)

__all__ = [
    "Check",
    "CheckResult",
    "CheckStatus",
    "default_checks",
    "run_checks",
]


def default_checks(*, discord_api: str = DISCORD_API, model_hub: str = MODEL_HUB) -> list[Check]:
    """Every check, in the order a person fixes things: config, local parts, then services."""
    return [
        check_config,
        check_data_folder,
        check_database,
        check_embedding,
        check_index,
        check_memory_language,
        check_storage_space,
        RerankerCheck(hub_url=model_hub),
        LanguageModelCheck(),
        OllamaEmbeddingModelCheck(),
        SearxngCheck(),
        MatrixCheck(),
        DiscordCheck(api_base_url=discord_api),
    ]


async def run_checks(config: Config, checks: Sequence[Check] | None = None) -> list[CheckResult]:
    """Run the checks one after another (they share the disk and the CPU with the bot)."""
    return [await run_check(check, config) for check in (checks or default_checks())]


async def run_check(check: Check, config: Config) -> CheckResult:
    """One check; a check that breaks becomes a red line, so the others still run."""
    try:
        return await check(config)
    except Exception as error:  # the doctor must report, whatever a check runs into
        name = getattr(check, "name", None) or getattr(check, "__name__", type(check).__name__)
        log.exception("doctor check %s failed unexpectedly", name)
        return CheckResult.failed(
            str(name), f"the check itself failed ({type(error).__name__}: {error}); see the log"
        )
