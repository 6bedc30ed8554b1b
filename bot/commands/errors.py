"""The one error a command raises to answer the person instead of doing the work.

Raised anywhere inside a command, caught once at dispatch, and its ``user_message`` becomes
the reply. Anything else that escapes a command is a bug and is logged as one.
"""

from __future__ import annotations


class CommandError(Exception):
    def __init__(self, user_message: str) -> None:
        super().__init__(user_message)
        self.user_message = user_message
