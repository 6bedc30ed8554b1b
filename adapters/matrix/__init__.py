"""The Matrix adapter (matrix-nio): login and store, sync loop, addressing, replies, E2EE."""

from adapters.matrix.adapter import ConversationCore, MatrixAdapter
from adapters.matrix.errors import (
    MatrixAdapterError,
    MatrixConfigError,
    MatrixLoginError,
    MatrixStoreLost,
)
from adapters.matrix.session import log_in
from adapters.matrix.settings import MatrixConnection, connection_from_settings

__all__ = [
    "ConversationCore",
    "MatrixAdapter",
    "MatrixAdapterError",
    "MatrixConfigError",
    "MatrixConnection",
    "MatrixLoginError",
    "MatrixStoreLost",
    "connection_from_settings",
    "log_in",
]
