"""Replies cut at the token budget, and tool calls written as text, through the Replier.

The model is a scripted test double answering what the 0.5B model was seen to answer:
calls as plain JSON text, and answers that run to the budget."""

from __future__ import annotations

from datetime import date

import pytest

from bot.core.reply_prompt import ReplyContext
from bot.core.replying import CUT_NOTE, Replier
from bot.websearch.base import WebContext
from bot.websearch.fixed import FixedWebSearchAdvisor
from memory.llm import AnswerCut, CallKind, ScriptedLanguageModel

CONTEXT = ReplyContext(
    bot_name="Mnemo",
    person_name="Alice",
    today=date(2026, 11, 29),
    facts=[],
    turns=[],
    message="what's the weather in Paris tomorrow?",
)
WRITTEN_CALL = '{"name": "web_search", "arguments": {"queries": ["Paris weather 2026-11-30"]}}'
RESULTS = WebContext(("Paris weather 2026-11-30",), "[1] Météo Paris - https://meteo.example")


def cut(text: str) -> AnswerCut:
    return AnswerCut(CallKind.REPLY, 1024, text)


async def test_a_cut_reply_is_sent_with_a_note() -> None:
    llm = ScriptedLanguageModel([cut("Paris will be cloudy, with rain in the")])
    reply = await Replier(llm, None).reply(CONTEXT, forced_query=None)
    assert (reply.text, reply.notice) == ("Paris will be cloudy, with rain in the", CUT_NOTE)
    assert llm.calls[0].kind is CallKind.REPLY


async def test_a_call_written_as_text_is_run_and_never_shown() -> None:
    web = FixedWebSearchAdvisor(RESULTS)
    llm = ScriptedLanguageModel([WRITTEN_CALL, "Tomorrow: 9 °C and rain [1] https://meteo.example"])
    reply = await Replier(llm, web).reply(CONTEXT, forced_query=None)
    assert [plan.queries for plan in web.searches] == [("Paris weather 2026-11-30",)]
    assert reply.text == "Tomorrow: 9 °C and rain [1] https://meteo.example"
    # The result went back as the answer to the call, as for a structured one.
    answer_round = llm.calls[1].messages
    assert answer_round[-2].tool_calls[0].name == "web_search"
    assert answer_round[-1].role == "tool" and "meteo.example" in answer_round[-1].content


async def test_a_call_written_into_a_plain_answer_is_taken_out() -> None:
    """No tools offered (no web search set up), yet the model wrote a call: not shown."""
    llm = ScriptedLanguageModel([f"Let me check.\n<tool_call>\n{WRITTEN_CALL}\n</tool_call>"])
    reply = await Replier(llm, None).reply(CONTEXT, forced_query=None)
    assert reply.text == "Let me check."
    assert "web_search" not in reply.text and "{" not in reply.text


async def test_a_tools_round_cut_inside_its_call_is_answered_again_without_tools() -> None:
    web = FixedWebSearchAdvisor(RESULTS)
    llm = ScriptedLanguageModel(
        [cut('{"name": "web_search", "arguments": {"queries": ["Paris weath'), "Rain, 9 °C."]
    )
    reply = await Replier(llm, web).reply(CONTEXT, forced_query=None)
    assert (reply.text, reply.notice) == ("Rain, 9 °C.", None)
    assert [bool(call.tools) for call in llm.calls] == [True, False]


async def test_a_cut_answer_round_keeps_the_search_notice_and_adds_the_note() -> None:
    web = FixedWebSearchAdvisor(WebContext(RESULTS.queries, RESULTS.prompt_section, "(notice)"))
    llm = ScriptedLanguageModel([WRITTEN_CALL, cut("Tomorrow it rains in Paris and the")])
    reply = await Replier(llm, web).reply(CONTEXT, forced_query=None)
    assert reply.text == "Tomorrow it rains in Paris and the"
    assert reply.notice == f"{CUT_NOTE}\n(notice)"


@pytest.mark.parametrize(
    "answer",
    [
        '{"type": "function", "function": {"name": "web_search", "description": "Search the '
        'web.", "parameters": {"type": "object", "properties": {"queries": {"type": "array"}}}}}',
        "[web_search()]",
    ],
)
async def test_an_echoed_tool_definition_is_not_run_and_not_shown(answer: str) -> None:
    """Seen with a server-side cap: the model echoed the tool definitions as its answer."""
    web = FixedWebSearchAdvisor(RESULTS)
    llm = ScriptedLanguageModel([answer, "I can't look that up right now."])
    reply = await Replier(llm, web).reply(CONTEXT, forced_query=None)
    assert web.searches == []
    assert reply.text == "I can't look that up right now."


async def test_calls_of_a_tool_never_offered_are_not_shown_even_when_cut() -> None:
    """The 0.5B model's answer round: one made-up "weather" call after another, cut."""
    weather = '{"name": "weather", "arguments": {"city": "Paris", "description": "Rainy"}}'
    llm = ScriptedLanguageModel([cut(f"{weather}\n\n{weather}\n\n" + weather[:40])])
    reply = await Replier(llm, None).reply(CONTEXT, forced_query=None)
    assert '"arguments"' not in reply.text and "weather" not in reply.text
