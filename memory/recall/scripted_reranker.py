"""A reranker whose scores are given by the test (test double for the cross-encoder).

No cross-encoder weights can be downloaded on the development machines, so tests script the
judgement a real cross-encoder would make and check that recall follows it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence


class ScriptedReranker:
    """Scores passages from a table (``passage -> score``) or a function of (query, passage).

    Passages missing from the table score ``default``. ``calls`` records ``(query,
    passages)`` of every call.
    """

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
