"""``memory export``: everything the bot holds about the caller here, as a JSON file."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from bot.commands.registry import CommandReply, CommandSpec, Invocation
from bot.commands.services import CommandServices
from bot.messages import Attachment
from memory.records import Fact, FactStatus

EXPORT_FORMAT = "mnemo-export-1"


def fact_record(fact: Fact) -> dict[str, Any]:
    def iso(value: datetime | None) -> str | None:
        return None if value is None else value.isoformat()

    return {
        "id": fact.id,
        "text": fact.text,
        "category": fact.category,
        "status": fact.status.value,
        "source": fact.source.value,
        "room": fact.room,
        "created_at": iso(fact.created_at),
        "valid_from": iso(fact.valid_from),
        "valid_to": iso(fact.valid_to),
        "superseded_by": fact.superseded_by,
    }


class ExportFacts:
    spec = CommandSpec("export", "memory export", "all I hold about you here, as a JSON file")

    def __init__(self, services: CommandServices) -> None:
        self._services = services

    async def run(self, invocation: Invocation) -> CommandReply:
        scope = invocation.scope
        facts = await self._services.store.read(
            lambda tx: tx.facts.list_in_scope(scope, statuses=tuple(FactStatus))
        )
        document = {
            "format": EXPORT_FORMAT,
            "exported_at": invocation.message.time.isoformat(),
            "owner": scope.owner,
            "room": scope.room,
            "scope_mode": scope.mode.value,
            "facts": [fact_record(fact) for fact in facts],
        }
        content = json.dumps(document, ensure_ascii=False, indent=2).encode()
        filename = f"mnemo-memory-{invocation.message.time:%Y%m%d-%H%M%S}.json"
        active = sum(fact.status is FactStatus.ACTIVE for fact in facts)
        return CommandReply(
            f"Here is everything I hold about you here: {active} active facts and "
            f"{len(facts) - active} earlier versions.",
            attachments=(Attachment(filename, content),),
        )
