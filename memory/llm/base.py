"""The language-model port: one chat completion, optionally constrained to a JSON schema.

The caller validates structured replies against its own pydantic model: the port returns the
raw text, so that broken JSON is the caller's guard to handle, not something hidden here.

Errors::

    LanguageModelError
     ├── LanguageModelUnavailable   server unreachable or timing out (retry later)
     ├── ModelNotFound              the model is not pulled / not served (operator must fix)
     └── LanguageModelResponseError the server answered with an error
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from memory.errors import MemoryLayerError

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: Role
    content: str


class LanguageModelError(MemoryLayerError):
    """The language model could not give an answer."""


class LanguageModelUnavailable(LanguageModelError):
    """The server could not be reached or did not answer in time."""


class ModelNotFound(LanguageModelError):
    """The server runs, but does not have the configured model."""


class LanguageModelResponseError(LanguageModelError):
    """The server answered with an error other than a missing model."""


class LanguageModel(Protocol):
    @property
    def model_name(self) -> str: ...

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float | None = None,
    ) -> str:
        """The assistant's reply text; with ``json_schema``, text meant to match it."""
        ...

    async def aclose(self) -> None: ...
