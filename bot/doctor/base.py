"""What a doctor check is and what it reports."""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.config import Config


class CheckStatus(enum.Enum):
    OK = "ok"
    # Works in a degraded way (e.g. no reranker: search falls back to cosine order).
    WARN = "warn"
    FAIL = "fail"
    # The service is not configured, so there is nothing to check (not an error).
    SKIP = "skip"


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One line of ``mnemo doctor``: what was checked, and what is wrong and how to fix it."""

    name: str
    status: CheckStatus
    detail: str

    @property
    def ok(self) -> bool:
        """Only a failure counts against the doctor's exit code; warnings and skips do not."""
        return self.status is not CheckStatus.FAIL

    @classmethod
    def passed(cls, name: str, detail: str) -> CheckResult:
        return cls(name, CheckStatus.OK, detail)

    @classmethod
    def warned(cls, name: str, detail: str) -> CheckResult:
        return cls(name, CheckStatus.WARN, detail)

    @classmethod
    def failed(cls, name: str, detail: str) -> CheckResult:
        return cls(name, CheckStatus.FAIL, detail)

    @classmethod
    def skipped(cls, name: str, detail: str) -> CheckResult:
        return cls(name, CheckStatus.SKIP, detail)


Check = Callable[[Config], Awaitable[CheckResult]]
