"""Allow-lists of users, roles and channels."""

from __future__ import annotations

import pytest

from adapters.discord.access import AccessPolicy
from adapters.discord.errors import DiscordSetupError
from bot.config import DiscordSettings


def test_empty_lists_let_everyone_in() -> None:
    assert AccessPolicy().allows(1, [], [10], is_direct=False)


def test_settings_become_ids() -> None:
    settings = DiscordSettings(
        allowed_users=("11",), allowed_roles=(" 22 ",), allowed_channels=("33",)
    )
    assert AccessPolicy.from_settings(settings) == AccessPolicy(
        users=frozenset({11}), roles=frozenset({22}), channels=frozenset({33})
    )


@pytest.mark.parametrize(
    ("field", "what"),
    [("allowed_users", "user"), ("allowed_roles", "role"), ("allowed_channels", "channel")],
)
def test_a_name_instead_of_an_id_is_refused_with_the_key(field: str, what: str) -> None:
    settings = DiscordSettings.model_validate({field: ["alice"]})
    with pytest.raises(DiscordSetupError) as raised:
        AccessPolicy.from_settings(settings)
    message = str(raised.value)
    assert f"discord.{field}: 'alice' is not a Discord {what} id" in message
    assert "Copy ID" in message


def test_listed_user_or_listed_role_is_enough() -> None:
    policy = AccessPolicy(users=frozenset({1}), roles=frozenset({50}))
    assert policy.allows_person(1, [])
    assert policy.allows_person(2, [50, 60])
    assert not policy.allows_person(2, [60])


def test_roles_alone_keep_out_people_without_them() -> None:
    policy = AccessPolicy(roles=frozenset({50}))
    assert not policy.allows_person(1, [])


def test_channel_list_counts_parent_and_category() -> None:
    policy = AccessPolicy(channels=frozenset({100}))
    assert policy.allows_place([100], is_direct=False)
    assert policy.allows_place([7, 100], is_direct=False)  # a thread of channel 100
    assert not policy.allows_place([7, 8], is_direct=False)


def test_channel_list_does_not_apply_to_direct_messages() -> None:
    policy = AccessPolicy(channels=frozenset({100}))
    assert policy.allows(1, [], [5], is_direct=True)


def test_person_and_place_must_both_pass() -> None:
    policy = AccessPolicy(users=frozenset({1}), channels=frozenset({100}))
    assert not policy.allows(1, [], [200], is_direct=False)
    assert not policy.allows(2, [], [100], is_direct=False)
    assert policy.allows(1, [], [100], is_direct=False)
