"""Errors of the Discord adapter, each worded for the operator with the fix in it.

::

    DiscordSetupError            the bot cannot start as configured
     ├── TokenRejected           Discord refused the token (discord.LoginFailure)
     └── MessageContentIntentMissing   the privileged intent is off (PrivilegedIntentsRequired)
"""

from __future__ import annotations

PORTAL = "https://discord.com/developers/applications"


class DiscordSetupError(Exception):
    """The Discord adapter cannot start; the message says what to change."""


class TokenRejected(DiscordSetupError):
    def __init__(self) -> None:
        super().__init__(
            "Discord rejected discord.token. Open the Developer Portal "
            f"({PORTAL}) > your application > Bot > Reset Token, and put the new token in "
            "MNEMO_DISCORD__TOKEN (the bare token, without a 'Bot ' prefix)."
        )


class MessageContentIntentMissing(DiscordSetupError):
    def __init__(self) -> None:
        super().__init__(
            "Discord refused the Message Content intent, which Mnemo needs to read messages. "
            f"Open the Developer Portal ({PORTAL}) > your application > Bot > Privileged "
            "Gateway Intents, switch on MESSAGE CONTENT INTENT, save, and start Mnemo again."
        )


def missing_token_error() -> DiscordSetupError:
    return DiscordSetupError(
        "discord.token is not set. Create a bot in the Developer Portal "
        f"({PORTAL}) > New Application > Bot > Reset Token, and put the token in "
        "MNEMO_DISCORD__TOKEN (or [discord] token in mnemo.toml)."
    )


def prefixed_token_error() -> DiscordSetupError:
    return DiscordSetupError(
        "discord.token starts with 'Bot ': give the bare token; the prefix is added for you."
    )
