"""The LLM the fault suite's bot processes talk to: an Ollama-shaped server on 127.0.0.1.

It answers each kind of call the way a real model would, told apart by the JSON schema the
request carries (``format``), not by prompt wording:

- extraction (a schema with ``facts``): every first-person statement of the message ("I ..." or
  "My ...", ending with a full stop) as one fact, nothing for questions;
- decision (``decisions``): ADD for every new fact shown (they are new information);
- combined (``facts`` whose items carry an ``action``: extract and decide at once): the
  statements of the message below the known facts, as extraction does, each with ADD and no
  target, as the decision does;
- reply (no schema): "Noted.".

A test changes how it behaves while the bot runs: ``hang`` (a kind of call waits until the
test releases it: a hung model), ``fail`` (HTTP 500), ``slow``; ``arrivals`` wait for a call of
a kind to come in (to kill the bot exactly then). Every request is recorded, with its kind.
"""

from __future__ import annotations

import asyncio
import enum
import json
import re
import threading
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

from memory.write.prompts.combined import message_of
from tests.servers.ollama_server import Failure, Held, OllamaServer, Reply, Slow, prompt_of

MODEL = "llama3.1:8b"
REPLY_TEXT = "Noted."
STATEMENT = re.compile(r"(?:^|(?<=[.!?]\s))((?:I|My)\b[^.!?\n]*)\.")
NEW_FACT = re.compile(r"^New fact (\d+):", re.MULTILINE)


class CallKind(enum.Enum):
    REPLY = "reply"
    EXTRACTION = "extraction"
    DECISION = "decision"
    COMBINED = "combined"
    OTHER = "other"


def kind_of(body: dict[str, Any]) -> CallKind:
    schema = body.get("format")
    if not isinstance(schema, dict):
        return CallKind.REPLY
    properties = schema.get("properties", {})
    if "facts" in properties:
        return CallKind.COMBINED if "action" in fact_fields(schema) else CallKind.EXTRACTION
    if "decisions" in properties:
        return CallKind.DECISION
    return CallKind.OTHER


def last_user_text(body: dict[str, Any]) -> str:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return str(users[-1].get("content", "")) if users else ""


def fact_fields(schema: dict[str, Any]) -> list[str]:
    """The fields of one extracted fact, read from the request's own schema."""
    items = schema["properties"]["facts"]["items"]
    if "$ref" in items:
        items = schema["$defs"][items["$ref"].rsplit("/", 1)[-1]]
    return list(items.get("properties", {}))


def extraction_answer(body: dict[str, Any], suffix: str = "") -> str:
    """Each statement verbatim as the text, category "other", action ADD (asked only by the
    combined call), every other field empty."""
    answers = {"category": "other", "action": "ADD"}

    def value(field: str, statement: str) -> str | None:
        if field == "text":
            return statement.strip() + suffix
        return answers.get(field)

    fields = fact_fields(body["format"])
    # The combined call lists the known facts before the message: they are not said now.
    statements = STATEMENT.findall(message_of(last_user_text(body)))
    facts = [{field: value(field, statement) for field in fields} for statement in statements]
    # Characters as a model writes them (not as \\u escapes); the HTTP answer escapes them.
    return json.dumps({"facts": facts}, ensure_ascii=False)


def decision_answer(body: dict[str, Any]) -> str:
    numbers = [int(number) for number in NEW_FACT.findall(last_user_text(body))] or [1]
    return json.dumps(
        {"decisions": [{"fact": n, "action": "ADD", "target": None} for n in numbers]}
    )


def normal_answer(kind: CallKind, body: dict[str, Any], suffix: str = "") -> Reply:
    """``suffix`` goes at the end of every text the model writes (JSON-escaped in JSON)."""
    if kind in (CallKind.EXTRACTION, CallKind.COMBINED):
        return extraction_answer(body, suffix)
    if kind is CallKind.DECISION:
        return decision_answer(body)
    if kind is CallKind.REPLY:
        return REPLY_TEXT + suffix
    return Failure(500, "the stand-in has no answer for this kind of call")


@dataclass
class Recorded:
    kind: CallKind
    body: dict[str, Any]

    @property
    def prompt(self) -> str:
        return prompt_of(self.body)


@dataclass
class LLMStandIn:
    """A model that answers like a real one, and that a test can hang, fail or slow."""

    model: str = MODEL
    # Appended to every text the model writes: "\ud800" makes it answer with a broken
    # surrogate escape, as a model cut inside an emoji does.
    suffix: str = ""
    recorded: list[Recorded] = field(default_factory=list)
    _hung: dict[CallKind, threading.Event] = field(default_factory=dict)
    _failing: set[CallKind] = field(default_factory=set)
    _slow: dict[CallKind, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _arrived: threading.Condition = field(default_factory=threading.Condition)

    def __post_init__(self) -> None:
        self._server = OllamaServer(models=(self.model,), responder=self._respond)

    @property
    def base_url(self) -> str:
        return self._server.base_url

    def start(self) -> Self:
        self._server.start()
        return self

    def stop(self) -> None:
        self.release_all()
        self._server.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    # -- behaviour, changed while the bot runs ---------------------------------------------

    def hang(self, *kinds: CallKind) -> None:
        """Calls of these kinds wait (as a hung model) until :meth:`release_all`."""
        with self._lock:
            for kind in kinds:
                self._hung.setdefault(kind, threading.Event())

    def fail(self, *kinds: CallKind) -> None:
        with self._lock:
            self._failing.update(kinds)

    def slow(self, kind: CallKind, seconds: float) -> None:
        with self._lock:
            self._slow[kind] = seconds

    def behave_normally(self) -> None:
        """Stop failing and slowing; calls held so far are let go."""
        with self._lock:
            self._failing.clear()
            self._slow.clear()
        self.release_all()

    def release_all(self) -> None:
        with self._lock:
            gates = list(self._hung.values())
            self._hung.clear()
        for gate in gates:
            gate.set()

    # -- what came in ----------------------------------------------------------------------

    def mark(self) -> int:
        """A point in the record; ``since(mark)`` is what came in after it."""
        with self._arrived:
            return len(self.recorded)

    def since(self, mark: int, kind: CallKind | None = None) -> list[Recorded]:
        with self._arrived:
            return [r for r in self.recorded[mark:] if kind is None or r.kind is kind]

    async def arrival(self, kind: CallKind, *, after: int, within: float = 60.0) -> Recorded:
        """The first call of ``kind`` recorded after mark ``after``, waiting for it."""

        def wait() -> Recorded | None:
            with self._arrived:
                found = self._arrived.wait_for(lambda: self.since(after, kind), within)
                return found[0] if found else None

        recorded = await asyncio.to_thread(wait)
        if recorded is None:
            raise AssertionError(f"no {kind.value} call reached the model in {within} s")
        return recorded

    def _respond(self, body: dict[str, Any]) -> Reply:
        kind = kind_of(body)
        with self._lock:
            gate = self._hung.get(kind)
            failing = kind in self._failing
            delay = self._slow.get(kind)
        with self._arrived:
            self.recorded.append(Recorded(kind, body))
            self._arrived.notify_all()
        answer = normal_answer(kind, body, self.suffix)
        if failing:
            return Failure(500, "the model failed (the stand-in was told to)")
        if not isinstance(answer, str):
            return answer
        if gate is not None:
            return Held(gate, answer)
        if delay is not None:
            return Slow(delay, answer)
        return answer
