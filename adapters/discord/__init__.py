"""The Discord adapter (discord.py): DMs, mentions and replies in, replies out; /memory and /search.

Layout, one job per module: ``normalise`` (events to IncomingMessage), ``access``
(allow-lists), ``handler`` (the message event), ``commands`` (slash commands),
``delivery`` and ``splitting`` (sending), ``client`` (intents, sync, start-up errors),
``cli`` (``mnemo discord``, imported by the entry point so this package stays light).
"""

from adapters.discord.access import AccessPolicy
from adapters.discord.client import MnemoDiscordClient, build_intents, run_client
from adapters.discord.errors import DiscordSetupError
from adapters.discord.splitting import split_message

__all__ = [
    "AccessPolicy",
    "DiscordSetupError",
    "MnemoDiscordClient",
    "build_intents",
    "run_client",
    "split_message",
]
