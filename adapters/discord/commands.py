"""The ``/memory`` slash command group and ``/search``, as thin forwards to the core.

Each callback turns its options into the text command the core understands
(``/memory forget 3``), so the commands' meaning lives in one place (``bot``), whatever
platform they come from. Every callback defers at once: the core may embed, search or ask
the LLM, and Discord drops an interaction that is not answered within 3 seconds. A public
command's answer (``/search``) is streamed into its follow-up as the model writes it.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import replace
from typing import Any

import discord
from discord import app_commands

from adapters.discord.access import AccessPolicy
from adapters.discord.delivery import respond_to_interaction
from adapters.discord.normalise import incoming_from_interaction, place_of_interaction, role_ids
from adapters.discord.ports import ConversationCore
from adapters.discord.streaming import DiscordParts, following_up
from bot.messages import OutgoingMessage
from bot.streaming import PacedAnswer

logger = logging.getLogger(__name__)

MAX_CHOICES = 25
# Discord drops an autocomplete answer after 3 s; leave room for the trip back.
AUTOCOMPLETE_BUDGET_SECONDS = 2.5
MAX_CHOICE_NAME = 100
FAILURE_TEXT = (
    "Something went wrong on my side and I could not do that. Nothing you told me is lost; "
    "the operator's log has the details."
)
NOT_ALLOWED_TEXT = "Sorry, I am not set up to talk with you here."
# Where a slash command may be used: servers the bot is in, and DMs with the bot. Not as a
# user-installed app in other people's servers or group DMs, where the bot cannot follow.
CONTEXTS = {"guilds": True, "dms": True, "private_channels": False}


def choice_label(label: str) -> str:
    """The core's label on one line, cut to the 100 characters Discord allows."""
    flat = " ".join(label.split()) or "?"
    return flat if len(flat) <= MAX_CHOICE_NAME else flat[: MAX_CHOICE_NAME - 1] + "…"


def in_discord_terms(text: str) -> str:
    """Point usage hints at the slash command's own form.

    The core speaks in typed commands ("send /memory forget all confirm"); on Discord that
    step is the ``forget-all`` sub-command with its ``confirm`` option.
    """
    text = text.replace("/memory forget all confirm", "/memory forget-all confirm: True")
    return re.sub(r"/memory forget all\b", "/memory forget-all", text)


class CommandRunner:
    """Runs one slash command through the core and answers it; ``stream_interval`` as for
    :class:`~adapters.discord.handler.MessageHandler`."""

    def __init__(
        self,
        core: ConversationCore,
        *,
        autocomplete_budget_seconds: float = AUTOCOMPLETE_BUDGET_SECONDS,
        stream_interval: float | None = None,
    ) -> None:
        self._core = core
        self._autocomplete_budget = autocomplete_budget_seconds
        self._stream_interval = stream_interval

    async def run(self, interaction: discord.Interaction, text: str, *, ephemeral: bool) -> None:
        await interaction.response.defer(ephemeral=ephemeral, thinking=True)
        message = incoming_from_interaction(interaction, text)
        answer = None
        if self._stream_interval is not None and not ephemeral:
            answer = PacedAnswer(DiscordParts(following_up(interaction)), self._stream_interval)
            message = replace(message, stream=answer)
        try:
            replies = await self._core.handle(message)
        except Exception:
            # A command must always get an answer, or "thinking..." spins forever; the
            # traceback is for the operator, not the person.
            logger.exception("the core failed on %r from %s", text, message.user_key)
            replies = [OutgoingMessage(FAILURE_TEXT, message.room_key, private=True)]
        replies = [replace(reply, text=in_discord_terms(reply.text)) for reply in replies]
        public = bool(replies) and not replies[0].private
        if answer is not None and public and await answer.finish(replies[0].text):
            # The answer was streamed into the follow-up; anything after it goes as usual.
            replies = replies[1:]
            if not replies:
                return
        await respond_to_interaction(interaction, replies, ephemeral=ephemeral)

    async def fact_choices(
        self, interaction: discord.Interaction, typed: str
    ) -> list[app_commands.Choice[int]]:
        """The caller's own facts in this room; the core applies the scope in its query."""
        message = incoming_from_interaction(interaction, "")
        try:
            async with asyncio.timeout(self._autocomplete_budget):
                found = await self._core.fact_choices(message, typed)
        except TimeoutError:
            # Autocomplete cannot be deferred: a late answer is dropped by Discord and the
            # person sees "Loading options failed". No suggestions, in time, is better; the
            # number can still be typed.
            logger.warning(
                "fact autocomplete for %s took over %.1f s; answered with no suggestions",
                message.user_key,
                self._autocomplete_budget,
            )
            return []
        except Exception:
            logger.exception("fact autocomplete failed for %s", message.user_key)
            return []
        return [
            app_commands.Choice(name=choice_label(label), value=number)
            for number, label in found[:MAX_CHOICES]
        ]


@app_commands.allowed_contexts(**CONTEXTS)
@app_commands.allowed_installs(guilds=True, users=False)
class MemoryCommands(app_commands.Group):
    """``/memory``: what the bot remembers about you. Every reply is ephemeral."""

    def __init__(self, runner: CommandRunner) -> None:
        super().__init__(
            name="memory", description="See, search and delete what I remember about you"
        )
        self._runner = runner

    async def _run(self, interaction: discord.Interaction, text: str) -> None:
        await self._runner.run(interaction, text, ephemeral=True)

    async def _facts(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[int]]:
        return await self._runner.fact_choices(interaction, current)

    @app_commands.command(name="list", description="List what I remember about you here")
    @app_commands.describe(page="Page number, for long lists")
    async def list_facts(
        self, interaction: discord.Interaction, page: app_commands.Range[int, 1, 1000] | None = None
    ) -> None:
        await self._run(interaction, "/memory list" if page is None else f"/memory list {page}")

    @app_commands.command(name="search", description="Search what I remember about you")
    @app_commands.describe(query="What to look for")
    async def search(
        self, interaction: discord.Interaction, query: app_commands.Range[str, 1, 200]
    ) -> None:
        await self._run(interaction, f"/memory search {query}")

    @app_commands.command(name="forget", description="Forget one fact for good")
    @app_commands.describe(fact="The fact's number from /memory list")
    async def forget(
        self, interaction: discord.Interaction, fact: app_commands.Range[int, 1, None]
    ) -> None:
        await self._run(interaction, f"/memory forget {fact}")

    @forget.autocomplete("fact")
    async def _forget_choices(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[int]]:
        return await self._facts(interaction, current)

    @app_commands.command(name="forget-all", description="Forget everything about you here")
    @app_commands.describe(confirm="Set to True to really forget everything")
    async def forget_all(self, interaction: discord.Interaction, confirm: bool = False) -> None:
        await self._run(interaction, forget_all_text(confirm))

    @app_commands.command(name="undo", description="Undo my last automatic change to your memory")
    async def undo(self, interaction: discord.Interaction) -> None:
        await self._run(interaction, "/memory undo")

    @app_commands.command(name="history", description="How one fact changed over time")
    @app_commands.describe(fact="The fact's number from /memory list")
    async def history(
        self, interaction: discord.Interaction, fact: app_commands.Range[int, 1, None]
    ) -> None:
        await self._run(interaction, f"/memory history {fact}")

    @history.autocomplete("fact")
    async def _history_choices(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[int]]:
        return await self._facts(interaction, current)

    @app_commands.command(name="export", description="Download what I remember as a JSON file")
    async def export(self, interaction: discord.Interaction) -> None:
        await self._run(interaction, "/memory export")

    @app_commands.command(name="pause", description="Stop learning from your messages")
    async def pause(self, interaction: discord.Interaction) -> None:
        await self._run(interaction, "/memory pause")

    @app_commands.command(name="resume", description="Learn from your messages again")
    async def resume(self, interaction: discord.Interaction) -> None:
        await self._run(interaction, "/memory resume")

    @app_commands.command(name="help", description="How the memory commands work")
    async def help(self, interaction: discord.Interaction) -> None:
        await self._run(interaction, "/memory help")


def forget_all_text(confirm: bool) -> str:
    return "/memory forget all confirm" if confirm else "/memory forget all"


def search_command(runner: CommandRunner) -> app_commands.Command[Any, ..., None]:
    """``/search``: a forced web search. Public, like any answer in the channel."""

    @app_commands.command(name="search", description="Search the web and answer from the results")
    @app_commands.describe(query="What to search for")
    @app_commands.allowed_contexts(**CONTEXTS)
    @app_commands.allowed_installs(guilds=True, users=False)
    async def search(
        interaction: discord.Interaction, query: app_commands.Range[str, 1, 300]
    ) -> None:
        await runner.run(interaction, f"/search {query}", ephemeral=False)

    return search


class MnemoCommandTree(app_commands.CommandTree[discord.Client]):
    """The command tree, with the allow-lists checked before any command or autocomplete."""

    def __init__(self, client: discord.Client, policy: AccessPolicy) -> None:
        super().__init__(client)
        self._policy = policy

    def allows(self, interaction: discord.Interaction) -> bool:
        place = place_of_interaction(interaction)
        return self._policy.allows(
            interaction.user.id,
            role_ids(interaction.user),
            place.gate_ids,
            is_direct=place.is_direct,
        )

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        if self.allows(interaction):
            return True
        logger.info("refused an interaction from %s (allow-lists)", interaction.user.id)
        if interaction.type is discord.InteractionType.autocomplete:
            await interaction.response.autocomplete([])
        else:
            await interaction.response.send_message(NOT_ALLOWED_TEXT, ephemeral=True)
        return False

    async def on_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError, /
    ) -> None:
        logger.error("slash command failed", exc_info=error)
        if not interaction.response.is_done():
            await interaction.response.send_message(FAILURE_TEXT, ephemeral=True)


def add_commands(
    tree: app_commands.CommandTree[discord.Client],
    core: ConversationCore,
    *,
    autocomplete_budget_seconds: float = AUTOCOMPLETE_BUDGET_SECONDS,
    stream_interval: float | None = None,
) -> None:
    runner = CommandRunner(
        core,
        autocomplete_budget_seconds=autocomplete_budget_seconds,
        stream_interval=stream_interval,
    )
    tree.add_command(MemoryCommands(runner))
    tree.add_command(search_command(runner))
