"""Language models: the port, and a scripted test double. Backends live beside them."""

from memory.llm.base import (
    ChatMessage,
    LanguageModel,
    LanguageModelError,
    LanguageModelResponseError,
    LanguageModelUnavailable,
    ModelNotFound,
)
from memory.llm.scripted import RecordedCall, ScriptedLanguageModel

__all__ = [
    "ChatMessage",
    "LanguageModel",
    "LanguageModelError",
    "LanguageModelResponseError",
    "LanguageModelUnavailable",
    "ModelNotFound",
    "RecordedCall",
    "ScriptedLanguageModel",
]
