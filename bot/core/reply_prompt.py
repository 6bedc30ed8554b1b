"""The prompt of a chat reply: system prompt, recalled facts, recent turns, the message.

Recalled facts go into the system prompt as a labelled list, never as fake dialogue turns,
so the model cannot mistake a memory for something just said. When the reply call offers
the ``web_search`` tool, the system prompt says when to use it and how to write its queries.
The reply is free text, so there is no response model; the caller sends the messages as
they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from bot.websearch.tool import tool_guide
from memory.llm import ChatMessage
from memory.records import ConversationTurn, Role

PROMPT_VERSION = "reply-v2"

FACTS_HEADING = "What you remember about {name} (from earlier conversations):"
NO_FACTS = "You do not remember anything about {name} yet."
WEB_HEADING = (
    "Web search results for this question. Use them where they help, and cite the URLs of "
    "the results you use:"
)


@dataclass(frozen=True, slots=True)
class ReplyContext:
    """Everything the reply prompt is built from."""

    bot_name: str
    person_name: str
    today: date
    facts: Sequence[str]
    turns: Sequence[ConversationTurn]
    message: str
    web_section: str = ""
    is_direct: bool = True
    web_tool: bool = False


def system_prompt(context: ReplyContext) -> str:
    place = "a private chat" if context.is_direct else "a group chat room"
    lines = [
        f"You are {context.bot_name}, a friendly assistant talking with "
        f"{context.person_name} in {place}.",
        f"Today is {context.today:%A, %Y-%m-%d}.",
        "Answer in the language the person writes in. Be concise.",
        "Use what you remember when it is relevant; do not recite it unprompted, and do not "
        "claim to remember anything that is not listed below.",
        "",
        *fact_lines(context.person_name, context.facts),
    ]
    if context.web_tool:
        lines += ["", tool_guide(context.today)]
    if context.web_section:
        lines += ["", WEB_HEADING, context.web_section]
    return "\n".join(lines)


def fact_lines(person_name: str, facts: Sequence[str]) -> list[str]:
    if not facts:
        return [NO_FACTS.format(name=person_name)]
    return [FACTS_HEADING.format(name=person_name), *(f"- {fact}" for fact in facts)]


def turn_message(turn: ConversationTurn) -> ChatMessage:
    return ChatMessage("assistant" if turn.role is Role.ASSISTANT else "user", turn.text)


def build_messages(context: ReplyContext) -> list[ChatMessage]:
    return [
        ChatMessage("system", system_prompt(context)),
        *(turn_message(turn) for turn in context.turns),
        ChatMessage("user", context.message),
    ]
