"""Rooms the Matrix tests open with the bot, as Element opens them, and wait to be set up."""

from __future__ import annotations

from tests.adapters.matrix.people import Person


async def open_dm(person: Person, bot_id: str, *, encrypted: bool = False) -> str:
    """A DM the way Element opens one: ``is_direct`` on the invite of the bot."""
    room_id = await person.create_room([bot_id], direct=True, encrypted=encrypted)
    await person.wait_for_members(room_id, {person.user_id, bot_id})
    return room_id


async def open_group(alice: Person, bob: Person, bot_id: str) -> str:
    """A group room of alice's with bob and the bot, once both people see all three in it."""
    room_id = await alice.create_room([bot_id, bob.user_id])
    await bob.join(room_id)
    for person in (alice, bob):
        await person.wait_for_members(room_id, {alice.user_id, bob.user_id, bot_id})
    return room_id
