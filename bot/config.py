"""Settings: one TOML file plus ``MNEMO_<SECTION>__<KEY>`` environment overrides.

Validated once into frozen pydantic models. Parsing has no side effects: nothing is created
or connected here. Errors name the key path and what is expected, in one line each.
"""

from __future__ import annotations

import os
import re
import tomllib
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from sqlalchemy import URL, make_url

from memory.embedding.prompts import Prompts, default_prompts
from memory.llm import TokenBudgets
from memory.scope import ScopeMode
from memory.store.database import sqlite_url
from memory.write.candidates import CALIBRATED_CANDIDATE_THRESHOLD, calibrated_threshold

DEFAULT_CONFIG_PATH = Path("mnemo.toml")
ENVIRONMENT_PREFIX = "MNEMO_"


class ConfigError(Exception):
    """The configuration cannot be used; the message says which key and what is expected."""


class Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StorageSettings(Section):
    data_dir: Path = Field(Path("data"), description="where the database and index live")
    database_url: str | None = Field(
        None,
        description="a PostgreSQL database instead of SQLite in data_dir "
        "(postgresql+asyncpg://user:password@host/name), vectors in pgvector",
    )
    bot_applies_writes: bool = Field(
        True,
        description="false: the bot only queues what people say, and `mnemo worker` "
        "processes learn from it (PostgreSQL only)",
    )
    claim_lease_seconds: float = Field(
        900.0,
        gt=0,
        description="how long a queued write stays claimed by the process working on it; "
        "a dead process's claims are taken over after this (longer than any write takes)",
    )

    @field_validator("database_url")
    @classmethod
    def _postgres_only(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        scheme = value.partition("://")[0]
        if scheme in ("postgresql", "postgres", "postgresql+asyncpg"):
            return "postgresql+asyncpg://" + value.partition("://")[2]
        raise ValueError(
            "must be a PostgreSQL URL, postgresql+asyncpg://user:password@host:5432/name "
            "(leave it out for SQLite in data_dir)"
        )

    @model_validator(mode="after")
    def _workers_need_postgres(self) -> StorageSettings:
        if not self.bot_applies_writes and self.database_url is None:
            raise ValueError(
                "bot_applies_writes = false needs database_url (PostgreSQL): with SQLite "
                "one process owns the data folder and applies its writes itself"
            )
        return self

    @property
    def database_path(self) -> Path:
        return self.data_dir / "mnemo.sqlite3"

    @property
    def database(self) -> URL:
        """Where the facts live: the PostgreSQL URL if set, else SQLite in ``data_dir``."""
        if self.database_url is not None:
            return make_url(self.database_url)
        return sqlite_url(self.database_path)

    @property
    def index_path(self) -> Path:
        return self.data_dir / "index"


class EmbeddingSettings(Section):
    backend: Literal["fastembed", "ollama"] = "fastembed"
    model: str = "sentence-transformers/all-MiniLM-L6-v2"
    model_path: Path | None = Field(None, description="local ONNX directory (offline use)")
    dimension: int | None = Field(None, gt=0, description="needed for models fastembed lacks")
    pooling: Literal["mean", "cls"] = "mean"
    # One ONNX thread: extra threads spin for work and, beside a busy event loop, cost more
    # CPU per text and more wall time than they save (docs/benchmarks.md, "Load").
    threads: int = Field(1, ge=0, description="ONNX Runtime threads (0: one per core)")
    # Two calls of one thread each: a burst of reply texts is split across two cores, so the
    # texts of many people at once wait less (docs/benchmarks.md, "Load"); no spinning.
    parallel_calls: int = Field(2, ge=1, description="model calls at once for reply texts")
    cache_dir: Path | None = None
    ollama_url: str = "http://127.0.0.1:11434"
    # Unset: the model's own prompts if Mnemo knows it (EmbeddingGemma, e5), else none.
    query_prompt: str | None = Field(None, description="put before a message that seeks facts")
    document_prompt: str | None = Field(None, description="put before a fact as it is stored")
    similarity_prompt: str | None = Field(None, description="put before a compared sentence")

    def prompts(self) -> Prompts:
        known = default_prompts(self.model)
        return Prompts(
            query=known.query if self.query_prompt is None else self.query_prompt,
            document=known.document if self.document_prompt is None else self.document_prompt,
            similarity=known.similarity
            if self.similarity_prompt is None
            else self.similarity_prompt,
        )


class MemorySettings(Section):
    scope_mode: ScopeMode = ScopeMode.USER_ROOM
    # What `mnemo calibrate` recommends on the shipped pairs for all-MiniLM-L6-v2: the lowest
    # pair that must be a candidate, minus a margin for recall (docs/benchmarks.md,
    # "Calibration of the candidate threshold").
    candidate_threshold: float = Field(CALIBRATED_CANDIDATE_THRESHOLD, ge=-1.0, le=1.0)
    candidate_limit: int = Field(5, ge=1, le=50)
    recall_top_k: int = Field(6, ge=1, le=100)
    max_destructive_actions: int = Field(3, ge=0)
    decide_in_extraction: bool = Field(
        True, description="one model call extracts and decides when the message finds known facts"
    )
    lookup_pool: int = Field(50, ge=1, le=500, description="facts reranked by a lookup")
    lookup_min_similarity: float = Field(0.1, ge=-1.0, le=1.0)
    hybrid_retrieval: bool = Field(False, description="fuse full-text and vector ranks")
    reranker_model: str = Field(
        "Xenova/ms-marco-MiniLM-L-6-v2", description="fastembed cross-encoder; empty: none"
    )
    reranker_model_path: Path | None = Field(None, description="local ONNX directory")


DEFAULT_BUDGETS = TokenBudgets()


class LLMSettings(Section):
    provider: Literal["ollama", "openai"] = "ollama"
    base_url: str = "http://127.0.0.1:11434"
    model: str = "llama3.1:8b"
    api_key: str | None = Field(None, description="for OpenAI-compatible servers that need one")
    timeout_seconds: float = Field(120.0, gt=0)
    temperature: float = Field(0.3, ge=0.0, le=2.0)
    seed: int | None = Field(None, description="sampling seed, for reproducible measurements")
    background_calls: int = Field(
        1, ge=1, description="memory work's model calls at the server at once (its slots)"
    )
    # Token budgets per call kind (max_tokens / num_predict): an answer stops there instead
    # of running into the timeout. Flat keys, so MNEMO_LLM__MAX_TOKENS_REPLY works too.
    max_tokens_reply: int = Field(DEFAULT_BUDGETS.reply, ge=16)
    max_tokens_extraction: int = Field(DEFAULT_BUDGETS.extraction, ge=16)
    max_tokens_decision: int = Field(DEFAULT_BUDGETS.decision, ge=16)
    max_tokens_search_decision: int = Field(DEFAULT_BUDGETS.search_decision, ge=16)
    max_tokens_judge: int = Field(DEFAULT_BUDGETS.judge, ge=16)

    def budgets(self) -> TokenBudgets:
        return TokenBudgets(
            reply=self.max_tokens_reply,
            extraction=self.max_tokens_extraction,
            decision=self.max_tokens_decision,
            search_decision=self.max_tokens_search_decision,
            judge=self.max_tokens_judge,
        )


StreamingPlatform = Literal["console", "discord", "matrix"]
STREAMING_PLATFORMS: tuple[StreamingPlatform, ...] = ("console", "discord", "matrix")


class ChatSettings(Section):
    bot_name: str = "Mnemo"
    command_prefix: str = Field("!", min_length=1, max_length=3)
    max_message_chars: int = Field(4000, ge=100)
    rate_limit_per_minute: int = Field(20, ge=1)
    history_turns: int = Field(12, ge=0, le=200)
    edit_window_hours: float = Field(
        24.0, ge=0, description="an edit of an older message is not taken as a correction"
    )
    catch_up_hours: float = Field(
        24.0, ge=0, description="after a restart, learn from messages this recent (0: none)"
    )
    catch_up_messages: int = Field(
        50, ge=0, le=1000, description="after a restart, learn from at most this many per room"
    )
    stream_replies: tuple[StreamingPlatform, ...] = Field(
        STREAMING_PLATFORMS,
        description="the platforms where answers show as the model writes them (true: all, "
        "false: none); elsewhere an answer comes whole when it is written",
    )

    @field_validator("stream_replies", mode="before")
    @classmethod
    def _all_or_none(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = split_list_value(value)
        # MNEMO_CHAT__STREAM_REPLIES=false arrives as a list of one word.
        if isinstance(value, tuple | list) and len(value) == 1:
            word = str(value[0]).strip().lower()
            value = {"true": True, "false": False}.get(word, value)
        if isinstance(value, bool):
            return STREAMING_PLATFORMS if value else ()
        return value

    def streams_on(self, platform: StreamingPlatform) -> bool:
        return platform in self.stream_replies


class SearchSettings(Section):
    """Web search through a self-hosted SearXNG; empty ``searxng_url`` turns it off."""

    searxng_url: str | None = None
    timeout_seconds: float = Field(10.0, gt=0)
    max_results: int = Field(5, ge=1, le=20)
    language: str | None = None
    safe_search: Literal[0, 1, 2] = 1


MATRIX_USER_ID = re.compile(r"^@[^:\s]+:\S+$")


class MatrixSettings(Section):
    homeserver: str | None = None
    user_id: str | None = None
    password: str | None = None
    access_token: str | None = None
    device_id: str | None = None
    store_path: Path | None = None
    allowed_users: tuple[str, ...] = ()

    def login_problem(self) -> str | None:
        """What is wrong with the account and credentials, in one line; ``None`` if usable.

        Checked only when Matrix is used (by the adapter and by ``mnemo doctor``), so that a
        half-filled ``[matrix]`` section does not stop the console or Discord.
        """
        if not self.user_id or not MATRIX_USER_ID.match(self.user_id):
            return (
                "matrix.user_id must be the bot account, like @mnemo:example.org "
                f"(got {self.user_id!r})"
            )
        if self.password and self.access_token:
            return (
                "both matrix.password and matrix.access_token are set: keep one "
                "(the token, with matrix.device_id, keeps the same device across restarts)"
            )
        if not self.password and not self.access_token:
            return (
                "no credentials: set MNEMO_MATRIX__ACCESS_TOKEN (with matrix.device_id) or "
                "MNEMO_MATRIX__PASSWORD in .env"
            )
        if self.password and self.device_id:
            return (
                "matrix.device_id goes with matrix.access_token: with a password the device is "
                "chosen at the first login and kept in the Matrix store; remove matrix.device_id"
            )
        return None


class DiscordSettings(Section):
    token: str | None = None
    allowed_users: tuple[str, ...] = ()
    allowed_roles: tuple[str, ...] = ()
    allowed_channels: tuple[str, ...] = ()


class SchedulerSettings(Section):
    consolidation_interval_minutes: int = Field(60, ge=1)
    reconcile_interval_minutes: int = Field(360, ge=1)
    pending_retry_interval_seconds: int = Field(60, ge=5)
    purge_interval_minutes: int = Field(1440, ge=1)
    # Compaction of the index and free pages of the database given back to the disk.
    storage_interval_minutes: int = Field(360, ge=1)
    conversation_retention_days: int = Field(30, ge=1)
    deleted_fact_retention_days: int = Field(90, ge=1)
    # The database copies a schema upgrade makes; a forget deletes them all at once.
    upgrade_backup_retention_days: int = Field(30, ge=1)


class LoggingSettings(Section):
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    status_file: Path | None = Field(
        None,
        description="rewritten every few seconds by a running bot or worker with its connection "
        "and queue state, for health checks (`mnemo-healthcheck`; the Docker image sets one)",
    )

    @field_validator("level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value


class Config(Section):
    storage: StorageSettings = StorageSettings()
    embedding: EmbeddingSettings = EmbeddingSettings()
    memory: MemorySettings = MemorySettings()
    llm: LLMSettings = LLMSettings()
    chat: ChatSettings = ChatSettings()
    search: SearchSettings = SearchSettings()
    matrix: MatrixSettings = MatrixSettings()
    discord: DiscordSettings = DiscordSettings()
    scheduler: SchedulerSettings = SchedulerSettings()
    logging: LoggingSettings = LoggingSettings()

    @model_validator(mode="before")
    @classmethod
    def _threshold_of_the_model(cls, data: Any) -> Any:
        """Unset, memory.candidate_threshold is the one calibrate measured for the
        configured embedding model (all-MiniLM-L6-v2's for a model it has not measured)."""
        if not isinstance(data, dict):
            return data
        memory, embedding = data.get("memory", {}), data.get("embedding", {})
        if not isinstance(memory, dict) or "candidate_threshold" in memory:
            return data
        model = embedding.get("model") if isinstance(embedding, dict) else None
        known = calibrated_threshold(model) if isinstance(model, str) else None
        if known is None:
            return data
        return {**data, "memory": {**memory, "candidate_threshold": known}}


def describe_errors(error: ValidationError) -> str:
    """One line per problem: ``key.path: what is wrong (got ...)``."""
    lines = []
    for problem in error.errors():
        key = ".".join(str(part) for part in problem["loc"])
        if problem["type"] == "extra_forbidden":
            lines.append(f"{key}: unknown setting (check the spelling against mnemo.example.toml)")
            continue
        got = problem.get("input")
        suffix = "" if isinstance(got, dict) else f" (got {got!r})"
        lines.append(f"{key}: {problem['msg']}{suffix}")
    return "\n".join(lines)


def _is_list_setting(section: str, key: str) -> bool:
    """Whether ``section.key`` holds a tuple (such as ``matrix.allowed_users``)."""
    section_field = Config.model_fields.get(section)
    section_model = section_field.annotation if section_field else None
    if not (isinstance(section_model, type) and issubclass(section_model, BaseModel)):
        return False
    field = section_model.model_fields.get(key)
    if field is None:
        return False
    origin = get_origin(field.annotation)
    if origin in (Union, types.UnionType):  # ``tuple[str, ...] | None``
        return any(get_origin(option) is tuple for option in get_args(field.annotation))
    return origin is tuple


def split_list_value(value: str) -> tuple[str, ...]:
    """``"@a:x, @b:y"`` -> ``("@a:x", "@b:y")``; an empty string is an empty list."""
    return tuple(part.strip() for part in value.split(",") if part.strip())


def environment_overrides(environ: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """``MNEMO_LLM__MODEL=x`` becomes ``{"llm": {"model": "x"}}``.

    An environment variable can only hold a string, so list settings take comma-separated
    values: ``MNEMO_MATRIX__ALLOWED_USERS=@alice:example.org,@bob:example.org``.
    """
    overrides: dict[str, dict[str, Any]] = {}
    for name, value in environ.items():
        if not name.startswith(ENVIRONMENT_PREFIX) or "__" not in name:
            continue
        section, _, key = name[len(ENVIRONMENT_PREFIX) :].lower().partition("__")
        parsed = split_list_value(value) if _is_list_setting(section, key) else value
        overrides.setdefault(section, {})[key] = parsed
    return overrides


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as file:
            return tomllib.load(file)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from error
    except OSError as error:
        raise ConfigError(f"{path}: cannot be read: {error.strerror}") from error


def _merge(base: dict[str, Any], overrides: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    merged = {key: dict(value) if isinstance(value, dict) else value for key, value in base.items()}
    for section, values in overrides.items():
        existing = merged.get(section)
        merged[section] = {**(existing if isinstance(existing, dict) else {}), **values}
    return merged


def _resolve_paths(raw: dict[str, Any], base_directory: Path) -> dict[str, Any]:
    """Relative paths in the file are relative to the file, not to the working directory."""
    for section, key in (
        ("storage", "data_dir"),
        ("embedding", "model_path"),
        ("embedding", "cache_dir"),
        ("memory", "reranker_model_path"),
        ("matrix", "store_path"),
    ):
        values = raw.get(section)
        if isinstance(values, dict) and isinstance(values.get(key), str) and values[key]:
            path = Path(values[key]).expanduser()
            values[key] = str(path if path.is_absolute() else base_directory / path)
    return raw


def load_config(path: Path | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """Read the config file (optional unless named) and apply environment overrides.

    ``path`` None means ``$MNEMO_CONFIG`` or ``./mnemo.toml``, and the built-in defaults
    if that file does not exist. A file named explicitly must exist.
    """
    environ = os.environ if environ is None else environ
    explicit = path is not None or "MNEMO_CONFIG" in environ
    config_path = path or Path(environ.get("MNEMO_CONFIG", str(DEFAULT_CONFIG_PATH)))
    raw: dict[str, Any] = {}
    if config_path.exists():
        raw = _resolve_paths(_read_toml(config_path), config_path.resolve().parent)
    elif explicit:
        raise ConfigError(
            f"config file {config_path} not found: copy mnemo.example.toml to {config_path}"
        )
    raw = _merge(raw, environment_overrides(environ))
    try:
        return Config.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(describe_errors(error)) from None
