"""An OpenAI-compatible chat completion read as it streams (server-sent events).

:class:`StreamedAnswer` adds the chunks (``data: <chunk>`` lines up to ``data: [DONE]``) up
into the payload a call without streaming gets, so the turn is read by the same code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from memory.llm.base import LanguageModelResponseError
from memory.text import valid_data

DATA_PREFIX = "data:"
DONE = "[DONE]"


@dataclass
class StreamedAnswer:
    """The chunks of one streamed answer so far."""

    pieces: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    finish_reason: str | None = None
    done: bool = False

    @property
    def complete(self) -> bool:
        """Whether the server said the answer is over (a broken stream never says so)."""
        return self.done or self.finish_reason is not None

    def add_line(self, line: str) -> str:
        """Take one line of the event stream; the piece of text it adds ("" for none)."""
        if not line.startswith(DATA_PREFIX):
            return ""  # blank separators, comments (": ping"), "event:" lines
        data = line[len(DATA_PREFIX) :].strip()
        if data == DONE:
            self.done = True
            return ""
        try:
            chunk = valid_data(json.loads(data))
        except ValueError as error:
            raise LanguageModelResponseError(
                f"the server streamed a chunk that is not JSON: {data[:200]!r}"
            ) from error
        return self.add_chunk(chunk)

    def add_chunk(self, chunk: Any) -> str:
        choices = chunk.get("choices") if isinstance(chunk, dict) else None
        if not choices or not isinstance(choices[0], dict):
            return ""  # the usage chunk some servers send last
        choice = choices[0]
        if choice.get("finish_reason"):
            self.finish_reason = str(choice["finish_reason"])
        delta = choice.get("delta") or {}
        for item in delta.get("tool_calls") or ():
            self._add_call(item)
        piece = delta.get("content")
        if isinstance(piece, str) and piece:
            self.pieces.append(piece)
            return piece
        return ""

    def _add_call(self, item: dict[str, Any]) -> None:
        call = self.calls.setdefault(
            int(item.get("index", len(self.calls))), {"function": {"name": "", "arguments": ""}}
        )
        if item.get("id"):
            call["id"] = item["id"]
        function = item.get("function") or {}
        if function.get("name"):
            call["function"]["name"] += function["name"]
        if isinstance(function.get("arguments"), str):
            call["function"]["arguments"] += function["arguments"]

    def payload(self) -> dict[str, Any]:
        """The answer as a chat completion without streaming has it."""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.pieces)}
        if self.calls:
            message["tool_calls"] = [self.calls[index] for index in sorted(self.calls)]
        return {"choices": [{"message": message, "finish_reason": self.finish_reason}]}
