"""What was said while the bot was offline: the recent history of its channels and DMs.

Discord replays nothing to a bot that was offline, so after each connection the bot reads the
history of every text channel and active thread it may read (and the channel allow-list lets
in), and of the DMs of the people it has DM turns with: Discord gives a bot no list of its
DMs. Bounded: messages younger than ``hours``, at most :data:`SCAN_LIMIT` read per channel
(newest first), and of those meant for the bot the newest ``messages_per_room`` per channel.
They are learned from, oldest first, not answered; the core takes a message in only once, so
a second restart does not learn it again. A channel's new messages wait for its catch-up.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta

import discord

from adapters.discord.access import AccessPolicy
from adapters.discord.normalise import PLATFORM, place_of
from adapters.discord.ports import ConversationCore
from bot.messages import CatchUpBounds, IncomingMessage

logger = logging.getLogger(__name__)

SCAN_LIMIT = 1000
Readable = discord.TextChannel | discord.Thread | discord.DMChannel


class CatchUp:
    def __init__(
        self,
        core: ConversationCore,
        policy: AccessPolicy,
        accept: Callable[[discord.Message], IncomingMessage | None],
        bounds: CatchUpBounds,
    ) -> None:
        self._core = core
        self._policy = policy
        self._accept = accept
        self._bounds = bounds
        self._pending: dict[int, asyncio.Event] = {}

    async def wait_for(self, channel_id: int) -> None:
        """Until the catch-up of this channel (if one is under way) is done."""
        pending = self._pending.get(channel_id)
        if pending is not None:
            await pending.wait()

    async def run(self, client: discord.Client) -> None:
        if not self._bounds.enabled:
            return
        channels = list(self._channels(client.guilds))
        for channel in channels:
            self._pending.setdefault(channel.id, asyncio.Event())
        channels += await self._direct_channels(client)
        since = datetime.now(UTC) - timedelta(hours=self._bounds.hours)
        for channel in channels:
            try:
                await self._catch_up(channel, since)
            except discord.HTTPException as error:
                logger.warning("could not read the history of channel %s: %s", channel.id, error)
            finally:
                self._pending.pop(channel.id, asyncio.Event()).set()

    def _channels(self, guilds: Iterable[discord.Guild]) -> Iterable[Readable]:
        for guild in guilds:
            channels: list[discord.TextChannel | discord.Thread] = [
                *guild.text_channels,
                *guild.threads,
            ]
            for channel in channels:
                place = place_of(channel, is_direct=False)
                if not self._policy.allows_place(place.gate_ids, is_direct=False):
                    continue
                if guild.me is not None and channel.permissions_for(guild.me).read_message_history:
                    yield channel

    async def _direct_channels(self, client: discord.Client) -> list[Readable]:
        channels: list[Readable] = []
        for user_key in await self._core.known_direct_users(PLATFORM):
            user_id = int(user_key.partition(":")[2])
            try:
                channels.append(await client.create_dm(discord.Object(user_id)))
            except discord.HTTPException as error:
                logger.info("cannot open the DM with %s to catch up: %s", user_id, error)
        return channels

    async def _catch_up(self, channel: Readable, since: datetime) -> None:
        newest_first = [
            message
            async for message in channel.history(limit=SCAN_LIMIT, after=since, oldest_first=False)
        ]
        meant = [self._accept(message) for message in reversed(newest_first)]
        kept = [message for message in meant if message is not None]
        learned = 0
        for message in kept[-self._bounds.messages_per_room :]:
            learned += await self._core.catch_up(message)
        if learned:
            logger.info("learned from %d messages sent in %s while away", learned, channel.id)
