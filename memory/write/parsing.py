"""Asking a language model for JSON, and reading its answer into a pydantic model or saying
why it cannot be."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from memory.llm import AnswerCut, CallKind, ChatMessage, LanguageModel
from memory.write.errors import UnusableModelOutput

ModelT = TypeVar("ModelT", bound=BaseModel)


async def ask(
    llm: LanguageModel,
    kind: CallKind,
    messages: Sequence[ChatMessage],
    json_schema: Mapping[str, object],
) -> str:
    """The model's answer text; a cut answer is an unusable one (never an outage)."""
    try:
        return await llm.complete(messages, kind=kind, json_schema=json_schema, temperature=0)
    except AnswerCut as error:
        raise UnusableModelOutput(kind.value, str(error), error.text) from error


def parse_answer(stage: str, raw: str, model: type[ModelT]) -> ModelT:
    try:
        return model.model_validate_json(strip_code_fence(raw))
    except ValidationError as error:
        raise UnusableModelOutput(stage, first_error(error, "answer"), raw) from error


def first_error(error: ValidationError, whole: str) -> str:
    """Where pydantic found the first thing wrong (``whole`` for the top level), and what."""
    first = error.errors()[0]
    return f"{'.'.join(str(part) for part in first['loc']) or whole}: {first['msg']}"


def strip_code_fence(raw: str) -> str:
    """Some models wrap JSON in a Markdown fence even when a schema is given."""
    text = raw.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text
