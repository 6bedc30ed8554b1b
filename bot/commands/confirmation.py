"""Pending confirmations of destructive commands, per scope, valid for a short window."""

from __future__ import annotations

import time
from collections.abc import Callable

from memory.scope import Scope

CONFIRMATION_WINDOW_SECONDS = 60.0


class Confirmations:
    def __init__(
        self,
        window_seconds: float = CONFIRMATION_WINDOW_SECONDS,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.window_seconds = window_seconds
        self._clock = clock
        self._requested: dict[tuple[str, Scope], float] = {}

    def request(self, action: str, scope: Scope) -> None:
        self._requested[(action, scope)] = self._clock()

    def confirm(self, action: str, scope: Scope) -> bool:
        """True once if ``action`` was requested in ``scope`` within the window."""
        requested_at = self._requested.pop((action, scope), None)
        if requested_at is None:
            return False
        return self._clock() - requested_at <= self.window_seconds
