"""The write path (design section 4): the model proposes, the code decides.

``MemoryWriter`` is the facade the bot uses; each stage is a module of its own: extraction,
candidates, decision, guards, apply, pipeline, undo, history.
"""

from memory.store import Accepted
from memory.write.apply import AppliedWrite
from memory.write.errors import UnusableModelOutput, WriteError
from memory.write.guards import Guard
from memory.write.normalise import normalise_text
from memory.write.pipeline import WriteOutcome
from memory.write.precheck import may_hold_fact
from memory.write.undo import UndoResult
from memory.write.writer import MemoryWriter, WriteSettings

__all__ = [
    "Accepted",
    "AppliedWrite",
    "Guard",
    "MemoryWriter",
    "UndoResult",
    "UnusableModelOutput",
    "WriteError",
    "WriteOutcome",
    "WriteSettings",
    "may_hold_fact",
    "normalise_text",
]
