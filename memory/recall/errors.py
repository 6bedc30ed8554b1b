"""Errors of the read path, under the memory layer's root::

    MemoryLayerError
     └── RerankerError              the cross-encoder failed on a query
          └── RerankerUnavailable   it could not be loaded (not downloaded, wrong path)

The recaller falls back to cosine order on both.
"""

from __future__ import annotations

from memory.errors import MemoryLayerError


class RerankerError(MemoryLayerError):
    """The reranker failed to score passages."""


class RerankerUnavailable(RerankerError):
    """The reranker model could not be loaded; it will not be tried again by this instance."""
