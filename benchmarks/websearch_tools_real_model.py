"""The web_search tool against a REAL model: does it call the tool as structured
``tool_calls``, write the call as text, or answer, and do its queries name their topic?

    MNEMO_DEV_LLM=1.5b ../shared/llm/serve.sh 18436     # llama.cpp, --jinja: tool calls
    .venv/bin/python -m benchmarks.websearch_tools_real_model \\
        --base-url http://127.0.0.1:18436/v1 --model qwen2.5-coder-1.5b-instruct

Each case is the first round of a reply with the tool offered, as the bot sends it: the real
reply prompt with the tool's guide (``web_tool=True``) and the ``web_search`` definition, at
temperature 0. The raw answer tells a structured call (``message.tool_calls``) from a call
written in the text (found as the bot finds it, :func:`calls_in_text`); the bot's reading of
the answer (:func:`assistant_turn`, :func:`read_call`) gives the queries. Cases: questions
that need the web, alone and as follow-ups (the follow-ups of
``benchmarks.websearch_decision_real_model``, "resolved" when a query names their topic), and
messages that do not (small talk, a remembered fact, an opinion), where any call is one too
many.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import Counter
from dataclasses import dataclass

import httpx

from benchmarks.real_model import server_arguments
from benchmarks.websearch_decision_real_model import FOLLOW_UPS, Case
from bot.core.reply_prompt import ReplyContext, build_messages
from bot.websearch.tool import TOOL_NAME, WEB_SEARCH_TOOL, read_call
from memory.llm.base import tool_definition
from memory.llm.openai_backend import answer_message, assistant_turn, message_body
from memory.llm.text_tool_calls import calls_in_text
from tests.bot.websearch.turns import TODAY, in_room

NEEDS_WEB = (
    Case("weather", (), "what's the weather in Berlin today?", ("berlin",)),
    Case("race", (), "who won the last Formula 1 race?", ("formula", "f1", "race")),
    Case("price", (), "what does a bitcoin cost right now?", ("bitcoin",)),
    Case("hours", (), "when does the Rijksmuseum open on Sundays?", ("rijksmuseum",)),
)
NO_WEB = (
    Case("thanks", (), "thanks, that's all for now!", ()),
    Case("greeting", (), "hi! how are you doing?", ()),
    Case("fact", (), "what's my dog called?", ()),
    Case("opinion", (), "cats or dogs, which do you like better?", ()),
)
FACTS = ("My dog is called Pepper",)


@dataclass(frozen=True, slots=True)
class Answer:
    shape: str  # "structured", "text" or "answer"
    queries: tuple[str, ...]


async def first_round(client: httpx.AsyncClient, model: str, case: Case) -> Answer:
    context = ReplyContext(
        bot_name="Mnemo",
        person_name="Alice",
        today=TODAY,
        facts=FACTS,
        turns=in_room(*case.lines),
        message=case.question,
        web_tool=True,
    )
    body = {
        "model": model,
        "messages": [message_body(message) for message in build_messages(context)],
        "tools": [tool_definition(WEB_SEARCH_TOOL)],
        "temperature": 0,
        "seed": 0,
        "max_tokens": 512,
    }
    response = await client.post("/chat/completions", json=body)
    response.raise_for_status()
    payload = response.json()
    raw = answer_message(payload)
    if raw.get("tool_calls"):
        shape = "structured"
    elif calls_in_text(raw.get("content") or "", [TOOL_NAME]).calls:
        shape = "text"
    else:
        shape = "answer"
    turn = assistant_turn(payload, [WEB_SEARCH_TOOL])
    readings = [read_call(call) for call in turn.tool_calls]
    queries = tuple(q for r in readings if r.arguments for q in r.arguments.queries)
    shown = list(queries) if shape != "answer" else repr(turn.text[:80])
    print(f"  {case.name:9} {shape:10} {shown}")
    return Answer(shape, queries)


def resolved(case: Case, answer: Answer) -> bool:
    return any(word in query.lower() for query in answer.queries for word in case.about)


async def run(base_url: str, model: str) -> None:
    print(f"load average at the start: {os.getloadavg()[0]:.1f}")
    async with httpx.AsyncClient(base_url=base_url, timeout=900) as client:
        for title, cases in (("needs the web", NEEDS_WEB + FOLLOW_UPS), ("no web", NO_WEB)):
            print(title)
            answers = [await first_round(client, model, case) for case in cases]
            shapes = Counter(answer.shape for answer in answers)
            named = sum(resolved(case, answer) for case, answer in zip(cases, answers, strict=True))
            print(
                f"  {title}: {len(cases)} cases, structured calls {shapes['structured']}, "
                f"calls as text {shapes['text']}, answered {shapes['answer']}, "
                f"queries naming the topic {named}"
            )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = server_arguments(__doc__ or "")
    arguments = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(run(arguments.base_url, arguments.model))


if __name__ == "__main__":
    main()
