"""A maximum message length that cuts long messages with a note instead of failing."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Truncated:
    text: str
    original_length: int

    @property
    def was_cut(self) -> bool:
        return len(self.text) < self.original_length

    def note(self) -> str | None:
        """The line the person gets when their message was cut."""
        if not self.was_cut:
            return None
        return (
            f"(Your message was {self.original_length} characters long; "
            f"I only read the first {len(self.text)}.)"
        )


def truncate(text: str, max_chars: int) -> Truncated:
    return Truncated(text[:max_chars], len(text))
