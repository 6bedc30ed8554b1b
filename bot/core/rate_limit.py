"""A per-user sliding-window rate limit: at most N messages in any 60 seconds."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

WINDOW_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class RateDecision:
    allowed: bool
    retry_after_seconds: float = 0.0
    # Only the first refused message of a burst is told why; the rest are dropped silently,
    # so that a flood does not turn into a flood of notices.
    notify: bool = False


class RateLimiter:
    def __init__(self, per_minute: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._per_minute = per_minute
        self._clock = clock
        self._accepted: dict[str, deque[float]] = {}
        self._notified: set[str] = set()

    def check(self, user_key: str) -> RateDecision:
        """Count this message against ``user_key`` if it is allowed."""
        now = self._clock()
        accepted = self._accepted.setdefault(user_key, deque())
        while accepted and now - accepted[0] >= WINDOW_SECONDS:
            accepted.popleft()
        if len(accepted) < self._per_minute:
            accepted.append(now)
            self._notified.discard(user_key)
            return RateDecision(allowed=True)
        notify = user_key not in self._notified
        self._notified.add(user_key)
        return RateDecision(False, WINDOW_SECONDS - (now - accepted[0]), notify)
