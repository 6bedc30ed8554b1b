"""Errors of the write path::

    MemoryLayerError (memory.errors)
     └── WriteError
          └── UnusableModelOutput   the model's answer was not valid JSON of the expected
                                    shape, or named an unknown action: the write stays queued

The parts' errors (store, index, embedder, model) pass through unchanged.
"""

from __future__ import annotations

from memory.errors import MemoryLayerError


class WriteError(MemoryLayerError):
    """The write path could not finish a message."""


class UnusableModelOutput(WriteError):
    """The language model's answer cannot be used; nothing is applied and the write is retried."""

    def __init__(
        self,
        stage: str,
        detail: str,
        raw: str,
        *,
        proposed_action: str | None = None,
        proposed_target: str | None = None,
    ) -> None:
        super().__init__(f"{stage}: {detail} (model answered {raw[:200]!r})")
        self.raw = raw
        # The proposal as returned, when the answer could be read that far.
        self.proposed_action = proposed_action
        self.proposed_target = proposed_target
