"""Doctor check of SearXNG: it answers a search with JSON, the way the bot calls it."""

from __future__ import annotations

from bot.config import Config
from bot.doctor.base import CheckResult
from bot.doctor.http import DEFAULT_TIMEOUT_SECONDS, Answer, Unreachable, get, join

NAME = "web search"
# A query that every general engine answers, so zero results means the engines failed.
PROBE_QUERY = "weather"

JSON_DISABLED_FIX = (
    "add json to search.formats in SearXNG's settings.yml (search: formats: [html, json]) "
    "and restart SearXNG"
)
LIMITER_FIX = (
    "turn SearXNG's limiter off for the private network (server: limiter: false in "
    "settings.yml) and restart SearXNG"
)


class SearxngCheck:
    name = NAME

    def __init__(
        self, *, probe_query: str = PROBE_QUERY, timeout: float = DEFAULT_TIMEOUT_SECONDS
    ) -> None:
        self._probe_query = probe_query
        self._timeout = timeout

    async def __call__(self, config: Config) -> CheckResult:
        base_url = config.search.searxng_url
        if not base_url:
            return CheckResult.skipped(NAME, "search.searxng_url is not set: web search is off")
        # Engines can take a few seconds; give the search the configured time, not less.
        timeout = max(self._timeout, config.search.timeout_seconds)
        params = {"q": self._probe_query, "format": "json"}
        try:
            answer = await get(join(base_url, "/search"), params=params, timeout_seconds=timeout)
        except Unreachable as error:
            return CheckResult.failed(
                NAME,
                f"cannot reach SearXNG at {base_url} ({error}): start it "
                "(`docker compose up -d searxng`) or fix search.searxng_url",
            )
        return judge(answer, base_url)


def judge(answer: Answer, base_url: str) -> CheckResult:
    """Turn SearXNG's answer to a JSON search into one doctor line."""
    if answer.status_code == 403:
        return CheckResult.failed(
            NAME, f"{base_url} refuses format=json (HTTP 403): {JSON_DISABLED_FIX}"
        )
    if answer.status_code == 429:
        return CheckResult.failed(NAME, f"{base_url} rate-limits the bot (HTTP 429): {LIMITER_FIX}")
    if answer.status_code != 200:
        return CheckResult.failed(
            NAME, f"{base_url} answered HTTP {answer.status_code} to a search: see SearXNG's log"
        )
    results = answer.field("results")
    if not answer.is_json or not isinstance(results, list):
        return CheckResult.failed(
            NAME,
            f"{base_url} answered, but not with SearXNG's JSON: is search.searxng_url the "
            "SearXNG base URL (without /search)?",
        )
    return _judge_results(results, answer.field("unresponsive_engines"), base_url)


def _judge_results(results: list[object], unresponsive: object, base_url: str) -> CheckResult:
    failed_engines = _engine_names(unresponsive)
    if not results and failed_engines:
        return CheckResult.failed(
            NAME,
            f"{base_url} answers JSON, but its engines failed ({', '.join(failed_engines)}): "
            "check that the SearXNG host can reach the internet",
        )
    return CheckResult.passed(
        NAME, f"{base_url} answers JSON ({len(results)} results for a test query)"
    )


def _engine_names(unresponsive: object) -> list[str]:
    """SearXNG lists them as ``[[engine, reason], ...]``."""
    if not isinstance(unresponsive, list):
        return []
    names = []
    for entry in unresponsive:
        if isinstance(entry, list) and entry:
            reason = f" ({entry[1]})" if len(entry) > 1 else ""
            names.append(f"{entry[0]}{reason}")
    return names
