"""Doctor checks of the language model server and, for ``backend = "ollama"``, the embedding
model on Ollama: the server answers, and the configured model is there. A server that
answers, but speaks the other provider's API, is named as such with the setting that fits."""

from __future__ import annotations

from bot.config import Config
from bot.doctor.base import CheckResult
from bot.doctor.http import DEFAULT_TIMEOUT_SECONDS, Answer, Unreachable, get, join

PULL_IN_COMPOSE = "docker compose run --rm pull-models"


OPENAI_MODEL_PATHS = ("/v1/models", "/models")


def api_root(base_url: str) -> str:
    """``http://host:port/v1`` -> ``http://host:port``: where Ollama's own API lives."""
    trimmed = base_url.rstrip("/")
    return trimmed[: -len("/v1")] if trimmed.endswith("/v1") else trimmed


async def openai_root(base_url: str, timeout_seconds: float) -> str | None:
    """The OpenAI-compatible API root a server at ``base_url`` offers, if it offers one."""
    root = api_root(base_url)
    for path in OPENAI_MODEL_PATHS:
        try:
            answer = await get(join(root, path), timeout_seconds=timeout_seconds)
        except Unreachable:
            return None
        if answer.status_code == 200 and isinstance(answer.field("data"), list):
            return root + path.removesuffix("/models")
    return None


async def is_ollama(base_url: str, timeout_seconds: float) -> bool:
    try:
        tags = await get(join(api_root(base_url), "/api/tags"), timeout_seconds=timeout_seconds)
    except Unreachable:
        return False
    return tags.status_code == 200 and isinstance(tags.field("models"), list)


class OllamaProblem(Exception):
    """Ollama could not list its models; the message is the line to show, fix included."""


def ollama_tag(model: str) -> str:
    """Ollama names a model without a tag ``<name>:latest``."""
    return model if ":" in model.rsplit("/", 1)[-1] else f"{model}:latest"


async def ollama_models(
    base_url: str, setting: str, timeout_seconds: float
) -> tuple[str, set[str]]:
    """The server's version and the names of its pulled models.

    ``setting`` is the config key holding ``base_url``, so that the fix names it.
    """
    try:
        tags = await get(join(base_url, "/api/tags"), timeout_seconds=timeout_seconds)
    except Unreachable as error:
        raise OllamaProblem(
            f"cannot reach Ollama at {base_url} ({error}): start it (`ollama serve`, or "
            f"`docker compose up -d ollama`) or fix {setting}"
        ) from error
    if tags.status_code != 200 or not isinstance(tags.field("models"), list):
        raise OllamaProblem(
            f"{base_url} answered HTTP {tags.status_code} to /api/tags, not like Ollama: "
            f"is {setting} the Ollama server's URL?"
        )
    names = {_model_name(entry) for entry in tags.field("models")}
    return await _version(base_url, timeout_seconds), names - {""}


def _model_name(entry: object) -> str:
    if not isinstance(entry, dict):
        return ""
    name = entry.get("name") or entry.get("model") or ""
    return str(name)


async def _version(base_url: str, timeout_seconds: float) -> str:
    try:
        answer = await get(join(base_url, "/api/version"), timeout_seconds=timeout_seconds)
    except Unreachable:
        return "Ollama"
    version = answer.field("version")
    return f"Ollama {version}" if isinstance(version, str) else "Ollama"


def _missing_model_line(model: str, setting: str, pulled: set[str]) -> str:
    have = ", ".join(sorted(pulled)) or "none"
    return (
        f"{setting} {model} is not pulled (pulled: {have}): run `ollama pull {model}` "
        f"(with compose: `{PULL_IN_COMPOSE}`)"
    )


class LanguageModelCheck:
    """The configured LLM: Ollama's ``/api/tags``, or an OpenAI-compatible ``/models``."""

    name = "language model"

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        self._timeout = timeout

    async def __call__(self, config: Config) -> CheckResult:
        if config.llm.provider == "openai":
            return await self._check_openai(config)
        return await self._check_ollama(config)

    async def _check_ollama(self, config: Config) -> CheckResult:
        base_url, model = config.llm.base_url, config.llm.model
        try:
            version, pulled = await ollama_models(base_url, "llm.base_url", self._timeout)
        except OllamaProblem as problem:
            openai = await openai_root(base_url, self._timeout)
            if openai is not None:
                return CheckResult.failed(
                    self.name,
                    f"{base_url} is an OpenAI-compatible server, not Ollama: set "
                    f'llm.provider = "openai" and llm.base_url = "{openai}"',
                )
            return CheckResult.failed(self.name, str(problem))
        if ollama_tag(model) not in pulled:
            return CheckResult.failed(self.name, _missing_model_line(model, "llm.model", pulled))
        return CheckResult.passed(self.name, f"{model} pulled on {version} at {base_url}")

    async def _check_openai(self, config: Config) -> CheckResult:
        base_url, model = config.llm.base_url, config.llm.model
        headers = {"Authorization": f"Bearer {config.llm.api_key}"} if config.llm.api_key else {}
        try:
            answer = await get(
                join(base_url, "/models"), headers=headers, timeout_seconds=self._timeout
            )
        except Unreachable as error:
            return CheckResult.failed(
                self.name,
                f"cannot reach {base_url} ({error}): start the server or fix llm.base_url",
            )
        return await self._openai_result(answer, base_url, model)

    async def _openai_result(self, answer: Answer, base_url: str, model: str) -> CheckResult:
        if answer.status_code in (401, 403):
            return CheckResult.failed(
                self.name,
                f"{base_url} refused the API key (HTTP {answer.status_code}): "
                "set MNEMO_LLM__API_KEY",
            )
        served = answer.field("data")
        if answer.status_code != 200 or not isinstance(served, list):
            if await is_ollama(base_url, self._timeout):
                root = api_root(base_url)
                return CheckResult.failed(
                    self.name,
                    f"{base_url} is Ollama, and its OpenAI-compatible API is at {root}/v1: set "
                    f'llm.base_url = "{root}/v1", or llm.provider = "ollama" and '
                    f'llm.base_url = "{root}"',
                )
            return CheckResult.failed(
                self.name,
                f"{base_url} answered HTTP {answer.status_code} to /models, not like an "
                "OpenAI-compatible server: llm.base_url usually ends in /v1",
            )
        names = {str(entry.get("id")) for entry in served if isinstance(entry, dict)}
        if model not in names:
            return CheckResult.failed(
                self.name,
                f"llm.model {model} is not served by {base_url} (served: "
                f"{', '.join(sorted(names)) or 'none'}): set llm.model to one of them",
            )
        return CheckResult.passed(self.name, f"{model} served at {base_url}")


class OllamaEmbeddingModelCheck:
    """With ``embedding.backend = "ollama"``: the embedding model is pulled."""

    name = "ollama embedding model"

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        self._timeout = timeout

    async def __call__(self, config: Config) -> CheckResult:
        if config.embedding.backend != "ollama":
            return CheckResult.skipped(
                self.name, f"embedding.backend is {config.embedding.backend}, not ollama"
            )
        base_url, model = config.embedding.ollama_url, config.embedding.model
        try:
            version, pulled = await ollama_models(base_url, "embedding.ollama_url", self._timeout)
        except OllamaProblem as problem:
            return CheckResult.failed(self.name, str(problem))
        if ollama_tag(model) not in pulled:
            line = _missing_model_line(model, "embedding.model", pulled)
            return CheckResult.failed(self.name, line)
        return CheckResult.passed(self.name, f"{model} pulled on {version} at {base_url}")
