"""A reranker whose scores are given by the test (test double for the cross-encoder)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence


class ScriptedReranker:
    """Scores from a table (``passage -> score``, else ``default``) or a function; ``calls``
    records every call."""

    def __init__(
        self,
        scores: Mapping[str, float] | Callable[[str, str], float] | None = None,
        *,
        default: float = 0.0,
    ) -> None:
        self._scores = scores or {}
        self._default = default
        self.calls: list[tuple[str, list[str]]] = []
        self.closed = False

    async def rank(self, query: str, passages: Sequence[str]) -> list[float]:
        self.calls.append((query, list(passages)))
        return [self._score(query, passage) for passage in passages]

    def _score(self, query: str, passage: str) -> float:
        if callable(self._scores):
            return self._scores(query, passage)
        return self._scores.get(passage, self._default)

    async def aclose(self) -> None:
        self.closed = True
