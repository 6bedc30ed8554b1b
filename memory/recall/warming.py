"""After a start, the people who spoke last find their scope already in memory.

The LanceDB index keeps recently searched scopes' vectors in memory (its scope cache); after
a start it is empty, and the first message of each person loads their scope. When many people
write at once after a restart, those loads run all together and each first answer waits for
them (fifty people: about 250 ms of the first round, docs/benchmarks.md "Load"). So the bot
loads the scopes of the people who spoke last at start, in the background: the scopes their
next messages will have (each from a message's own person and room), loaded through the
cache's usual path, so nothing of one scope can reach another.
"""

from __future__ import annotations

from memory.errors import InvalidScopeError
from memory.index.base import ScopeWarming, VectorIndex
from memory.scope import Scope, ScopeMode
from memory.store import Store

# People whose scopes are warmed: the cache's own bound decides how many it keeps.
RECENT_SPEAKERS = 200


async def warm_recent_speakers(
    store: Store, index: VectorIndex, mode: ScopeMode, *, limit: int = RECENT_SPEAKERS
) -> int:
    """How many scopes are in memory afterwards (0 where the index keeps none)."""
    if not isinstance(index, ScopeWarming):
        return 0
    async with store.read() as transaction:
        speakers = await transaction.turns.recent_speakers(limit=limit)
    scopes = []
    # The least recent first: the cache keeps the most recently used the longest.
    for person, room in reversed(speakers):
        try:
            scopes.append(Scope(person, room, mode))
        except InvalidScopeError:
            continue  # a turn no message of today's adapters could have made
    return await index.warm(scopes)
