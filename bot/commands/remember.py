""" "remember that ..." in plain words, and ``remember <text>`` as a command."""

from __future__ import annotations

import re

from bot.commands.arguments import required_text
from bot.commands.registry import CommandReply, CommandSpec, Invocation
from bot.commands.services import CommandServices
from memory.records import Action
from memory.write.pipeline import WriteOutcome

# "remember that ..." in the languages the write path is measured in; Japanese, which puts
# the verb last ("...と覚えておいて"), is not recognised and is learned like any message.
REMEMBER_THAT = re.compile(
    r"^\s*(?:"
    r"(?:please\s+|hey\s+)?remember\s+that\s*[:,]?\s"
    r"|(?:bitte\s+)?merke?\s+dir\s*(?:,?\s*dass\s|[:,])"
    r"|(?:souviens-toi|rappelle-toi|retiens)\s+qu(?:e\s|['\u2019])"
    r"|(?:por\s+favor,?\s+)?(?:recuerda|acuérdate\s+de)\s+que\s*[:,]?\s"
    r"|запомни\s*(?:,?\s*что\s|[:,])"
    r")\s*(?P<text>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)


def remember_that(text: str) -> str | None:
    """The fact in ``"remember that I have a cat"`` (``"I have a cat"``), or ``None``."""
    match = REMEMBER_THAT.match(text)
    if match is None:
        return None
    fact = match.group("text").strip().rstrip(".!").strip()
    return fact or None


def describe_remembered(fact_text: str, outcome: WriteOutcome) -> str:
    """What "remember that" did, in the person's terms (added, replaced, already known)."""
    for write in outcome.writes:
        if write.action is Action.UPDATE and write.fact is not None and write.target is not None:
            return (
                f'Got it, I\'ll remember "{write.fact.text}" (#{write.fact.id}) instead of '
                f'"{write.target.text}".'
            )
        if write.fact is not None and write.action is not Action.NONE:
            return f'Got it, I\'ll remember: "{write.fact.text}" (#{write.fact.id}).'
        if write.action is Action.NONE and write.target is not None:
            return f'I already remember that: #{write.target.id} "{write.target.text}".'
    return f'Got it, I\'ll remember: "{fact_text}".'


class RememberCommand:
    spec = CommandSpec("remember", "remember <fact>", "remember something exactly as you say it")

    def __init__(self, services: CommandServices) -> None:
        self._services = services

    async def run(self, invocation: Invocation) -> CommandReply:
        text = required_text(
            invocation.arguments, invocation.usage(self.spec), "What should I remember?"
        )
        fact_text = remember_that(text) or text.rstrip(".!").strip()
        outcome = await self._services.writer.remember(invocation.scope, fact_text)
        return CommandReply(describe_remembered(fact_text, outcome), private=False)
