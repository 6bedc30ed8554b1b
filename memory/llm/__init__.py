"""Language models: the port, and a scripted test double. Backends live beside them."""

from memory.llm.base import (
    AssistantTurn,
    ChatMessage,
    LanguageModel,
    LanguageModelError,
    LanguageModelResponseError,
    LanguageModelUnavailable,
    ModelNotFound,
    ToolCall,
    ToolCallingModel,
    ToolsNotSupported,
    ToolSpec,
    tool_result,
)
from memory.llm.scripted import RecordedCall, ScriptedLanguageModel

__all__ = [
    "AssistantTurn",
    "ChatMessage",
    "LanguageModel",
    "LanguageModelError",
    "LanguageModelResponseError",
    "LanguageModelUnavailable",
    "ModelNotFound",
    "RecordedCall",
    "ScriptedLanguageModel",
    "ToolCall",
    "ToolCallingModel",
    "ToolSpec",
    "ToolsNotSupported",
    "tool_result",
]
