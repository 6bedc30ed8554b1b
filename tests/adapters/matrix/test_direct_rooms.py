"""Which rooms are DMs: the pure rules, on rooms built in memory."""

from __future__ import annotations

from nio import MatrixRoom

from adapters.matrix.direct import (
    dm_partner,
    has_outsider,
    is_direct_invite,
    partners_by_room,
    with_room,
    without_room,
)

BOT = "@mnemo:example.org"
ALICE = "@alice:example.org"
BOB = "@bob:example.org"


def room(*members: str, invited: tuple[str, ...] = ()) -> MatrixRoom:
    built = MatrixRoom("!room:example.org", BOT)
    for member in members:
        built.add_member(member, None, None)
    for member in invited:
        built.add_member(member, None, None, invited=True)
    return built


def test_a_room_created_as_a_dm_with_its_two_members_is_a_dm() -> None:
    assert dm_partner(room(BOT, ALICE), BOT, {ALICE}) == ALICE
    assert dm_partner(room(BOT, invited=(ALICE,)), BOT, {ALICE}) == ALICE


def test_two_members_do_not_make_a_dm() -> None:
    assert dm_partner(room(BOT, ALICE), BOT, set()) is None


def test_a_third_member_makes_a_dm_a_group_room() -> None:
    assert dm_partner(room(BOT, ALICE, BOB), BOT, {ALICE}) is None
    assert dm_partner(room(BOT, ALICE, invited=(BOB,)), BOT, {ALICE}) is None


def test_a_stranger_in_the_partners_place_makes_a_group_room() -> None:
    # Bob created the DM, invited Alice and left: it is not Alice's DM.
    assert dm_partner(room(BOT, ALICE), BOT, {BOB}) is None


def test_a_room_the_bot_is_not_in_is_no_dm() -> None:
    assert dm_partner(room(ALICE, BOB), BOT, {ALICE, BOB}) is None


def test_anyone_but_the_partner_ever_seen_in_a_dm_makes_it_a_group_room_for_good() -> None:
    # Bob, joined, invited or gone again, was in it: the room stays a group room.
    assert has_outsider({ALICE, BOB}, {ALICE})
    assert has_outsider({BOB}, {ALICE})
    # Two people listed for one room: still only one of them at a time.
    assert has_outsider({ALICE, BOB}, {ALICE, BOB})
    assert not has_outsider({ALICE}, {ALICE})
    # Alice left: nobody else came.
    assert not has_outsider(set(), {ALICE})


def test_only_a_true_is_direct_marks_an_invite() -> None:
    assert is_direct_invite({"membership": "invite", "is_direct": True})
    assert not is_direct_invite({"membership": "invite"})
    assert not is_direct_invite({"membership": "invite", "is_direct": "true"})


def test_m_direct_content_is_read_per_room_and_junk_is_skipped() -> None:
    content = {ALICE: ["!a:x", "!shared:x"], BOB: ["!shared:x", 7], "@eve:x": "!e:x"}

    assert partners_by_room(content) == {
        "!a:x": frozenset({ALICE}),
        "!shared:x": frozenset({ALICE, BOB}),
    }


def test_recording_a_dm_keeps_what_was_there() -> None:
    content = {ALICE: ["!a:x"], BOB: ["!b:x"]}

    assert with_room(content, ALICE, "!a2:x") == {ALICE: ["!a:x", "!a2:x"], BOB: ["!b:x"]}
    assert with_room(content, "@carol:x", "!c:x") == {
        ALICE: ["!a:x"],
        BOB: ["!b:x"],
        "@carol:x": ["!c:x"],
    }
    assert with_room(content, ALICE, "!a:x") is None


def test_a_demoted_dm_is_taken_out_of_everyones_dms_and_the_rest_is_kept() -> None:
    content = {ALICE: ["!a:x", "!shared:x"], BOB: ["!shared:x"], "@carol:x": ["!c:x"]}

    assert without_room(content, "!shared:x") == {
        ALICE: ["!a:x"],
        BOB: [],
        "@carol:x": ["!c:x"],
    }
    assert without_room(content, "!other:x") is None
