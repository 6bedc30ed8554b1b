"""Errors of the Matrix adapter.

::

    MatrixAdapterError
     ├── MatrixConfigError   the ``[matrix]`` settings cannot be used (names the key)
     ├── MatrixLoginError    the homeserver refused the login or the saved session
     └── MatrixStoreLost     the crypto store of a known device is gone
"""

from __future__ import annotations


class MatrixAdapterError(Exception):
    """Root of the Matrix adapter's errors; the message is meant for the operator."""


class MatrixConfigError(MatrixAdapterError):
    pass


class MatrixLoginError(MatrixAdapterError):
    pass


class MatrixStoreLost(MatrixAdapterError):
    pass
