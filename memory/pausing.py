"""Whether a person paused learning (``/memory pause``): one store setting per person, for
all their rooms; the intake transaction reads it with the message it queues.
"""

from __future__ import annotations

KEY_PREFIX = "learning_paused:"
PAUSED = "1"
RESUMED = "0"


def pause_key(person: str) -> str:
    return KEY_PREFIX + person
