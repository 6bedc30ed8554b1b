"""Doctor check of the configuration as a whole: what is switched on.

The file itself was validated before the doctor ran (a bad value stops the command with one
line per mistake), so this line only summarises what the other checks will look at.
"""

from __future__ import annotations

from bot.config import Config
from bot.doctor.base import CheckResult

NAME = "config"


def configured_platforms(config: Config) -> list[str]:
    platforms = []
    if config.matrix.homeserver:
        platforms.append("matrix")
    if config.discord.token:
        platforms.append("discord")
    return platforms


async def check_config(config: Config) -> CheckResult:
    platforms = ", ".join(configured_platforms(config)) or (
        "none (set matrix.homeserver or MNEMO_DISCORD__TOKEN; `mnemo chat` works without)"
    )
    search = "on" if config.search.searxng_url else "off"
    return CheckResult.passed(
        NAME,
        f"data in {config.storage.data_dir}; {config.llm.provider} model {config.llm.model}; "
        f"web search {search}; chat platforms: {platforms}",
    )
