"""The consolidation judge prompt: is this pair one fact, an update, a detail, or two facts?

Pairs are shown with small ids and A (older) and B (newer); database ids never reach the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from memory.llm.base import ChatMessage

PROMPT_VERSION = "consolidation-judge/2"

VerdictName = Literal["same", "replaces", "adds_detail", "different"]


class PairJudgement(BaseModel):
    model_config = ConfigDict(extra="ignore")

    pair: int = Field(description="the pair's number as shown (1..k)")
    same_thing: bool = Field(
        description="A and B tell about the same thing of the person's life (not two things)"
    )
    both_true: bool = Field(description="A and B can both be true today")
    verdict: VerdictName = Field(
        description=(
            "same: both say the same thing; replaces: B is a newer value that makes A no "
            "longer true; adds_detail: one says what the other says and more; different: "
            "two separate facts (also about different people or things)"
        )
    )
    keep: Literal["A", "B"] | None = Field(
        None, description="for same and adds_detail: the side with the more detailed text"
    )


class JudgeResponse(BaseModel):
    model_config = ConfigDict(extra="ignore")

    verdicts: list[PairJudgement] = Field(description="one entry per pair shown")


SYSTEM_PROMPT = """\
You tidy up a person's long-term memory. Each numbered pair holds two facts the person told, \
A earlier and B later. For every pair first answer two questions:
- "same_thing": true if A and B tell about the same thing of the person's life (the same \
attribute, habit, possession or relationship), false if they tell about two different \
things, or about different people.
- "both_true": true if A and B can both be true today, false if B means that A is no \
longer true.
Then decide the "verdict":
- "same": A and B state the same fact in different words.
- "replaces": B is a newer value of the same thing and A is no longer true \
(a new age, a new city, a changed preference, something the person stopped).
- "adds_detail": both state the same fact, but one adds detail (a name, a reason, a date); \
set "keep" to the side with the detail.
- "different": two separate facts, even if the words are similar.
For "same" also set "keep" to the side with more information. When unsure, answer \
"different": a wrong merge loses a memory, a missed one costs nothing.
Answer in JSON: an object whose "verdicts" list has one entry per pair, with "pair" (the \
pair's number), "same_thing", "both_true", "verdict", and "keep" ("A", "B", or null)."""


def _day(moment: datetime) -> str:
    return moment.date().isoformat()


def build_judge_messages(
    pairs: Sequence[tuple[str, datetime, str, datetime]],
) -> list[ChatMessage]:
    """Messages for one batch; ``pairs[i]`` is (older text, its date, newer text, its date)
    and is shown as pair ``i + 1``."""
    blocks = [
        f"Pair {number}\nA ({_day(older_date)}): {older_text}\nB ({_day(newer_date)}): {newer_text}"
        for number, (older_text, older_date, newer_text, newer_date) in enumerate(pairs, start=1)
    ]
    return [
        ChatMessage("system", SYSTEM_PROMPT),
        ChatMessage("user", "\n\n".join(blocks)),
    ]
