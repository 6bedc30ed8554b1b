"""The plumbing against a REAL server and model: llama.cpp's ``llama-server`` with
Qwen2.5-Coder-0.5B-Instruct from ``../shared/llm``.

These tests assert formats and handling (a JSON answer for every call kind that parses, a
cut answer raised as such, no call JSON in what a person sees, a refusal of tools, the
wrong-provider message), never the tiny model's judgement. Marked ``real_llm``:
``scripts/test.sh`` runs them when ``../shared/llm`` exists (CONTRIBUTING.md).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, date, datetime

import pytest

from bot.config import Config
from bot.core.reply_prompt import ReplyContext
from bot.core.replying import CUT_NOTE, Replier
from bot.doctor.base import CheckStatus
from bot.doctor.llm import LanguageModelCheck
from bot.websearch.advisor import SearxngAdvisor
from bot.websearch.base import GroupRoom, WebContext
from bot.websearch.fixed import FixedWebSearchAdvisor
from bot.websearch.searxng import SearxngClient
from bot.websearch.tool import TOOL_NAME, WEB_SEARCH_TOOL
from memory.consolidation.judge import judge_batch
from memory.consolidation.pairs import CandidatePair
from memory.llm import (
    AnswerCut,
    CallKind,
    ChatMessage,
    TokenBudgets,
    ToolsNotSupported,
    WrongProvider,
)
from memory.llm.ollama_backend import OllamaLanguageModel
from memory.llm.openai_backend import OpenAILanguageModel
from memory.records import Fact, FactSource, FactStatus
from memory.write.combined import extract_and_decide
from memory.write.decision import decide
from memory.write.errors import UnusableModelOutput
from memory.write.extraction import Extraction, extract_facts
from memory.write.parsing import ask, parse_answer
from memory.write.prompts import extraction as extraction_prompt
from memory.write.prompts.decision import DecisionItem
from memory.write.prompts.extraction import ExtractionResponse
from tests.bot.websearch.turns import HIJACKED_WEATHER
from tests.servers.llama import MODEL, SHARED_LLM, LlamaServer

pytestmark = pytest.mark.real_llm

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
# Enough for the JSON answers even pretty-printed (the model indents them), small enough that
# a runaway reply ends within seconds.
BUDGETS = TokenBudgets(reply=160, extraction=400, decision=256, search_decision=200, judge=200)


def asking(text: str) -> ReplyContext:
    return ReplyContext("Mnemo", "Alice", date(2026, 11, 29), [], [], text)


def started(*flags: str) -> Iterator[LlamaServer]:
    if not SHARED_LLM.is_dir():
        message = f"no real model server here: {SHARED_LLM} is missing"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    server = LlamaServer.start(*flags)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def llama() -> Iterator[LlamaServer]:
    yield from started()


@pytest.fixture(scope="module")
def llama_without_tools() -> Iterator[LlamaServer]:
    """The same server started without ``--jinja``: it refuses requests that offer tools."""
    yield from started("--no-jinja")


@pytest.fixture
async def model(llama: LlamaServer) -> AsyncIterator[OpenAILanguageModel]:
    opened = OpenAILanguageModel(
        MODEL, base_url=llama.base_url, budgets=BUDGETS, seed=0, timeout=600
    )
    yield opened
    await opened.aclose()


def fact(fact_id: int, text: str) -> Fact:
    return Fact(
        fact_id, "console:alice", "console:dm", text, "other", FactStatus.ACTIVE,
        FactSource.STATED, NOW, None, None, None, None, "m",
    )  # fmt: skip


async def test_extraction_answers_json_of_the_schema(model: OpenAILanguageModel) -> None:
    for message in ("I moved to Berlin last month.", "Where do I live?"):
        extraction = await extract_facts(model, message, NOW)
        assert isinstance(extraction, Extraction)
    # Whatever it proposed for the question, nothing of it may be written.
    assert extraction.facts == []


async def test_combined_extraction_answers_json_of_the_schema(
    model: OpenAILanguageModel,
) -> None:
    known = [fact(7, "I live in Paris")]
    extraction = await extract_and_decide(model, "I moved to Berlin.", NOW, known)
    # It parses (or raises); each decision, if any, names the one fact listed or none.
    for proposed in extraction.facts:
        assert proposed.decision is None or proposed.decision.shown == {7}


async def test_the_second_ask_for_facts_in_the_message_words_answers_json_of_the_schema(
    model: OpenAILanguageModel,
) -> None:
    message = "J'ai 30 ans maintenant."
    first = '{"facts": [{"text": "I am 30 years old now.", "category": "identity", "when": null}]}'
    again = [
        *extraction_prompt.build_messages(message),
        ChatMessage("assistant", first),
        ChatMessage("user", extraction_prompt.in_their_words(["I am 30 years old now."])),
    ]
    schema = extraction_prompt.json_schema()
    answer = await ask(model, CallKind.EXTRACTION, again, schema)
    # It parses; whether the facts are now in French is the model's judgement.
    assert isinstance(parse_answer("extraction", answer, ExtractionResponse), ExtractionResponse)


async def test_decision_answers_json_of_the_schema(model: OpenAILanguageModel) -> None:
    items = [DecisionItem(1, "I live in Berlin", ("I live in Paris", "My sister lives in Lyon"))]
    # It parses (or decide() raises); which action it picks is the model's judgement.
    decided = await decide(model, items)
    assert len(decided) == 1


async def test_search_decision_answers_json_of_the_schema(
    model: OpenAILanguageModel, caplog: pytest.LogCaptureFixture
) -> None:
    # The engine is never asked: decide() only writes the plan.
    advisor = SearxngAdvisor(model, SearxngClient("http://127.0.0.1:9"), gate=None)
    try:
        await advisor.decide("What is the weather in Paris tomorrow?", [], NOW.date())
        # A group room's quoted transcript (search-decision/3) gets a JSON answer too.
        room = GroupRoom("Mnemo", "Alice")
        await advisor.decide("and tomorrow?", HIJACKED_WEATHER, NOW.date(), room)
    finally:
        await advisor.aclose()
    assert "is not the expected JSON" not in caplog.text
    assert "search decision call failed" not in caplog.text


async def test_judge_answers_json_of_the_schema(model: OpenAILanguageModel) -> None:
    pair = CandidatePair(fact(1, "I live in Paris"), fact(2, "I live in Berlin"), 0.6)
    verdicts = await judge_batch(model, [pair])
    assert verdicts.verdicts is not None


async def test_a_cut_answer_is_raised_and_a_cut_json_is_unusable(llama: LlamaServer) -> None:
    # A reply budget of 2 tokens: any answer of the model is longer (8 left a short one whole).
    tiny = TokenBudgets(reply=2, extraction=8, decision=8, search_decision=8, judge=8)
    model = OpenAILanguageModel(MODEL, base_url=llama.base_url, budgets=tiny, timeout=600)
    try:
        with pytest.raises(AnswerCut) as cut:
            await model.complete([ChatMessage("user", "Count from one to one hundred in words.")])
        with pytest.raises(UnusableModelOutput, match="budget of 8 tokens"):
            await extract_facts(model, "I have a dog named Rex and I work as a nurse.", NOW)
    finally:
        await model.aclose()
    assert cut.value.kind is CallKind.REPLY and cut.value.text.strip()


async def test_a_reply_cut_at_the_budget_is_sent_with_the_note(llama: LlamaServer) -> None:
    tiny = TokenBudgets(reply=12)
    model = OpenAILanguageModel(MODEL, base_url=llama.base_url, budgets=tiny, timeout=600)
    long_question = asking("Tell me a long story about a dragon.")
    try:
        reply = await Replier(model, None, temperature=0).reply(long_question, forced_query=None)
    finally:
        await model.aclose()
    assert reply.notice == CUT_NOTE and reply.text


async def test_no_tool_call_json_reaches_the_person(model: OpenAILanguageModel) -> None:
    """The model writes its call as text (seen: bare JSON); it is run or dropped, never shown."""
    web = FixedWebSearchAdvisor(WebContext(("Paris weather",), "[1] Paris: rain, 9 °C"))
    reply = await Replier(model, web, temperature=0).reply(
        asking("What is the weather in Paris tomorrow?"), forced_query=None
    )
    assert f'"{TOOL_NAME}"' not in reply.text and "<tool_call>" not in reply.text
    assert '"arguments"' not in reply.text


async def test_a_server_refusing_tools_is_named_and_the_reply_falls_back(
    llama_without_tools: LlamaServer,
) -> None:
    model = OpenAILanguageModel(
        MODEL, base_url=llama_without_tools.base_url, budgets=BUDGETS, timeout=600
    )
    try:
        with pytest.raises(ToolsNotSupported):
            await model.complete_with_tools(
                [ChatMessage("user", "weather in Paris?")], [WEB_SEARCH_TOOL]
            )
    finally:
        await model.aclose()


async def test_ollama_provider_at_the_llama_server_is_named_with_the_fix(
    llama: LlamaServer,
) -> None:
    model = OllamaLanguageModel(MODEL, host=llama.origin)
    try:
        with pytest.raises(WrongProvider, match=r'set llm.provider = "openai"'):
            await model.complete([ChatMessage("user", "hi")])
    finally:
        await model.aclose()
    config = Config.model_validate(
        {"llm": {"provider": "ollama", "base_url": llama.origin, "model": MODEL}}
    )
    result = await LanguageModelCheck()(config)
    assert result.status is CheckStatus.FAIL
    assert f'llm.provider = "openai" and llm.base_url = "{llama.base_url}"' in result.detail
