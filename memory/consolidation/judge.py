"""Asking the language model about one batch of pairs, and reading its answer strictly."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError

from memory.consolidation.judge_prompt import JudgeResponse, build_judge_messages
from memory.consolidation.pairs import CandidatePair
from memory.errors import MemoryLayerError
from memory.llm.base import AnswerCut, CallKind, LanguageModel


class JudgeReplyInvalid(MemoryLayerError):
    """The model's answer does not match the judge schema; nothing of it is applied."""


async def judge_batch(model: LanguageModel, pairs: Sequence[CandidatePair]) -> JudgeResponse:
    """The model's verdicts on ``pairs`` (shown as 1..k). Raises ``LanguageModelError`` if the
    model cannot answer and :class:`JudgeReplyInvalid` if the answer is not the schema."""
    messages = build_judge_messages(
        [
            (
                pair.older.text,
                pair.older.valid_from or pair.older.created_at,
                pair.newer.text,
                pair.newer.valid_from or pair.newer.created_at,
            )
            for pair in pairs
        ]
    )
    try:
        reply = await model.complete(
            messages,
            kind=CallKind.JUDGE,
            json_schema=JudgeResponse.model_json_schema(),
            temperature=0.0,
        )
    except AnswerCut as error:
        # A cut JSON answer is an unusable one, not an outage.
        raise JudgeReplyInvalid(f"consolidation judge reply was cut: {error}") from error
    try:
        return JudgeResponse.model_validate_json(reply)
    except ValidationError as error:
        raise JudgeReplyInvalid(
            f"consolidation judge reply does not match the schema: {error.errors()[0]['msg']}; "
            f"reply began {reply[:120]!r}"
        ) from error
