"""The discord.py client: intents, event wiring, command sync, and start-up errors."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import discord
from discord import app_commands

from adapters.discord.access import AccessPolicy
from adapters.discord.commands import (
    AUTOCOMPLETE_BUDGET_SECONDS,
    MnemoCommandTree,
    add_commands,
)
from adapters.discord.errors import (
    DiscordSetupError,
    MessageContentIntentMissing,
    TokenRejected,
    missing_token_error,
    prefixed_token_error,
)
from adapters.discord.handler import MessageHandler
from adapters.discord.ports import ConversationCore
from bot.messages import CatchUpBounds

logger = logging.getLogger(__name__)


def build_intents() -> discord.Intents:
    """Default intents (servers, messages, DMs) plus the privileged Message Content intent.

    Without message content Discord sends empty text for messages that do not mention the
    bot, including replies to it. Members and presences are not needed: message and
    interaction payloads carry the author's roles.
    """
    intents = discord.Intents.default()
    intents.message_content = True
    return intents


class MnemoDiscordClient(discord.Client):
    def __init__(
        self,
        core: ConversationCore,
        policy: AccessPolicy,
        *,
        guild_ready_timeout: float = 2.0,
        autocomplete_budget_seconds: float = AUTOCOMPLETE_BUDGET_SECONDS,
        catch_up: CatchUpBounds | None = None,
        stream_interval: float | None = None,
        **client_options: Any,
    ) -> None:
        # guild_ready_timeout: how long discord.py waits for servers after READY before
        # on_ready; tests against a local fake gateway shorten it. stream_interval: the
        # least time between edits of a streamed answer (None: answers come whole).
        # client_options: the sharded client's shard_ids and shard_count.
        super().__init__(
            intents=build_intents(),
            allowed_mentions=discord.AllowedMentions.none(),
            guild_ready_timeout=guild_ready_timeout,
            **client_options,
        )
        self.tree = MnemoCommandTree(self, policy)
        add_commands(
            self.tree,
            core,
            autocomplete_budget_seconds=autocomplete_budget_seconds,
            stream_interval=stream_interval,
        )
        self.handler = MessageHandler(core, policy, self._own_id, catch_up, stream_interval)

    def _own_id(self) -> int | None:
        return None if self.user is None else self.user.id

    async def setup_hook(self) -> None:
        await sync_commands(self.tree)

    async def on_ready(self) -> None:
        logger.info("logged in to Discord as %s (%s)", self.user, self._own_id())
        # Also after a reconnect that needed a new session: Discord replays nothing missed.
        await self.handler.catch_up.run(self)

    async def on_message(self, message: discord.Message) -> None:
        await self.handler.on_message(message)

    async def on_raw_message_edit(self, payload: discord.RawMessageUpdateEvent) -> None:
        # Raw, so that edits of messages no longer (or never) in the cache count too.
        await self.handler.on_edit(payload.message)

    async def on_raw_message_delete(self, payload: discord.RawMessageDeleteEvent) -> None:
        # A bulk delete is a moderator's: deletions by others change nothing, so it is not
        # handled at all.
        await self.handler.on_delete(payload, self.get_channel(payload.channel_id))


class ShardedMnemoDiscordClient(MnemoDiscordClient, discord.AutoShardedClient):
    """One process's range of shards (``mnemo discord --shard-ids 0,1 --shard-count 4``):
    discord.py's sharded client, one gateway connection per shard, in this process."""


@dataclass(frozen=True, slots=True)
class Shards:
    """The shards this process runs, of ``count`` in all."""

    ids: tuple[int, ...]
    count: int

    def __post_init__(self) -> None:
        if self.count < 1:
            raise DiscordSetupError("--shard-count must be at least 1")
        if not self.ids:
            raise DiscordSetupError("--shard-ids needs at least one shard id")
        outside = [shard for shard in self.ids if not 0 <= shard < self.count]
        if outside:
            raise DiscordSetupError(
                f"--shard-ids {', '.join(map(str, outside))} outside 0..{self.count - 1} "
                f"(--shard-count {self.count}): shard ids count from 0"
            )
        if len(set(self.ids)) != len(self.ids):
            raise DiscordSetupError("--shard-ids names a shard twice")


def build_client(
    core: ConversationCore, policy: AccessPolicy, shards: Shards | None = None, **options: Any
) -> MnemoDiscordClient:
    """The one-connection client, or the sharded one for ``shards``."""
    if shards is None:
        return MnemoDiscordClient(core, policy, **options)
    return ShardedMnemoDiscordClient(
        core, policy, shard_ids=list(shards.ids), shard_count=shards.count, **options
    )


async def sync_commands(tree: app_commands.CommandTree[discord.Client]) -> bool:
    """Upload the slash commands only when they differ from what Discord has.

    Discord limits how many commands may be created per day; comparing first keeps a
    restart loop from using that up. Returns whether a sync happened.
    """
    current = await tree.fetch_commands()
    wanted = [as_registered(tree, command.to_dict(tree)) for command in tree.get_commands()]
    if comparable(wanted) == comparable(current):
        logger.info("slash commands are up to date (%d)", len(current))
        return False
    synced = await tree.sync()
    logger.info("synced %d slash commands with Discord", len(synced))
    return True


def as_registered(
    tree: app_commands.CommandTree[discord.Client], payload: Mapping[str, Any]
) -> app_commands.AppCommand:
    """Our payload read back the way discord.py reads Discord's answer, so both compare.

    The state is only kept for lazy look-ups; it is the same one fetched commands carry.
    """
    data = {**payload, "id": 0, "application_id": 0}
    return app_commands.AppCommand(data=data, state=tree.client._connection)  # type: ignore[arg-type]


def comparable(commands: Sequence[app_commands.AppCommand]) -> dict[str, dict[str, Any]]:
    """Commands by name without the fields Discord assigns (ids, version)."""
    assigned = ("id", "application_id")
    return {
        command.name: {
            key: value for key, value in command.to_dict().items() if key not in assigned
        }
        for command in commands
    }


def check_token(token: str | None) -> str:
    if token is None or not token.strip():
        raise missing_token_error()
    token = token.strip()
    if token.lower().startswith("bot "):
        raise prefixed_token_error()
    return token


async def run_client(client: discord.Client, token: str | None) -> None:
    """Log in and serve until closed; Discord's refusals become operator errors."""
    checked = check_token(token)
    try:
        async with client:
            await client.start(checked)
    except discord.LoginFailure as error:
        raise TokenRejected() from error
    except discord.PrivilegedIntentsRequired as error:
        raise MessageContentIntentMissing() from error


__all__ = [
    "DiscordSetupError",
    "MnemoDiscordClient",
    "ShardedMnemoDiscordClient",
    "Shards",
    "build_client",
    "build_intents",
    "run_client",
]
