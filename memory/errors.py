"""Errors raised by the memory layer.

One root, so callers above can catch the whole layer at once::

    MemoryLayerError
     ├── StoreError                 SQLite could not read or write
     │    ├── StorageFullError      the disk is full; nothing was written
     │    ├── LockTimeoutError      another transaction held a lock too long; try later
     │    └── SchemaError           the schema cannot be used or upgraded as it is
     │         ├── SchemaTooNewError    made by a newer Mnemo: refused, never touched
     │         └── SchemaOutdatedError  older than the code and not upgraded (read-only use)
     ├── VectorIndexError           LanceDB could not read or write
     ├── EmbeddingError             the embedding model failed
     │    └── EmbeddingModelUnavailable   it could not be loaded or reached
     └── InvalidScopeError          a user or room key is malformed
"""


class MemoryLayerError(Exception):
    """Root of every error the memory layer raises on purpose."""


class StoreError(MemoryLayerError):
    """The SQLite fact store failed."""


class StorageFullError(StoreError):
    """The disk holding the database is full."""


class LockTimeoutError(StoreError):
    """Another transaction held what this one needed longer than the database waits
    (PostgreSQL's ``lock_timeout``); nothing was written, and the same write later works."""


class SchemaError(StoreError):
    """The database's schema is not one this code can use or upgrade."""


class SchemaTooNewError(SchemaError):
    """The database was upgraded by a newer Mnemo; this one must not touch it."""


class SchemaOutdatedError(SchemaError):
    """The database needs an upgrade that was not asked for (``mnemo migrate`` does it)."""


class VectorIndexError(MemoryLayerError):
    """The LanceDB vector index failed."""


class EmbeddingError(MemoryLayerError):
    """The embedding model failed to embed."""


class EmbeddingModelUnavailable(EmbeddingError):
    """The embedding model could not be loaded (not downloaded, wrong path, server down)."""


class InvalidScopeError(MemoryLayerError, ValueError):
    """A user key or room key does not have the form ``<platform>:<id>``."""
