"""LLM calls per message for web search: one JSON decision call, or a tool call.

Runs a labelled 20-message personal conversation through three strategies and prints, per
message on average, the LLM calls and the characters of prompt sent:

- ``json-every``: the search-decision JSON call on every message, then the answer call;
- ``json-gated``: the same, but the cheap gate skips the decision for plain statements
  (what :class:`bot.websearch.SearxngAdvisor` does by default);
- ``tool-call``: the answer call carries a ``web_search`` tool; a message that needs the web
  costs a second answer call with the tool's results (how Ollama/OpenAI tool calling works).

The model's judgement is scripted from the labels (a test double: no LLM runs here), so the
counts are exact for a model that judges like the labels; the prompts are the real ones
(decision prompt, the core's reply prompt, the formatted results from a SearXNG-shaped
server on 127.0.0.1), so the character counts are real, except that a tool's definition is
counted as its JSON (a chat template adds its own words around it: a lower bound). Usage:

    .venv/bin/python -m benchmarks.websearch_llm_calls
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from bot.core.reply_prompt import ReplyContext, build_messages
from bot.websearch import SearxngAdvisor, SearxngClient
from bot.websearch.base import WebContext
from bot.websearch.decision_prompt import SearchDecision
from memory.llm import ChatMessage
from memory.records import ConversationTurn, Role
from tests.servers.searxng_server import running_searxng

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
WEB_SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "web_search",
        "description": "Search the web for current or outside information.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "standalone query"}},
            "required": ["query"],
        },
    },
}


@dataclass
class Tally:
    decision_calls: int = 0
    answer_calls: int = 0
    prompt_chars: int = 0
    searches: int = 0

    def add(self, messages: Sequence[ChatMessage], *, decision: bool, extra: int = 0) -> None:
        self.prompt_chars += sum(len(message.content) for message in messages) + extra
        if decision:
            self.decision_calls += 1
        else:
            self.answer_calls += 1


@dataclass
class CountingModel:
    """Answers the decision prompt from the labels and counts what it was sent."""

    tally: Tally
    queries: tuple[str, ...] = ()
    name: str = "counting"
    seen: list[int] = field(default_factory=list)

    @property
    def model_name(self) -> str:
        return self.name

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_schema: object = None,
        temperature: object = None,
    ) -> str:
        # The schema is not counted: Ollama's format= and llama.cpp's json_schema constrain
        # decoding with a grammar, they are not prompt text.
        self.tally.add(messages, decision=True)
        return SearchDecision(
            search=bool(self.queries), queries=list(self.queries)
        ).model_dump_json()

    async def aclose(self) -> None:
        return None


def reply_messages(text: str, turns: list[ConversationTurn], web: str) -> list[ChatMessage]:
    context = ReplyContext("Mnemo", "Alice", TODAY, FACTS, turns[-12:], text, web_section=web)
    return build_messages(context)


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


REPLY = "Here is my answer, with the sources I used: [1] https://example.org/source"


async def run_json(base_url: str, *, gated: bool) -> Tally:
    tally = Tally()
    model = CountingModel(tally)
    client = SearxngClient(base_url)
    advisor = SearxngAdvisor(model, client) if gated else SearxngAdvisor(model, client, gate=None)
    turns: list[ConversationTurn] = []
    for text, queries in CONVERSATION:
        model.queries = queries
        web = await advisor.context_for(text, turns, TODAY)
        tally.searches += len(web.queries) if web else 0
        section = web.prompt_section if web else ""
        tally.add(reply_messages(text, turns, section), decision=False)
        add_turns(turns, text, REPLY)
    await advisor.aclose()
    return tally


async def run_tool_calls(base_url: str) -> Tally:
    tally = Tally()
    tool_chars = len(json.dumps([WEB_SEARCH_TOOL]))
    client = SearxngClient(base_url)
    # The advisor is used only to run the searches and format results, as a tool would.
    advisor = SearxngAdvisor(CountingModel(Tally()), client)
    turns: list[ConversationTurn] = []
    for text, queries in CONVERSATION:
        first = reply_messages(text, turns, "")
        tally.add(first, decision=False, extra=tool_chars)
        if queries:
            web: WebContext | None = await advisor.context_for(
                text, turns, TODAY, forced_query=queries[0]
            )
            tally.searches += 1
            call = json.dumps({"name": "web_search", "arguments": {"query": queries[0]}})
            result = web.prompt_section if web else ""
            second = [*first, ChatMessage("assistant", call), ChatMessage("user", result)]
            tally.add(second, decision=False, extra=tool_chars)
        add_turns(turns, text, REPLY)
    await advisor.aclose()
    return tally


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
            "json-every": await run_json(server.base_url, gated=False),
            "json-gated": await run_json(server.base_url, gated=True),
            "tool-call": await run_tool_calls(server.base_url),
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
