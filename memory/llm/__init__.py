"""Language models: the port, and a scripted test double. Backends live beside them."""

from memory.llm.base import (
    AnswerCut,
    AssistantTurn,
    CallKind,
    ChatMessage,
    LanguageModel,
    LanguageModelError,
    LanguageModelResponseError,
    LanguageModelUnavailable,
    ModelNotFound,
    StreamingModel,
    TokenBudgets,
    ToolCall,
    ToolCallingModel,
    ToolsNotSupported,
    ToolSpec,
    WrongProvider,
    tool_result,
)
from memory.llm.scripted import RecordedCall, ScriptedLanguageModel

__all__ = [
    "AnswerCut",
    "AssistantTurn",
    "CallKind",
    "ChatMessage",
    "LanguageModel",
    "LanguageModelError",
    "LanguageModelResponseError",
    "LanguageModelUnavailable",
    "ModelNotFound",
    "RecordedCall",
    "ScriptedLanguageModel",
    "StreamingModel",
    "TokenBudgets",
    "ToolCall",
    "ToolCallingModel",
    "ToolSpec",
    "ToolsNotSupported",
    "WrongProvider",
    "tool_result",
]
