"""Who may invite the bot and talk to it: Matrix user id patterns such as ``@*:example.org``."""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase


@dataclass(frozen=True, slots=True)
class AllowList:
    """Shell-style patterns (``*``, ``?``) matched against the whole user id, case-sensitively.

    Matrix user ids are case-sensitive in their localpart, and a pattern that matched
    ``@Alice`` for ``@alice`` would let in someone else. An empty list allows nobody.
    """

    patterns: tuple[str, ...]

    def allows(self, user_id: str) -> bool:
        return any(fnmatchcase(user_id, pattern) for pattern in self.patterns)
