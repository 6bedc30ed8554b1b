"""Who may talk to the bot on Discord: allow-lists of users, roles and channels.

An empty list means everyone. Users and roles widen each other: with either list set, a
person is let in when their id is listed *or* they hold a listed role (roles exist only
inside a server, so in a DM only the user list can let someone in). The channel list is a
separate gate for server channels: a thread counts as its parent channel, and a channel as
its category. DMs are not server channels, so the channel list does not apply to them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from adapters.discord.errors import DiscordSetupError
from bot.config import DiscordSettings

SNOWFLAKE_HINT = "enable Developer Mode in Discord and use 'Copy ID' on the {what}"


@dataclass(frozen=True, slots=True)
class AccessPolicy:
    users: frozenset[int] = frozenset()
    roles: frozenset[int] = frozenset()
    channels: frozenset[int] = frozenset()

    @classmethod
    def from_settings(cls, settings: DiscordSettings) -> AccessPolicy:
        return cls(
            users=_snowflakes("discord.allowed_users", settings.allowed_users, "user"),
            roles=_snowflakes("discord.allowed_roles", settings.allowed_roles, "role"),
            channels=_snowflakes("discord.allowed_channels", settings.allowed_channels, "channel"),
        )

    def allows_person(self, user_id: int, role_ids: Iterable[int]) -> bool:
        if not self.users and not self.roles:
            return True
        return user_id in self.users or not self.roles.isdisjoint(role_ids)

    def allows_place(self, channel_ids: Iterable[int], *, is_direct: bool) -> bool:
        """``channel_ids``: the channel, then its parent and category when there are any."""
        if is_direct or not self.channels:
            return True
        return not self.channels.isdisjoint(channel_ids)

    def allows(
        self,
        user_id: int,
        role_ids: Iterable[int],
        channel_ids: Iterable[int],
        *,
        is_direct: bool,
    ) -> bool:
        return self.allows_person(user_id, role_ids) and self.allows_place(
            channel_ids, is_direct=is_direct
        )


def _snowflakes(key: str, values: Iterable[str], what: str) -> frozenset[int]:
    """Discord ids are numbers; a name here would silently match nobody, so it is refused."""
    parsed: set[int] = set()
    for value in values:
        text = str(value).strip()
        if not text.isdigit():
            hint = SNOWFLAKE_HINT.format(what=what)
            raise DiscordSetupError(
                f"{key}: {value!r} is not a Discord {what} id (a number; {hint})"
            )
        parsed.add(int(text))
    return frozenset(parsed)
