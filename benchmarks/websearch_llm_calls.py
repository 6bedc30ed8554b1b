"""LLM calls per message for web search: one JSON decision call, or a tool call.

Runs a labelled 20-message personal conversation through the core's reply step
(:class:`bot.core.replying.Replier`, the real SearxngAdvisor and SearxngClient, a
SearXNG-shaped server on 127.0.0.1) in three ways, and prints, per message on average, the
LLM calls and the characters of prompt sent:

- ``json-every``: a model without tools, the advisor asking the JSON decision on every
  message, then the answer call;
- ``json-gated``: the same with the cheap gate skipping the decision for plain statements
  (what :class:`bot.websearch.SearxngAdvisor` does for models without tools);
- ``tool-call``: a model with tools: the reply call offers ``web_search``; a message that
  needs the web costs a second call with the tool's results (what is built for models that
  take tools).

The model's judgement is scripted from the labels (a test double: no LLM runs here), so the
counts are exact for a model that judges like the labels; the prompts are the real ones
(decision prompt, the reply prompt with its tool paragraph, the tool results), so the
character counts are real, except that a tool's definition is counted as its JSON (a chat
template adds its own words around it: a lower bound). Usage:

    .venv/bin/python -m benchmarks.websearch_llm_calls
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from bot.core.reply_prompt import ReplyContext
from bot.core.replying import Replier
from bot.websearch import SearxngAdvisor, SearxngClient
from bot.websearch.decision_prompt import SearchDecision
from bot.websearch.tool import TOOL_NAME
from memory.llm import AssistantTurn, CallKind, ChatMessage, ToolCall, ToolSpec
from memory.llm.base import tool_definition
from memory.records import ConversationTurn, Role
from tests.servers.searxng_server import SearxngShapedServer, running_searxng

TODAY = date(2026, 11, 29)
FACTS = (
    "I prefer tea over coffee",
    "My sister lives in Lyon",
    "I work as a nurse",
    "I have a cat called Miso",
    "I live in Brussels",
    "I'm learning Italian",
)
# (message, queries a good model writes; empty when no search is needed)
CONVERSATION: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("hi Mnemo!", ()),
    ("I prefer tea over coffee", ()),
    ("what's the weather in Paris?", ("weather in Paris today",)),
    ("and tomorrow?", ("Paris weather forecast 2026-11-30",)),
    ("thanks, I'll take an umbrella then", ()),
    ("I watched Amélie last night, the 2001 one with Audrey Tautou.", ()),
    ("who directed it?", ("Amélie 2001 film director",)),
    ("I loved the soundtrack", ()),
    ("my sister lives in Lyon", ()),
    ("how are you?", ()),
    ("what do you remember about my sister?", ()),
    ("actually I prefer coffee now", ()),
    ("I'm flying to Paris tomorrow", ()),
    ("what's 100 usd in eur?", ("100 usd in eur",)),
    ("cool, good night", ()),
    ("good morning!", ()),
    ("I started a new job at the hospital", ()),
    ("Is the Louvre open on Mondays?", ("Louvre opening days Monday",)),
    ("my cat knocked over my tea again", ()),
    ("can you recommend a book about Paris?", ()),
)
REPLY = "Here is my answer, with the sources I used: [1] https://example.org/source"


@dataclass
class Tally:
    decision_calls: int = 0
    answer_calls: int = 0
    prompt_chars: int = 0
    searches: int = 0

    def add(self, messages: Sequence[ChatMessage], *, decision: bool, extra: int = 0) -> None:
        self.prompt_chars += prompt_chars(messages) + extra
        if decision:
            self.decision_calls += 1
        else:
            self.answer_calls += 1


def prompt_chars(messages: Sequence[ChatMessage]) -> int:
    """Message texts, plus the JSON of the tool calls an assistant message carries."""
    calls = [call for message in messages for call in message.tool_calls]
    return sum(len(m.content) for m in messages) + sum(len(json.dumps(c.arguments)) for c in calls)


@dataclass
class CountingModel:
    """Answers from the labels and counts what it was sent; takes no tools."""

    tally: Tally
    queries: tuple[str, ...] = ()
    name: str = "counting"

    @property
    def model_name(self) -> str:
        return self.name

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        kind: CallKind = CallKind.REPLY,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float | None = None,
    ) -> str:
        # The schema is not counted: Ollama's format= and llama.cpp's json_schema constrain
        # decoding with a grammar, they are not prompt text.
        self.tally.add(messages, decision=json_schema is not None)
        if json_schema is None:
            return REPLY
        decision = SearchDecision(search=bool(self.queries), queries=list(self.queries))
        return decision.model_dump_json()

    async def aclose(self) -> None:
        return None


@dataclass
class CountingToolModel(CountingModel):
    """A model that takes tools: it calls web_search exactly when the label says so."""

    async def complete_with_tools(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec],
        *,
        temperature: float | None = None,
    ) -> AssistantTurn:
        definitions = len(json.dumps([tool_definition(tool) for tool in tools]))
        self.tally.add(messages, decision=False, extra=definitions)
        if messages[-1].role == "user" and self.queries:
            return AssistantTurn("", (ToolCall(TOOL_NAME, {"queries": list(self.queries)}),))
        return AssistantTurn(REPLY)


def reply_context(text: str, turns: list[ConversationTurn]) -> ReplyContext:
    return ReplyContext("Mnemo", "Alice", TODAY, FACTS, turns[-12:], text)


def add_turns(turns: list[ConversationTurn], text: str, reply: str) -> None:
    for role, content in ((Role.USER, text), (Role.ASSISTANT, reply)):
        turns.append(
            ConversationTurn(
                len(turns) + 1,
                "console:dm",
                "console:alice",
                role,
                content,
                datetime(2026, 11, 29, 9) + timedelta(minutes=len(turns)),
                None,
            )
        )


async def run(server: SearxngShapedServer, model: CountingModel, *, gated: bool) -> Tally:
    server.requests.clear()
    client = SearxngClient(server.base_url)
    advisor = SearxngAdvisor(model, client) if gated else SearxngAdvisor(model, client, gate=None)
    replier = Replier(model, advisor)
    turns: list[ConversationTurn] = []
    for text, queries in CONVERSATION:
        model.queries = queries
        reply = await replier.reply(reply_context(text, turns), forced_query=None)
        add_turns(turns, text, reply.text)
    await advisor.aclose()
    model.tally.searches = len(server.requests)
    return model.tally


def row(name: str, tally: Tally) -> str:
    count = len(CONVERSATION)
    calls = tally.decision_calls + tally.answer_calls
    return (
        f"| {name} | {calls / count:.2f} | {tally.decision_calls} | {tally.answer_calls} | "
        f"{tally.prompt_chars / count:,.0f} | {tally.searches} |"
    )


async def main() -> None:
    with running_searxng() as server:
        results = {
            "json-every": await run(server, CountingModel(Tally()), gated=False),
            "json-gated": await run(server, CountingModel(Tally()), gated=True),
            "tool-call": await run(server, CountingToolModel(Tally()), gated=True),
        }
    needing = sum(1 for _, queries in CONVERSATION if queries)
    print(
        f"{len(CONVERSATION)} messages, {needing} need the web ({needing / len(CONVERSATION):.0%})"
    )
    columns: tuple[str, ...] = ("strategy", "LLM calls / message", "decision calls", "answer calls")
    columns += ("prompt chars / message", "searches")
    print("| " + " | ".join(columns) + " |")
    print("|---" * len(columns) + "|")
    for name, tally in results.items():
        print(row(name, tally))


if __name__ == "__main__":
    asyncio.run(main())
