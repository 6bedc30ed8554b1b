"""A reranker whose scores are given by the test (test double for the cross-encoder).

No cross-encoder weights can be downloaded on the development machines, so tests script the
judgement a real cross-encoder would make and check that recall follows it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from memory.recall.errors import RerankerUnavailable


class ScriptedReranker:
    """Scores passages from a table (``passage -> score``) or a function of (query, passage).

    Passages missing from the table score ``default``. ``unavailable`` makes every call raise
    :class:`RerankerUnavailable`, as a model that cannot load does. ``calls`` records
    ``(query, passages)`` of every call.
    """

    def __init__(
        self,
        scores: Mapping[str, float] | Callable[[str, str], float] | None = None,
        *,
        default: float = 0.0,
        unavailable: str | None = None,
    ) -> None:
        self._scores = scores or {}
        self._default = default
        self._unavailable = unavailable
        self.calls: list[tuple[str, list[str]]] = []
        self.closed = False

    async def rank(self, query: str, passages: Sequence[str]) -> list[float]:
        self.calls.append((query, list(passages)))
        if self._unavailable is not None:
            raise RerankerUnavailable(self._unavailable)
        return [self._score(query, passage) for passage in passages]

    def _score(self, query: str, passage: str) -> float:
        if callable(self._scores):
            return self._scores(query, passage)
        return self._scores.get(passage, self._default)

    async def aclose(self) -> None:
        self.closed = True
