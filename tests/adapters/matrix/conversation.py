"""A person talking with the bot in one room, for the tests that run the real core."""

from __future__ import annotations

from tests.adapters.matrix.people import Person
from tests.adapters.matrix.rooms import open_dm
from tests.bot.core.harness import Harness


class Conversation:
    """One person in one room with the bot: say something, get the bot's next answer."""

    def __init__(self, person: Person, room_id: str, bot_id: str, mnemo: Harness) -> None:
        self.person = person
        self.room_id = room_id
        self.bot_id = bot_id
        self.mnemo = mnemo
        self.last_sent = ""

    async def say(self, text: str, **extra: object) -> str:
        sent = await self.person.send(self.room_id, text, **extra)
        self.last_sent = sent
        answer = await self.person.wait_for_reply(self.bot_id, self.room_id, sent)
        # The memory write runs after the reply; let it finish before the next message.
        await self.mnemo.app.writer.drain()
        return answer.body


async def dm(person: Person, bot_id: str, mnemo: Harness, *, encrypted: bool) -> Conversation:
    """A DM the way Element opens one: ``is_direct`` on the invite of the bot."""
    return Conversation(person, await open_dm(person, bot_id, encrypted=encrypted), bot_id, mnemo)
