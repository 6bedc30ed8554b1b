"""Errors raised by the memory layer.

One root, so callers above can catch the whole layer at once::

    MemoryLayerError
     ├── StoreError                 SQLite could not read or write
     │    └── StorageFullError      the disk is full; nothing was written
     ├── VectorIndexError           LanceDB could not read or write
     ├── EmbeddingError             the embedding model failed
     │    └── EmbeddingModelUnavailable   it could not be loaded or reached
     └── InvalidScopeError          a user or room key is malformed

Library errors are translated at the boundary, with the original kept as ``__cause__``.
(Never call the root ``MemoryError``: that shadows a builtin.)
"""


class MemoryLayerError(Exception):
    """Root of every error the memory layer raises on purpose."""


class StoreError(MemoryLayerError):
    """The SQLite fact store failed."""


class StorageFullError(StoreError):
    """The disk holding the database is full."""


class VectorIndexError(MemoryLayerError):
    """The LanceDB vector index failed."""


class EmbeddingError(MemoryLayerError):
    """The embedding model failed to embed."""


class EmbeddingModelUnavailable(EmbeddingError):
    """The embedding model could not be loaded (not downloaded, wrong path, server down)."""


class InvalidScopeError(MemoryLayerError, ValueError):
    """A user key or room key does not have the form ``<platform>:<id>``."""
