"""Whether a person paused learning (``/memory pause``): one store setting per person.

Paused is per person across all rooms of their platform: someone who says "stop learning
about me" should not have to say it again in every room. The intake transaction reads it
together with the message it queues (:meth:`memory.write.writer.MemoryWriter.accept`), so a
pause committed before a message is always seen, by every process sharing the database.
"""

from __future__ import annotations

KEY_PREFIX = "learning_paused:"
PAUSED = "1"
RESUMED = "0"


def pause_key(person: str) -> str:
    return KEY_PREFIX + person
