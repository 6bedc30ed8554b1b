"""A whole Mnemo with web search on a SearXNG-shaped server, for end-to-end tests.

Real parts: the core, SQLite, LanceDB, the all-MiniLM-L6-v2 embedder, the memory writer, the
SearxngAdvisor and SearxngClient built by the composition root from ``search.searxng_url``,
and a SearXNG-shaped server on 127.0.0.1. The only double is the model's judgement
(:class:`WebMind`), answering each kind of call as a real model would.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.config import Config
from bot.websearch.decision_prompt import SYSTEM_PROMPT as SEARCH_DECISION_PROMPT
from bot.websearch.tool import GUIDE, TOOL_NAME
from memory.embedding import Embedder
from memory.llm import AssistantTurn, ChatMessage, RecordedCall, ScriptedLanguageModel, ToolCall
from memory.records import Fact, FactStatus
from memory.scope import Scope, ScopeMode
from tests.bot.core.harness import Harness, ScriptedMind, extraction_calls, open_harness
from tests.servers.searxng_server import SearxngShapedServer

# The part of the search-decision system prompt before its first placeholder.
SEARCH_DECISION_OPENING = SEARCH_DECISION_PROMPT.split("{", 1)[0]
# The first sentence of the reply prompt's paragraph about the web_search tool.
TOOL_GUIDE_OPENING = GUIDE.split(".", 1)[0]
TIMEANDDATE = "https://www.timeanddate.com/weather/france/paris"
METEOFRANCE = "https://www.meteofrance.com/previsions-meteo-france/paris/75000"
WIKIPEDIA_AMELIE = "https://en.wikipedia.org/wiki/Am%C3%A9lie"
ALICE_DM = Scope("matrix:alice", "matrix:dm", ScopeMode.USER_ROOM)


def search(*queries: str) -> str:
    """A JSON search decision, as a model answering the decision schema sends it."""
    return json.dumps({"search": bool(queries), "queries": list(queries), "time_range": None})


def web_search_call(*queries: str, **more: Any) -> AssistantTurn:
    """An assistant turn that calls the web_search tool, as Ollama/OpenAI report it."""
    return AssistantTurn("", (ToolCall(TOOL_NAME, {"queries": list(queries), **more}),))


def offers_tools(messages: Sequence[ChatMessage]) -> bool:
    return TOOL_GUIDE_OPENING in messages[0].content


@dataclass
class WebMind(ScriptedMind):
    """:class:`ScriptedMind` that also answers the web search calls.

    ``searches``: the JSON search decisions, in order (the fallback path). ``tool_turns``:
    for a person's message, what the model answers in a reply call that offers the tool
    (a message not listed gets a direct answer from ``replies``). ``answer_turns``: the
    answers after tool results, in order, before ``replies`` (for scripted mistakes).
    """

    searches: list[str] = field(default_factory=list)
    tool_turns: dict[str, AssistantTurn] = field(default_factory=dict)
    answer_turns: list[AssistantTurn] = field(default_factory=list)

    def answer(self, messages: Sequence[ChatMessage]) -> str | AssistantTurn:
        if messages[0].content.startswith(SEARCH_DECISION_OPENING):
            return self.searches.pop(0)
        last = messages[-1]
        if last.role == "user" and offers_tools(messages) and last.content in self.tool_turns:
            return self.tool_turns.pop(last.content)
        if last.role == "tool" and self.answer_turns:
            return self.answer_turns.pop(0)
        return self(messages)


def search_decision_calls(llm: ScriptedLanguageModel) -> list[RecordedCall]:
    return [c for c in llm.calls if c.messages[0].content.startswith(SEARCH_DECISION_OPENING)]


def config_for(data_dir: Path, searxng_url: str, **search: object) -> Config:
    settings = {"searxng_url": searxng_url, "timeout_seconds": 0.5, "language": "en", **search}
    return Config.model_validate({"storage": {"data_dir": str(data_dir)}, "search": settings})


@dataclass
class WebBot:
    harness: Harness
    mind: WebMind
    searxng: SearxngShapedServer

    @property
    def llm(self) -> ScriptedLanguageModel:
        return self.harness.llm

    async def say(self, user: str, text: str, *, room: str | None = None) -> str:
        return await self.harness.say(user, text, room=room)

    async def active_facts(self) -> list[str]:
        """Every active fact in the store, whoever owns it (test inspection only)."""
        facts = await self.harness.app.store.read(lambda tx: tx.facts.admin_active_facts())
        return [fact.text for fact in facts]

    async def alice_facts(self, status: FactStatus) -> list[Fact]:
        return await self.harness.app.store.read(
            lambda tx: tx.facts.list_in_scope(ALICE_DM, statuses=(status,))
        )


async def open_web_bot(
    tmp_path: Path, embedder: Embedder, searxng: SearxngShapedServer, *, supports_tools: bool
) -> WebBot:
    mind = WebMind()
    config = config_for(tmp_path / "data", searxng.base_url)
    harness = await open_harness(
        tmp_path, embedder, config=config, mind=mind, supports_tools=supports_tools
    )
    return WebBot(harness, mind, searxng)


def assert_write_path_saw_only_user_words(bot: WebBot, user_messages: Sequence[str]) -> None:
    """Every extraction prompt is the fixed system prompt plus one of the person's messages."""
    calls = extraction_calls(bot.llm)
    assert [call.messages[-1].content for call in calls] == list(user_messages)
    for call in calls:
        assert len(call.messages) == 2
        assert "http" not in call.prompt_text
        assert "Web search results" not in call.prompt_text
