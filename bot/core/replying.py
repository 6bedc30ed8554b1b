"""The reply call, with web search when it is configured.

Chosen per message:

- no web search configured: one plain call;
- a model that takes tools: the reply call offers the ``web_search`` tool. A direct answer
  is the reply (one call). A call of the tool runs its queries through the advisor, gives
  the results back as tool results, and a second call answers (two calls). At most one tool
  round: a tool call in the answer round is not run, and the answer is then asked for
  without tools, the results in the system prompt (three calls);
- a forced ``/search``, a model without tool support (:class:`ToolsNotSupported`, or any
  error answer to the tools call; remembered per model for the life of the process and
  logged once), or a model double without tool
  calls: the advisor's web context (the forced query, or its JSON decision) goes into the
  system prompt, then one plain call.

A tool call that cannot be run (another tool's name, arguments that do not fit) is logged
and the message is answered without the web. A call the model wrote as text is run like a
structured one (the backends read it); what a person sees never holds call JSON.

Every call carries the reply's token budget. An answer cut there (:class:`AnswerCut`) is
sent as far as it goes, with a short note; a cut tools round that was writing a call is
answered again without tools.

An answer that opens with the person's own words as its own ("Hello! I'm Sam" to "hi!
I'm Sam") is asked for once more, with a note (:mod:`bot.core.echo`); streamed, that
opening is never shown.

Given an answer stream, each call streams its text there as it is written
(:mod:`bot.core.streamed_calls`; the tools round first, then the answer, never a call). A
stream that breaks midway leaves what was shown as the answer, with a short note.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, replace

from bot.core.echo import EchoCheck
from bot.core.reply_prompt import ReplyContext, build_messages, voice_note
from bot.core.streamed_calls import ReplyCalls, SpokeAsThePerson, StreamBroke
from bot.streaming.base import AnswerStream
from bot.websearch.base import GroupRoom, WebContext, WebSearchAdvisor
from bot.websearch.tool import TOOL_NAME, WEB_SEARCH_TOOL, read_call, search_plan, tool_results
from memory.llm import (
    AnswerCut,
    AssistantTurn,
    ChatMessage,
    LanguageModel,
    LanguageModelResponseError,
    ToolCallingModel,
    ToolsNotSupported,
)
from memory.llm.text_tool_calls import without_calls
from memory.records import Role

log = logging.getLogger(__name__)

CUT_NOTE = "(My answer was cut off here: it reached its length limit.)"
BROKEN_NOTE = "(My answer broke off here: I lost my connection to my language model.)"


@dataclass(frozen=True, slots=True)
class Reply:
    text: str
    notice: str | None = None

    def with_notice(self, notice: str | None) -> Reply:
        notices = [part for part in (self.notice, notice) if part]
        return Reply(self.text, "\n".join(notices) or None)


def shown(text: str) -> str:
    """What a person may see of the model's text: never a tool call, whole or cut."""
    visible = without_calls(text, [TOOL_NAME])
    if visible != text.strip():
        log.warning("the model wrote a tool call into its answer; not shown: %.300r", text)
    return visible


def cut_reply(cut: AnswerCut) -> Reply:
    log.warning("reply cut at the token budget: %s", cut)
    return Reply(shown(cut.text), CUT_NOTE)


class Replier:
    def __init__(
        self,
        llm: LanguageModel,
        web_search: WebSearchAdvisor | None,
        *,
        temperature: float | None = None,
    ) -> None:
        self._llm = llm
        self._web = web_search
        self._calls = ReplyCalls(llm, None, temperature)
        self._models_without_tools: set[str] = set()

    async def reply(
        self,
        context: ReplyContext,
        *,
        forced_query: str | None,
        stream: AnswerStream | None = None,
    ) -> Reply:
        """The answer to ``context.message``, streamed to ``stream`` if given; LLM errors
        other than refused tools, cut answers and a stream broken midway propagate."""
        if stream is None:
            return await self._reply(context, forced_query)
        # A copy whose calls stream; what it learns of models without tools is shared.
        streaming = copy.copy(self)
        streaming._calls = ReplyCalls(self._llm, stream, self._calls.temperature)
        try:
            return await streaming._reply(context, forced_query)
        except StreamBroke as broke:
            log.error("answering with what was shown: %s", broke)
            return Reply(broke.shown, BROKEN_NOTE)

    async def _reply(self, context: ReplyContext, forced_query: str | None) -> Reply:
        if self._web is None:
            return await self.plain(context)
        model = self._tool_model()
        if forced_query is None and model is not None:
            reply = await self._with_tool(model, self._web, context)
            if reply is not None:
                return reply
        return await self._with_web_context(self._web, context, forced_query)

    async def plain(self, context: ReplyContext, *, spoke: SpokeAsThePerson | None = None) -> Reply:
        """One call. An answer that opens with the person's words as its own is asked for
        once more with a note (:mod:`bot.core.echo`); if that one echoes too, or recites
        the note, its echoing sentences are left out, and where nothing is left the first
        answer's are."""
        messages = build_messages(context)
        echo = echo_check(context)
        if spoke is not None:
            note = voice_note(context)
            messages.append(note)
            echo = echo.with_note(note.content)
        try:
            text = await self._calls.complete(messages, echo, whole=spoke is not None)
        except SpokeAsThePerson as again:
            if spoke is None:
                return await self._noted(context, again)
            log.info("the answer asked for again spoke as %s too: %s", context.person_name, again)
            text = echo.without_echo(again.text) or echo.without_echo(spoke.text)
        except AnswerCut as cut:
            return cut_reply(cut)
        return Reply(shown(text))

    async def _noted(self, context: ReplyContext, spoke: SpokeAsThePerson) -> Reply:
        log.info("asking again, the answer spoke as %s: %s", context.person_name, spoke)
        return await self.plain(context, spoke=spoke)

    def _tool_model(self) -> ToolCallingModel | None:
        llm = self._llm
        if not isinstance(llm, ToolCallingModel):
            return None
        return None if llm.model_name in self._models_without_tools else llm

    def _remember_without_tools(
        self, model: ToolCallingModel, error: ToolsNotSupported | LanguageModelResponseError
    ) -> None:
        self._models_without_tools.add(model.model_name)
        reason = (
            "does not take tools"
            if isinstance(error, ToolsNotSupported)
            else "answered an error when offered tools"
        )
        log.warning(
            "web search: the model %s %s (%s); until restart, each question "
            "costs one extra JSON decision call instead",
            model.model_name,
            reason,
            error,
        )

    async def _with_web_context(
        self, web: WebSearchAdvisor, context: ReplyContext, forced_query: str | None
    ) -> Reply:
        group = None if context.is_direct else GroupRoom(context.bot_name, context.person_name)
        found = await web.context_for(
            context.message, context.turns, context.today, forced_query=forced_query, group=group
        )
        if found is None:
            return await self.plain(context)
        reply = await self.plain(replace(context, web_section=found.prompt_section))
        return reply.with_notice(found.notice)

    async def _with_tool(
        self, model: ToolCallingModel, web: WebSearchAdvisor, context: ReplyContext
    ) -> Reply | None:
        """The reply through the tool; ``None`` when the model refuses tools."""
        messages = build_messages(replace(context, web_tool=True))
        try:
            first = await self._ask(model, messages, echo_check(context))
        except SpokeAsThePerson as spoke:
            return await self._noted(context, spoke)
        except AnswerCut as cut:
            return await self._after_cut(context, cut)
        except (ToolsNotSupported, LanguageModelResponseError) as error:
            # Servers word a refusal of tools in ways not all known here; any error answer
            # to the tools call falls back to the path that needs no tools.
            self._remember_without_tools(model, error)
            return None
        if not first.tool_calls:
            return Reply(shown(first.text))
        return await self._after_tool_calls(model, web, context, messages, first)

    async def _after_cut(self, context: ReplyContext, cut: AnswerCut) -> Reply:
        """A cut first round: its text with a note, or, if it was writing a call that the
        budget cut short, the answer asked for once more without tools."""
        reply = cut_reply(cut)
        if reply.text:
            return reply
        log.warning("the cut tools round held only a call; answering without tools")
        return await self.plain(context)

    async def _after_tool_calls(
        self,
        model: ToolCallingModel,
        web: WebSearchAdvisor,
        context: ReplyContext,
        messages: list[ChatMessage],
        first: AssistantTurn,
    ) -> Reply:
        calls = [read_call(call) for call in first.tool_calls]
        plan = search_plan(calls)
        if plan is None:
            problems = "; ".join(read.problem or "" for read in calls)
            log.warning("web search skipped: the model's tool call cannot be run: %s", problems)
            return await self.plain(context)
        found = await web.search(plan, context.today)
        results = tool_results(calls, found)
        try:
            answer = await self._ask(model, [*messages, first.as_message(), *results])
        except AnswerCut as cut:
            with_results = replace(context, web_section=found.prompt_section)
            return (await self._after_cut(with_results, cut)).with_notice(found.notice)
        if not answer.tool_calls:
            return Reply(shown(answer.text), found.notice)
        return await self._answer_without_tools(context, found, answer)

    async def _answer_without_tools(
        self, context: ReplyContext, found: WebContext, answer: AssistantTurn
    ) -> Reply:
        names = ", ".join(call.name for call in answer.tool_calls)
        log.warning(
            "web search: the model called %s again in the answer round; not run (one tool "
            "round per message)",
            names,
        )
        if shown(answer.text):
            return Reply(shown(answer.text), found.notice)
        reply = await self.plain(replace(context, web_section=found.prompt_section))
        return reply.with_notice(found.notice)

    async def _ask(
        self, model: ToolCallingModel, messages: list[ChatMessage], echo: EchoCheck | None = None
    ) -> AssistantTurn:
        return await self._calls.complete_with_tools(model, messages, [WEB_SEARCH_TOOL], echo)


def echo_check(context: ReplyContext) -> EchoCheck:
    """The check of the person's words: the message, the recalled facts and, in a DM, their
    earlier messages, which the model sees as the dialogue and may answer with."""
    turns = context.turns if context.is_direct else []
    said = [turn.text for turn in turns if turn.role is Role.USER]
    return EchoCheck(context.person_name, context.message, [*context.facts, *said])
