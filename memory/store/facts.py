"""Scoped reads and writes of facts and their audit trail.

The scope is part of every ``WHERE``: a fact outside it is indistinguishable from an unknown
id. Only the ``admin_*`` functions (reconcile, operator tools) read unscoped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from types import SimpleNamespace as Inserted
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Row,
    Select,
    String,
    and_,
    bindparam,
    cast,
    delete,
    func,
    insert,
    or_,
    select,
    true,
    update,
)
from sqlalchemy.orm import Mapped, Session

from memory.records import (
    Action,
    Actor,
    Fact,
    FactEvent,
    FactSource,
    FactStatus,
    NewFact,
)
from memory.scope import Scope
from memory.store.schema import FACT_EVENTS, FACTS, FactEventRow, FactRow, record_of, rowcount


def utc_now() -> datetime:
    return datetime.now(UTC)


def visible_in(
    scope: Scope, table: type[FactRow] | type[FactEventRow] = FactRow
) -> ColumnElement[bool]:
    """The SQL condition for rows of ``table`` (facts, or their events) that ``scope`` may
    see: the owner always, the rooms by the scope's mode."""
    return and_(table.owner == scope.owner, in_visible_rooms(scope, table.room))


def in_visible_rooms(scope: Scope, room: ColumnElement[str] | Mapped[str]) -> ColumnElement[bool]:
    """The SQL condition on a ``room`` column: the rooms ``scope``'s mode lets it see."""
    rooms = scope.visible_rooms()
    conditions: list[ColumnElement[bool]] = []
    if rooms.only is not None:
        conditions.append(room == rooms.only)
    if rooms.exclude is not None:
        conditions.append(room != rooms.exclude)
    return and_(true(), *conditions)


def to_fact(row: FactRow | Row[Any] | Inserted) -> Fact:
    """A fact from its ORM row, a Core row of ``FACTS`` or the values just inserted."""
    return record_of(Fact, row, status=FactStatus(row.status), source=FactSource(row.source))


def to_event(row: FactEventRow | Row[Any] | Inserted) -> FactEvent:
    return record_of(FactEvent, row, final_action=Action(row.final_action), actor=Actor(row.actor))


@dataclass(frozen=True, slots=True)
class EventDraft:
    """What a caller knows about a decision when it records it."""

    final_action: Action
    actor: Actor
    fact_id: int | None = None
    related_fact_id: int | None = None
    proposed_action: str | None = None
    proposed_target: str | None = None
    guard: str | None = None
    old_text: str | None = None
    new_text: str | None = None
    source_message_id: str | None = None


def facts_by_ids_query(*, only: bool, exclude: bool) -> Select[Any]:
    """Facts by id, the scope in the ``WHERE`` as :func:`visible_in` puts it."""
    conditions = [
        FACTS.c.owner == bindparam("owner"),
        FACTS.c.id.in_(bindparam("ids", expanding=True)),
    ]
    if only:
        conditions.append(FACTS.c.room == bindparam("only_room"))
    if exclude:
        conditions.append(FACTS.c.room != bindparam("excluded_room"))
    return select(FACTS).where(*conditions)


# Every learned fact is one of each: inserted as Core rows (no ORM object and flush).
INSERT_FACT = insert(FACTS).returning(FACTS.c.id)
INSERT_EVENT = insert(FACT_EVENTS).returning(FACT_EVENTS.c.id)
# Recall reads facts by id on every reply: statements built once (as in conversation.py).
FACTS_BY_IDS = {
    (only, exclude): facts_by_ids_query(only=only, exclude=exclude)
    for only in (False, True)
    for exclude in (False, True)
}


class FactRepository:
    """Fact reads and writes inside one open transaction."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def add(self, scope: Scope, new: NewFact, *, embedding_model: str | None = None) -> Fact:
        values = {
            "owner": scope.owner,
            "room": scope.room,
            "text": new.text,
            "category": new.category,
            "status": FactStatus.ACTIVE.value,
            "source": new.source.value,
            "created_at": utc_now(),
            "valid_from": new.valid_from,
            "valid_to": None,
            "superseded_by": None,
            "source_message_id": new.source_message_id,
            "embedding_model": embedding_model,
        }
        result = self.session.execute(INSERT_FACT, values)
        return to_fact(Inserted(id=int(result.scalar_one()), **values))

    def get(self, scope: Scope, fact_id: int) -> Fact | None:
        row = self._row(scope, fact_id)
        return None if row is None else to_fact(row)

    def get_many(self, scope: Scope, fact_ids: Sequence[int]) -> list[Fact]:
        if not fact_ids:
            return []
        rooms = scope.visible_rooms()
        query = FACTS_BY_IDS[(rooms.only is not None, rooms.exclude is not None)]
        values: dict[str, object] = {"owner": scope.owner, "ids": list(fact_ids)}
        if rooms.only is not None:
            values["only_room"] = rooms.only
        if rooms.exclude is not None:
            values["excluded_room"] = rooms.exclude
        rows = self.session.execute(query, values).all()
        return [to_fact(row) for row in rows]

    def list_in_scope(
        self,
        scope: Scope,
        *,
        statuses: Sequence[FactStatus] = (FactStatus.ACTIVE,),
        limit: int | None = None,
        offset: int = 0,
        newest_first: bool = False,
    ) -> list[Fact]:
        query = (
            select(FactRow)
            .where(visible_in(scope), FactRow.status.in_([s.value for s in statuses]))
            .order_by(FactRow.id.desc() if newest_first else FactRow.id)
            .offset(offset)
            .limit(limit)
        )
        return [to_fact(row) for row in self.session.scalars(query).all()]

    def matching(self, scope: Scope, needle: str, *, limit: int) -> list[Fact]:
        """Active facts in ``scope`` whose number or text contains ``needle`` (autocomplete)."""
        query = (
            select(FactRow)
            .where(
                visible_in(scope),
                FactRow.status == FactStatus.ACTIVE.value,
                or_(
                    cast(FactRow.id, String).contains(needle, autoescape=True),
                    FactRow.text.icontains(needle, autoescape=True),
                ),
            )
            .order_by(FactRow.id)
            .limit(limit)
        )
        return [to_fact(row) for row in self.session.scalars(query).all()]

    def count(self, scope: Scope, *, statuses: Sequence[FactStatus] = (FactStatus.ACTIVE,)) -> int:
        query = select(func.count(FactRow.id)).where(
            visible_in(scope), FactRow.status.in_([s.value for s in statuses])
        )
        return int(self.session.execute(query).scalar_one())

    def set_status(
        self,
        scope: Scope,
        fact_id: int,
        status: FactStatus,
        *,
        superseded_by: int | None = None,
        valid_to: datetime | None = None,
    ) -> Fact | None:
        """Change a visible fact's status; ``None`` if the id is not visible in ``scope``."""
        row = self._row(scope, fact_id)
        if row is None:
            return None
        row.status = status.value
        row.superseded_by = superseded_by
        row.valid_to = valid_to
        self.session.flush()
        return to_fact(row)

    def version_chain(self, scope: Scope, fact_id: int) -> list[int]:
        """The fact and every older version it replaced (empty if not visible in ``scope``)."""
        if self._row(scope, fact_id) is None:
            return []
        return self._with_older_versions([fact_id], visible_in(scope))

    def _with_older_versions(self, ids: Sequence[int], among: ColumnElement[bool]) -> list[int]:
        """``ids`` and every older version they replaced, of the facts ``among`` selects."""
        chain = list(ids)
        frontier = list(ids)
        while frontier:
            query = select(FactRow.id).where(among, FactRow.superseded_by.in_(frontier))
            frontier = [i for i in self.session.scalars(query).all() if i not in chain]
            chain.extend(frontier)
        return chain

    def erase_all(self, scope: Scope) -> list[int]:
        """Remove every fact visible in ``scope``, whatever its status, with its events."""
        ids = list(self.session.scalars(select(FactRow.id).where(visible_in(scope))).all())
        self.erase_ids(scope, ids)
        return ids

    def erase_ids(self, scope: Scope, ids: Sequence[int]) -> int:
        """Remove these facts for good, with their events; how many events went with them."""
        if not ids:
            return 0
        return self._delete(list(ids), visible_in(scope), FactEventRow.owner == scope.owner)

    def _delete(
        self, ids: list[int], facts: ColumnElement[bool], events: ColumnElement[bool]
    ) -> int:
        """Delete facts by id, their events, and the links of newer versions to them; how
        many events were deleted."""
        deleted_events = self.session.execute(
            delete(FactEventRow).where(
                events, or_(FactEventRow.fact_id.in_(ids), FactEventRow.related_fact_id.in_(ids))
            )
        )
        self.session.execute(
            update(FactRow).where(facts, FactRow.superseded_by.in_(ids)).values(superseded_by=None)
        )
        self.session.execute(delete(FactRow).where(facts, FactRow.id.in_(ids)))
        return rowcount(deleted_events)

    def record_event(self, scope: Scope, draft: EventDraft) -> FactEvent:
        values = {
            "owner": scope.owner,
            "room": scope.room,
            "fact_id": draft.fact_id,
            "related_fact_id": draft.related_fact_id,
            "proposed_action": draft.proposed_action,
            "proposed_target": draft.proposed_target,
            "final_action": draft.final_action.value,
            "guard": draft.guard,
            "old_text": draft.old_text,
            "new_text": draft.new_text,
            "actor": draft.actor.value,
            "created_at": utc_now(),
            "undone_at": None,
            "source_message_id": draft.source_message_id,
        }
        result = self.session.execute(INSERT_EVENT, values)
        return to_event(Inserted(id=int(result.scalar_one()), **values))

    def events_for_fact(self, scope: Scope, fact_id: int) -> list[FactEvent]:
        """The audit trail of one visible fact, oldest first; empty if not visible."""
        if self._row(scope, fact_id) is None:
            return []
        query = (
            select(FactEventRow)
            .where(
                FactEventRow.owner == scope.owner,
                or_(FactEventRow.fact_id == fact_id, FactEventRow.related_fact_id == fact_id),
            )
            .order_by(FactEventRow.id)
        )
        return [to_event(row) for row in self.session.scalars(query).all()]

    def latest_events(
        self, scope: Scope, *, actors: Sequence[Actor], limit: int = 20
    ) -> list[FactEvent]:
        """The newest events of ``scope``'s owner and rooms by ``actors``, newest first."""
        condition = visible_in(scope, FactEventRow)
        query = (
            select(FactEventRow)
            .where(condition, FactEventRow.actor.in_([a.value for a in actors]))
            .order_by(FactEventRow.id.desc())
            .limit(limit)
        )
        return [to_event(row) for row in self.session.scalars(query).all()]

    def latest_undoable_event(
        self, scope: Scope, *, actors: Sequence[Actor], actions: Sequence[Action]
    ) -> FactEvent | None:
        """The newest not-yet-undone event of ``scope`` by ``actors`` with one of ``actions``
        (filtered in SQL, so a long run of NONE events cannot hide older changes)."""
        query = (
            select(FactEventRow)
            .where(
                visible_in(scope, FactEventRow),
                FactEventRow.undone_at.is_(None),
                FactEventRow.actor.in_([actor.value for actor in actors]),
                FactEventRow.final_action.in_([action.value for action in actions]),
            )
            .order_by(FactEventRow.id.desc())
            .limit(1)
        )
        row = self.session.scalars(query).one_or_none()
        return None if row is None else to_event(row)

    def mark_undone(self, scope: Scope, event_id: int) -> None:
        self.session.execute(
            update(FactEventRow)
            .where(FactEventRow.owner == scope.owner, FactEventRow.id == event_id)
            .values(undone_at=utc_now())
        )

    def set_embedding_model(self, fact_ids: Sequence[int], model: str) -> None:
        """Record which model embedded these facts (used by reconcile, which is unscoped)."""
        if fact_ids:
            self.session.execute(
                update(FactRow).where(FactRow.id.in_(list(fact_ids))).values(embedding_model=model)
            )

    def admin_active_facts(self) -> list[Fact]:
        """Every active fact of every scope. Operator and reconcile use only."""
        query = select(FactRow).where(FactRow.status == FactStatus.ACTIVE.value)
        return [to_fact(row) for row in self.session.scalars(query).all()]

    def admin_active_ids(self, fact_ids: Sequence[int]) -> set[int]:
        """Which of these facts, of any scope, are active now. Reconcile use only."""
        if not fact_ids:
            return set()
        query = select(FactRow.id).where(
            FactRow.id.in_(list(fact_ids)), FactRow.status == FactStatus.ACTIVE.value
        )
        return set(self.session.scalars(query).all())

    def admin_owners(self, fact_ids: Sequence[int]) -> set[str]:
        """Whose facts these are, of any scope. Reconcile use only (to lock them)."""
        if not fact_ids:
            return set()
        query = select(FactRow.owner).where(FactRow.id.in_(list(fact_ids))).distinct()
        return set(self.session.scalars(query).all())

    def admin_changed_facts_since(
        self, since: datetime | None, *, also_ids: Sequence[int] = ()
    ) -> list[Fact]:
        """Active facts of every scope created, or touched by an event, after ``since`` (None:
        all); consolidation's own events do not count, so a run does not wake itself up."""
        active = FactRow.status == FactStatus.ACTIVE.value
        if since is None:
            query = select(FactRow).where(active).order_by(FactRow.id)
            return [to_fact(row) for row in self.session.scalars(query).all()]
        touched = select(FactEventRow.fact_id).where(
            or_(
                and_(
                    FactEventRow.created_at > since,
                    FactEventRow.actor != Actor.CONSOLIDATION.value,
                ),
                FactEventRow.undone_at > since,
            )
        )
        related = select(FactEventRow.related_fact_id).where(FactEventRow.undone_at > since)
        query = (
            select(FactRow)
            .where(
                active,
                or_(
                    FactRow.created_at > since,
                    FactRow.id.in_(touched),
                    FactRow.id.in_(related),
                    FactRow.id.in_(list(also_ids)),
                ),
            )
            .order_by(FactRow.id)
        )
        return [to_fact(row) for row in self.session.scalars(query).all()]

    def undone_pairs(self, scope: Scope, actor: Actor) -> set[frozenset[int]]:
        """The (fact, related fact) pairs of ``actor``'s undone events in ``scope``."""
        query = select(FactEventRow.fact_id, FactEventRow.related_fact_id).where(
            FactEventRow.owner == scope.owner,
            FactEventRow.room == scope.room,
            FactEventRow.actor == actor.value,
            FactEventRow.undone_at.is_not(None),
        )
        rows = self.session.execute(query).all()
        return {frozenset((first, second)) for first, second in rows if first and second}

    def admin_purge_deleted_before(self, cutoff: datetime) -> list[int]:
        """Erase facts soft-deleted before ``cutoff``, with the inactive versions they
        replaced and the events naming them, so the text is really gone; the erased ids."""
        ended = func.coalesce(FactRow.valid_to, FactRow.created_at)
        query = select(FactRow.id).where(FactRow.status == FactStatus.DELETED.value, ended < cutoff)
        deleted = self.session.scalars(query).all()
        chain = self._with_older_versions(deleted, FactRow.status != FactStatus.ACTIVE.value)
        if chain:
            self._delete(chain, true(), true())
        return chain

    def _row(self, scope: Scope, fact_id: int) -> FactRow | None:
        query = select(FactRow).where(visible_in(scope), FactRow.id == fact_id)
        return self.session.scalars(query).one_or_none()
