"""Errors of the read path. They sit under the memory layer's root::

    MemoryLayerError
     └── RerankerError              the cross-encoder failed on a query
          └── RerankerUnavailable   it could not be loaded (not downloaded, wrong path)

The recaller catches both and falls back to cosine order: a reranker never breaks recall.
"""

from __future__ import annotations

from memory.errors import MemoryLayerError


class RerankerError(MemoryLayerError):
    """The reranker failed to score passages."""


class RerankerUnavailable(RerankerError):
    """The reranker model could not be loaded; it will not be tried again by this instance."""
