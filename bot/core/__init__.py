"""The conversation core: addressing, routing, prompt assembly, reply, background learning."""

from bot.commands.pausing import PauseSwitch
from bot.commands.ports import FactRecall, MemoryWrites, Recalled
from bot.core.core import APOLOGY, MEMORY_APOLOGY, ConversationCore, CoreSettings

__all__ = [
    "APOLOGY",
    "MEMORY_APOLOGY",
    "ConversationCore",
    "CoreSettings",
    "FactRecall",
    "MemoryWrites",
    "PauseSwitch",
    "Recalled",
]
