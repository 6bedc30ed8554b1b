"""The reply's model calls, streamed to the person as the model writes them.

With an :class:`~bot.streaming.AnswerStream` and a model that streams, the text of each
reply call goes to the stream as it grows, with tool calls written as text held back
(:func:`~memory.llm.text_tool_calls.shown_while_streaming`): words before a call may show,
the call never does. A later call's text takes the place of an earlier one's (a tools
round's "let me look that up" gives way to the answer). A stream that breaks after some
text was shown raises :class:`StreamBroke` with that text, so that it stays, with a note.
Without a stream, or with a model that cannot stream, these are the plain calls.

Given an :class:`~bot.core.echo.EchoCheck`, an answer that opens with the person's own
words as its own raises :class:`SpokeAsThePerson`; streamed, its opening is held back until
the check is clear, so the echo is never shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.core.echo import EchoCheck, Verdict
from bot.streaming.base import AnswerStream
from bot.websearch.tool import TOOL_NAME
from memory.llm import (
    AnswerCut,
    AssistantTurn,
    CallKind,
    ChatMessage,
    LanguageModel,
    LanguageModelError,
    StreamingModel,
    ToolCallingModel,
    ToolsNotSupported,
    ToolSpec,
)
from memory.llm.text_tool_calls import shown_while_streaming

# A piece with one of these may change what can be shown (a word ended, a bracket closed).
SETTLING = frozenset(" \n\t}])>")


class StreamBroke(Exception):
    """The model's stream broke off after ``shown`` was shown to the person."""

    def __init__(self, shown: str, error: LanguageModelError) -> None:
        super().__init__(f"the reply's stream broke off after {len(shown)} characters: {error}")
        self.shown = shown


class SpokeAsThePerson(Exception):
    """The answer opened with the person's own words as its own: ``text``, as far as it was
    read (all of it when read whole, or not streamed)."""

    def __init__(self, text: str) -> None:
        super().__init__(f"the answer opened with the person's words: {text[:120]!r}")
        self.text = text


class Showing:
    """One call's text as it arrives, and what of it the stream was given."""

    def __init__(self, stream: AnswerStream, echo: EchoCheck | None, whole: bool) -> None:
        self._stream = stream
        self._echo = echo
        self._whole = whole
        self._echoed = False
        self._text = ""
        self.shown = ""

    async def add(self, piece: str) -> None:
        self._text += piece
        if SETTLING.isdisjoint(piece) or self._echoed:
            return
        visible = shown_while_streaming(self._text, [TOOL_NAME])
        if self._echo is not None:
            verdict = self._echo.verdict(visible)
            if verdict is Verdict.ECHO and not self._whole:
                raise SpokeAsThePerson(visible)
            # An echo to be read whole is held back to its end, and shown not at all.
            self._echoed = verdict is Verdict.ECHO
            if verdict is not Verdict.CLEAR:
                return
            self._echo = None  # clear for good: the opening is past
        if visible and visible != self.shown:
            self.shown = visible
            self._stream.grow(visible)


def echoed(echo: EchoCheck | None, text: str) -> None:
    if echo is not None and echo.verdict(text, complete=True) is Verdict.ECHO:
        raise SpokeAsThePerson(text)


@dataclass(frozen=True, slots=True)
class ReplyCalls:
    llm: LanguageModel
    stream: AnswerStream | None = None
    temperature: float | None = None

    async def complete(
        self, messages: Sequence[ChatMessage], echo: EchoCheck | None = None, *, whole: bool = False
    ) -> str:
        """The reply's text, as ``complete`` gives it; SpokeAsThePerson if ``echo`` finds
        the person's words in its opening, streamed as soon as it does, unless ``whole``."""
        model = self._streaming()
        if model is not None:
            text = (await self._streamed(model, messages, (), echo, whole)).text
        else:
            text = await self.llm.complete(
                messages, kind=CallKind.REPLY, temperature=self.temperature
            )
        echoed(echo, text)
        return text

    async def complete_with_tools(
        self,
        model: ToolCallingModel,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec],
        echo: EchoCheck | None = None,
    ) -> AssistantTurn:
        """The turn, as ``complete_with_tools`` gives it; SpokeAsThePerson as ``complete``
        if it calls no tool."""
        streaming = self._streaming()
        if streaming is not None:
            turn = await self._streamed(streaming, messages, tools, echo, False)
        else:
            turn = await model.complete_with_tools(messages, tools, temperature=self.temperature)
        if not turn.tool_calls:
            echoed(echo, turn.text)
        return turn

    def _streaming(self) -> StreamingModel | None:
        if self.stream is None or not isinstance(self.llm, StreamingModel):
            return None
        return self.llm

    async def _streamed(
        self,
        model: StreamingModel,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec],
        echo: EchoCheck | None,
        whole: bool,
    ) -> AssistantTurn:
        assert self.stream is not None
        showing = Showing(self.stream, echo, whole)
        try:
            return await model.stream(
                messages, showing.add, tools=tools, temperature=self.temperature
            )
        except (AnswerCut, ToolsNotSupported):
            raise
        except LanguageModelError as error:
            if showing.shown:
                raise StreamBroke(showing.shown, error) from error
            raise
