"""Raw Discord API payloads, shaped as Discord documents them, for the fake gateway and REST.

Ids are snowflakes chosen to be easy to tell apart in failures.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

TOKEN = "MTAwMDAwMDAwMDAwMDAwMDAx.fake.token-for-tests"
APP_ID = 1_000_000_000_000_000_001
BOT_ID = APP_ID
GUILD_ID = 1_100_000_000_000_000_000
CATEGORY_ID = 1_100_000_000_000_000_010
CHANNEL_ID = 1_100_000_000_000_000_020
OTHER_CHANNEL_ID = 1_100_000_000_000_000_030
THREAD_ID = 1_100_000_000_000_000_040
DM_CHANNEL_ID = 1_100_000_000_000_000_050
PRIVATE_THREAD_ID = 1_100_000_000_000_000_060
MEMBER_ROLE_ID = 1_100_000_000_000_000_100
BOT_ROLE_ID = 1_100_000_000_000_000_101
ALICE_ID = 1_200_000_000_000_000_001
BOB_ID = 1_200_000_000_000_000_002
OTHER_BOT_ID = 1_200_000_000_000_000_003
TIMESTAMP = "2026-11-29T15:00:00.000000+00:00"
MESSAGE_TIME = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)


def user(user_id: int, name: str, *, bot: bool = False) -> dict[str, Any]:
    return {
        "id": str(user_id),
        "username": name,
        "global_name": name.title(),
        "discriminator": "0",
        "avatar": None,
        "bot": bot,
    }


BOT_USER = user(BOT_ID, "mnemo", bot=True)
ALICE = user(ALICE_ID, "alice")
BOB = user(BOB_ID, "bob")
OTHER_BOT = user(OTHER_BOT_ID, "otherbot", bot=True)


def application() -> dict[str, Any]:
    return {
        "id": str(APP_ID),
        "name": "Mnemo",
        "icon": None,
        "description": "",
        "bot_public": False,
        "bot_require_code_grant": False,
        "owner": ALICE,
        "verify_key": "0" * 64,
        "flags": 0,
    }


# View Channels, Send Messages, Read Message History: what the invite link asks for.
BOT_PERMISSIONS = (1 << 10) | (1 << 11) | (1 << 16)


def role(
    role_id: int, name: str, *, bot_id: int | None = None, permissions: int = 0
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": str(role_id),
        "name": name,
        "color": 0,
        "hoist": False,
        "position": 1,
        "permissions": str(permissions),
        "managed": bot_id is not None,
        "mentionable": True,
    }
    if bot_id is not None:
        data["tags"] = {"bot_id": str(bot_id)}
    return data


def channel(channel_id: int, name: str, *, parent_id: int | None = None) -> dict[str, Any]:
    return {
        "id": str(channel_id),
        "type": 0,
        "guild_id": str(GUILD_ID),
        "name": name,
        "position": 0,
        "permission_overwrites": [],
        "parent_id": None if parent_id is None else str(parent_id),
        "nsfw": False,
    }


def category(channel_id: int, name: str) -> dict[str, Any]:
    return {**channel(channel_id, name), "type": 4}


def thread(thread_id: int, parent_id: int, name: str, *, private: bool = False) -> dict[str, Any]:
    return {
        "id": str(thread_id),
        "type": 12 if private else 11,
        "guild_id": str(GUILD_ID),
        "parent_id": str(parent_id),
        "owner_id": str(ALICE_ID),
        "name": name,
        "thread_metadata": {
            "archived": False,
            "auto_archive_duration": 1440,
            "locked": False,
            "archive_timestamp": TIMESTAMP,
        },
        "message_count": 0,
        "member_count": 1,
        "rate_limit_per_user": 0,
    }


def member(user_payload: dict[str, Any], role_ids: list[int]) -> dict[str, Any]:
    return {
        "user": user_payload,
        "roles": [str(role_id) for role_id in role_ids],
        "joined_at": TIMESTAMP,
        "deaf": False,
        "mute": False,
        "nick": None,
        "flags": 0,
        "permissions": "2147483647",
    }


def guild() -> dict[str, Any]:
    """One server: a category with #general and #random, a thread in #general, two roles."""
    return {
        "id": str(GUILD_ID),
        "name": "Home",
        "owner_id": str(ALICE_ID),
        "roles": [
            role(GUILD_ID, "@everyone"),
            role(MEMBER_ROLE_ID, "family"),
            role(BOT_ROLE_ID, "Mnemo", bot_id=BOT_ID, permissions=BOT_PERMISSIONS),
        ],
        "channels": [
            category(CATEGORY_ID, "talk"),
            channel(CHANNEL_ID, "general", parent_id=CATEGORY_ID),
            channel(OTHER_CHANNEL_ID, "random"),
        ],
        "threads": [
            thread(THREAD_ID, CHANNEL_ID, "plans"),
            thread(PRIVATE_THREAD_ID, CHANNEL_ID, "surprise", private=True),
        ],
        "members": [member(BOT_USER, [BOT_ROLE_ID])],
        "member_count": 3,
        "emojis": [],
        "stickers": [],
        "features": [],
        "unavailable": False,
        "large": False,
        "joined_at": TIMESTAMP,
        "voice_states": [],
        "presences": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
        "soundboard_sounds": [],
    }


def ready(gateway_url: str, guilds: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "v": 10,
        "user": BOT_USER,
        "guilds": guilds,
        "session_id": "fake-session",
        "resume_gateway_url": gateway_url,
        "application": {"id": str(APP_ID), "flags": 0},
    }


def message(
    message_id: int,
    channel_id: int,
    author: dict[str, Any],
    content: str,
    *,
    guild_id: int | None = GUILD_ID,
    roles: list[int] | None = None,
    mentions: list[dict[str, Any]] | None = None,
    mention_roles: list[int] | None = None,
    replying_to: dict[str, Any] | None = None,
    webhook_id: int | None = None,
    message_type: int | None = None,
    edited: str | None = None,
) -> dict[str, Any]:
    """A MESSAGE_CREATE payload; in a server the author's member data carries their roles."""
    data: dict[str, Any] = {
        "id": str(message_id),
        "channel_id": str(channel_id),
        "author": author,
        "content": content,
        "timestamp": TIMESTAMP,
        "edited_timestamp": edited,
        "tts": False,
        "mention_everyone": False,
        "mentions": mentions or [],
        "mention_roles": [str(role_id) for role_id in mention_roles or []],
        "attachments": [],
        "embeds": [],
        "pinned": False,
        "type": message_type if message_type is not None else (19 if replying_to else 0),
    }
    if guild_id is not None:
        data["guild_id"] = str(guild_id)
        data["member"] = {k: v for k, v in member(author, roles or []).items() if k != "user"}
    if replying_to is not None:
        data["message_reference"] = {
            "message_id": replying_to["id"],
            "channel_id": replying_to["channel_id"],
            "guild_id": replying_to.get("guild_id"),
        }
        data["referenced_message"] = replying_to
    if webhook_id is not None:
        data["webhook_id"] = str(webhook_id)
    return data


def mention_of(user_payload: dict[str, Any]) -> str:
    return f"<@{user_payload['id']}>"


def interaction(
    interaction_id: int,
    name: str,
    options: list[dict[str, Any]],
    *,
    invoker: dict[str, Any],
    channel_payload: dict[str, Any] | None = None,
    roles: list[int] | None = None,
    direct: bool = False,
    autocomplete: bool = False,
) -> dict[str, Any]:
    """An INTERACTION_CREATE payload for a chat-input command (or its autocomplete)."""
    data: dict[str, Any] = {
        "id": str(interaction_id),
        "application_id": str(APP_ID),
        "type": 4 if autocomplete else 2,
        "token": f"interaction-token-{interaction_id}",
        "version": 1,
        "data": {"id": "1", "name": name, "type": 1, "options": options},
        "locale": "en-US",
        "app_permissions": "2147483647",
        "entitlements": [],
        "attachment_size_limit": 10 * 1024 * 1024,
        "context": 1 if direct else 0,
    }
    if direct:
        data["channel_id"] = str(DM_CHANNEL_ID)
        data["channel"] = {"id": str(DM_CHANNEL_ID), "type": 1, "recipients": [invoker]}
        data["user"] = invoker
        data["authorizing_integration_owners"] = {"0": str(APP_ID)}
    else:
        channel_data = channel_payload or channel(CHANNEL_ID, "general", parent_id=CATEGORY_ID)
        data["channel_id"] = channel_data["id"]
        data["channel"] = channel_data
        data["guild_id"] = str(GUILD_ID)
        data["guild_locale"] = "en-US"
        data["member"] = member(invoker, roles or [])
        data["authorizing_integration_owners"] = {"0": str(GUILD_ID)}
    return data


def subcommand(name: str, **values: Any) -> dict[str, Any]:
    """A sub-command option with its arguments (ints as INTEGER, bools, else STRING)."""
    options = [
        {"name": key.replace("_", "-"), "type": _option_type(value), "value": value}
        for key, value in values.items()
    ]
    return {"name": name, "type": 1, "options": options}


def _option_type(value: Any) -> int:
    if isinstance(value, bool):
        return 5
    return 4 if isinstance(value, int) else 3
