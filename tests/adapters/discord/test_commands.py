"""Slash commands arriving from the fake gateway: what the core gets, and how answers go back."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from adapters.discord.access import AccessPolicy
from adapters.discord.client import MnemoDiscordClient
from adapters.discord.commands import FAILURE_TEXT, NOT_ALLOWED_TEXT, in_discord_terms
from bot.messages import Attachment, IncomingMessage, OutgoingMessage
from tests.adapters.discord import payloads
from tests.adapters.discord.conftest import RecordingCore, running
from tests.adapters.discord.fake_discord import FakeDiscord, Recorded
from tests.adapters.discord.payloads import (
    ALICE,
    ALICE_ID,
    APP_ID,
    BOB,
    BOB_ID,
    CHANNEL_ID,
    DM_CHANNEL_ID,
    THREAD_ID,
    subcommand,
)

DEFERRED = 5
CHANNEL_MESSAGE = 4
AUTOCOMPLETE_RESULT = 8
interaction_ids = itertools.count(1_500_000_000_000_000_000)


def command(
    name: str, options: list[dict[str, Any]], invoker: dict[str, Any] = ALICE, **extra: Any
) -> dict[str, Any]:
    return payloads.interaction(next(interaction_ids), name, options, invoker=invoker, **extra)


def callbacks(fake: FakeDiscord, payload: dict[str, Any]) -> list[Recorded]:
    return fake.matching("POST", f"/interactions/{payload['id']}/")


def followups(fake: FakeDiscord, payload: dict[str, Any]) -> list[Recorded]:
    return fake.matching("POST", f"/webhooks/{APP_ID}/{payload['token']}")


async def invoke(
    fake: FakeDiscord, payload: dict[str, Any], *, answers: int = 1
) -> tuple[Recorded, list[Recorded]]:
    """Send the interaction; wait for its response and ``answers`` follow-ups."""
    await fake.dispatch("INTERACTION_CREATE", payload)
    await fake.wait_for(
        lambda _: len(callbacks(fake, payload)) == 1 and len(followups(fake, payload)) >= answers
    )
    return callbacks(fake, payload)[0], followups(fake, payload)


MEMORY_COMMANDS = [
    (subcommand("list"), "/memory list"),
    (subcommand("list", page=2), "/memory list 2"),
    (subcommand("search", query="my cat"), "/memory search my cat"),
    (subcommand("forget", fact=3), "/memory forget 3"),
    (subcommand("forget-all"), "/memory forget all"),
    (subcommand("forget-all", confirm=True), "/memory forget all confirm"),
    (subcommand("undo"), "/memory undo"),
    (subcommand("history", fact=7), "/memory history 7"),
    (subcommand("export"), "/memory export"),
    (subcommand("pause"), "/memory pause"),
    (subcommand("resume"), "/memory resume"),
    (subcommand("help"), "/memory help"),
]


@pytest.mark.parametrize(("option", "text"), MEMORY_COMMANDS, ids=[t for _, t in MEMORY_COMMANDS])
async def test_memory_command_reaches_the_core_and_every_reply_is_ephemeral(
    client: MnemoDiscordClient,
    fake_discord: FakeDiscord,
    core: RecordingCore,
    option: dict[str, Any],
    text: str,
) -> None:
    payload = command("memory", [option])
    response, answers = await invoke(fake_discord, payload)

    assert response.body["type"] == DEFERRED and response.ephemeral
    assert [answer.body["content"] for answer in answers] == [f"echo: {text[1:]}"]
    assert all(answer.ephemeral for answer in answers)
    assert all(answer.body["allowed_mentions"] == {"parse": []} for answer in answers)
    assert core.handled == [
        IncomingMessage(
            platform="discord",
            user_key=f"discord:{ALICE_ID}",
            display_name="Alice",
            room_key=f"discord:{CHANNEL_ID}",
            text=text,
            time=core.handled[0].time,
            is_direct=False,
            mentions_bot=True,
            message_id=payload["id"],
        )
    ]


async def test_a_long_private_answer_is_split_into_ephemeral_follow_ups(
    fake_discord: FakeDiscord,
) -> None:
    listing = "\n".join(
        f"{number}. I like tea number {number}" + " ..." * 10 for number in range(1, 120)
    )
    core = RecordingCore(respond=lambda m: [OutgoingMessage(listing, m.room_key, private=True)])
    async with running(core, AccessPolicy()):
        payload = command("memory", [subcommand("list")])
        _, answers = await invoke(fake_discord, payload, answers=4)
    assert len(answers) == 4
    assert all(answer.ephemeral and len(answer.body["content"]) <= 2000 for answer in answers)
    assert "\n".join(answer.body["content"] for answer in answers) == listing


async def test_export_arrives_as_an_ephemeral_json_file(fake_discord: FakeDiscord) -> None:
    export = Attachment("mnemo-memory.json", b'{"facts": [{"text": "I live in Lyon"}]}')
    core = RecordingCore(
        respond=lambda m: [
            OutgoingMessage("Your memory:", m.room_key, private=True, attachments=(export,))
        ]
    )
    async with running(core, AccessPolicy()):
        _, answers = await invoke(fake_discord, command("memory", [subcommand("export")]))
    assert answers[0].files == {"mnemo-memory.json": export.content}
    assert answers[0].ephemeral
    assert answers[0].body["content"] == "Your memory:"


async def test_command_in_a_direct_message_uses_the_dm_scope(
    client: MnemoDiscordClient, fake_discord: FakeDiscord, core: RecordingCore
) -> None:
    _, answers = await invoke(fake_discord, command("memory", [subcommand("list")], direct=True))
    message = core.handled[0]
    assert (message.room_key, message.is_direct) == (f"discord:{DM_CHANNEL_ID}", True)
    assert message.scope().room == "discord:dm"
    assert answers[0].ephemeral


async def test_command_in_a_thread_uses_the_parent_channels_room(
    client: MnemoDiscordClient, fake_discord: FakeDiscord, core: RecordingCore
) -> None:
    thread = payloads.thread(THREAD_ID, CHANNEL_ID, "plans")
    await invoke(fake_discord, command("memory", [subcommand("list")], channel_payload=thread))
    message = core.handled[0]
    assert (message.room_key, message.thread_id) == (f"discord:{CHANNEL_ID}", str(THREAD_ID))


async def test_web_search_is_public(
    client: MnemoDiscordClient, fake_discord: FakeDiscord, core: RecordingCore
) -> None:
    option = {"name": "query", "type": 3, "value": "weather in Paris"}
    response, answers = await invoke(fake_discord, command("search", [option]))
    assert core.handled[0].text == "/search weather in Paris"
    assert response.body["type"] == DEFERRED and not response.ephemeral
    assert not answers[0].ephemeral
    assert answers[0].body["allowed_mentions"] == {"parse": []}


async def test_a_failing_core_still_answers_the_command(fake_discord: FakeDiscord) -> None:
    def broken(message: IncomingMessage) -> list[OutgoingMessage]:
        raise RuntimeError("index is gone")

    async with running(RecordingCore(respond=broken), AccessPolicy()):
        _, answers = await invoke(fake_discord, command("memory", [subcommand("list")]))
    assert [answer.body["content"] for answer in answers] == [FAILURE_TEXT]
    assert answers[0].ephemeral


async def test_autocomplete_offers_only_the_callers_facts(
    client: MnemoDiscordClient, fake_discord: FakeDiscord, core: RecordingCore
) -> None:
    core.facts = {
        f"discord:{ALICE_ID}": [
            (1, "I live in Lyon"),
            (2, "My cat is called Miso"),
            (3, "x" * 150),
        ],
        f"discord:{BOB_ID}": [(4, "I live in Lille")],
    }
    focused = {"name": "fact", "type": 4, "value": "li", "focused": True}
    payload = command(
        "memory", [{"name": "forget", "type": 1, "options": [focused]}], autocomplete=True
    )
    await fake_discord.dispatch("INTERACTION_CREATE", payload)
    await fake_discord.wait_for(lambda _: len(callbacks(fake_discord, payload)) == 1)

    response = callbacks(fake_discord, payload)[0]
    assert response.body["type"] == AUTOCOMPLETE_RESULT
    assert response.body["data"]["choices"] == [{"name": "I live in Lyon", "value": 1}]
    asked, typed = core.asked_choices[0]
    assert (asked.user_key, asked.room_key, typed) == (
        f"discord:{ALICE_ID}",
        f"discord:{CHANNEL_ID}",
        "li",
    )
    assert core.handled == []


async def test_autocomplete_labels_fit_discords_limit(
    client: MnemoDiscordClient, fake_discord: FakeDiscord, core: RecordingCore
) -> None:
    core.facts = {f"discord:{ALICE_ID}": [(number, "word " * 40) for number in range(1, 40)]}
    focused = {"name": "fact", "type": 4, "value": "", "focused": True}
    payload = command(
        "memory", [{"name": "history", "type": 1, "options": [focused]}], autocomplete=True
    )
    await fake_discord.dispatch("INTERACTION_CREATE", payload)
    await fake_discord.wait_for(lambda _: len(callbacks(fake_discord, payload)) == 1)
    choices = callbacks(fake_discord, payload)[0].body["data"]["choices"]
    assert len(choices) == 25
    assert all(1 <= len(choice["name"]) <= 100 for choice in choices)
    assert choices[0]["name"] == ("word " * 20)[:99].strip() + "…"


async def test_people_outside_the_allow_lists_are_refused_privately(
    fake_discord: FakeDiscord, core: RecordingCore
) -> None:
    async with running(core, AccessPolicy(users=frozenset({ALICE_ID}))):
        payload = command("memory", [subcommand("list")], invoker=BOB)
        await fake_discord.dispatch("INTERACTION_CREATE", payload)
        await fake_discord.wait_for(lambda _: len(callbacks(fake_discord, payload)) == 1)
        focused = {"name": "fact", "type": 4, "value": "", "focused": True}
        completing = command(
            "memory",
            [{"name": "forget", "type": 1, "options": [focused]}],
            invoker=BOB,
            autocomplete=True,
        )
        await fake_discord.dispatch("INTERACTION_CREATE", completing)
        await fake_discord.wait_for(lambda _: len(callbacks(fake_discord, completing)) == 1)

    refusal = callbacks(fake_discord, payload)[0]
    assert refusal.body["type"] == CHANNEL_MESSAGE and refusal.ephemeral
    assert refusal.body["data"]["content"] == NOT_ALLOWED_TEXT
    assert callbacks(fake_discord, completing)[0].body["data"]["choices"] == []
    assert core.handled == [] and core.asked_choices == []


async def test_private_reply_to_a_public_command_replaces_the_public_placeholder(
    fake_discord: FakeDiscord,
) -> None:
    not_set_up = "Web search is not set up on this bot."
    core = RecordingCore(respond=lambda m: [OutgoingMessage(not_set_up, m.room_key, private=True)])
    async with running(core, AccessPolicy()):
        payload = command("search", [{"name": "query", "type": 3, "value": "news"}])
        response, answers = await invoke(fake_discord, payload)
    assert not response.ephemeral
    deleted = fake_discord.matching(
        "DELETE", f"/webhooks/{APP_ID}/{payload['token']}/messages/@original"
    )
    assert len(deleted) == 1
    assert [(a.body["content"], a.ephemeral) for a in answers] == [(not_set_up, True)]


def test_usage_hints_name_the_slash_command_form() -> None:
    asked = "To go ahead, send /memory forget all confirm within 60 seconds."
    assert in_discord_terms(asked) == (
        "To go ahead, send /memory forget-all confirm: True within 60 seconds."
    )
    assert in_discord_terms("Send /memory forget all first.") == "Send /memory forget-all first."
    assert in_discord_terms("Send !memory forget all first.") == "Send !memory forget all first."


class SlowChoices(RecordingCore):
    """Test double: a core whose fact look-up takes longer than Discord waits."""

    async def fact_choices(self, message: IncomingMessage, typed: str) -> list[tuple[int, str]]:
        await asyncio.sleep(30)
        return [(1, "too late")]


async def test_slow_autocomplete_answers_in_time_with_no_suggestions(
    fake_discord: FakeDiscord, caplog: pytest.LogCaptureFixture
) -> None:
    focused = {"name": "fact", "type": 4, "value": "", "focused": True}
    payload = command(
        "memory", [{"name": "forget", "type": 1, "options": [focused]}], autocomplete=True
    )
    async with running(SlowChoices(), AccessPolicy(), autocomplete_budget_seconds=0.2):
        await fake_discord.dispatch("INTERACTION_CREATE", payload)
        await fake_discord.wait_for(lambda _: len(callbacks(fake_discord, payload)) == 1)
    assert callbacks(fake_discord, payload)[0].body["data"]["choices"] == []
    assert "answered with no suggestions" in caplog.text
