"""The prompt of a chat reply: system prompt, recalled facts, recent turns, the message.

Recalled facts go into the system prompt as a labelled block about the person, in the third
person (:mod:`bot.core.fact_block`), never as fake dialogue turns, so the model cannot
mistake a memory for something just said or for its own voice. In a group room several people
talk with the bot: each person's turn starts with their name, and the messages the person
replies to (not addressed to the bot, so not turns) are a labelled list too. When the reply
call offers the ``web_search`` tool, the system prompt says when to use it and how to write its
queries.
The reply is free text, so there is no response model; the caller sends the messages as
they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from bot.core.fact_block import fact_block
from bot.messages import QuotedMessage
from bot.websearch.tool import tool_guide
from memory.llm import ChatMessage
from memory.records import ConversationTurn, Role

PROMPT_VERSION = "reply-v4"

GROUP_NOTE = (
    "Several people talk with you here: each of their messages starts with the speaker's "
    "name. The notes below are about {name} only."
)
QUOTED_HEADING = "The message replies to these earlier messages (oldest first):"
SOMEONE = "Someone"
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
    quoted: Sequence[QuotedMessage] = ()


def system_prompt(context: ReplyContext) -> str:
    place = "a private chat" if context.is_direct else "a group chat room"
    lines = [
        f"You are {context.bot_name}, a friendly assistant talking with "
        f"{context.person_name} in {place}.",
        f"Today is {context.today:%A, %Y-%m-%d}.",
        "Answer in the language the person writes in. Be concise.",
        f"You are the assistant, not {context.person_name}: the notes below are about "
        f"{context.person_name}, not things said now. Use them when they are relevant; do "
        "not recite them unprompted, and do not claim to know anything that is not listed.",
    ]
    if not context.is_direct:
        lines.append(GROUP_NOTE.format(name=context.person_name))
    lines += ["", *fact_block(context.person_name, context.facts, context.message)]
    if context.quoted:
        lines += ["", QUOTED_HEADING, *quoted_lines(context.bot_name, context.quoted)]
    if context.web_tool:
        lines += ["", tool_guide(context.today)]
    if context.web_section:
        lines += ["", WEB_HEADING, context.web_section]
    return "\n".join(lines)


def quoted_lines(bot_name: str, quoted: Sequence[QuotedMessage]) -> list[str]:
    return [
        f"- {bot_name if quote.from_bot else quote.author_name} "
        f"({quote.time:%Y-%m-%d %H:%M}): {quote.text}"
        for quote in quoted
    ]


def turn_message(turn: ConversationTurn, *, attributed: bool = False) -> ChatMessage:
    if turn.role is Role.ASSISTANT:
        return ChatMessage("assistant", turn.text)
    if not attributed:
        return ChatMessage("user", turn.text)
    return ChatMessage("user", f"{turn.author_name or SOMEONE}: {turn.text}")


def build_messages(context: ReplyContext) -> list[ChatMessage]:
    attributed = not context.is_direct
    message = context.message if context.is_direct else f"{context.person_name}: {context.message}"
    return [
        ChatMessage("system", system_prompt(context)),
        *(turn_message(turn, attributed=attributed) for turn in context.turns),
        ChatMessage("user", message),
    ]
