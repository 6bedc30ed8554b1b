"""What a model is told a text is: a query, a document, or one side of a comparison (some
models embed worse without their prompts; fastembed and Ollama add none).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

# query: a message looking for facts (recall); document: a fact as it is stored and indexed;
# similarity: one side of a comparison of two sentences.
TextKind = Literal["query", "document", "similarity"]


@dataclass(frozen=True, slots=True)
class Prompts:
    """The text put before each kind of text; empty: none."""

    query: str = ""
    document: str = ""
    similarity: str = ""

    def of(self, kind: TextKind) -> str:
        prompt: str = getattr(self, kind)
        return prompt

    def apply(self, texts: Sequence[str], kind: TextKind) -> list[str]:
        prompt = self.of(kind)
        return [prompt + text for text in texts] if prompt else list(texts)


NO_PROMPTS = Prompts()
EMBEDDINGGEMMA = Prompts(
    query="task: search result | query: ",
    document="title: none | text: ",
    similarity="task: sentence similarity | query: ",
)
# The e5 family's own advice: "query: " for symmetric tasks as well.
E5 = Prompts(query="query: ", document="passage: ", similarity="query: ")

_E5_NAME = re.compile(r"(^|[/_:-])e5([-_:]|$)")


def default_prompts(model: str) -> Prompts:
    """The prompts of a model Mnemo knows by name (fastembed's or Ollama's), else none."""
    name = model.lower()
    if "embeddinggemma" in name:
        return EMBEDDINGGEMMA
    if _E5_NAME.search(name):
        return E5
    return NO_PROMPTS
