"""Outbox rows as EventBridge ``PutEvents`` entries, and the calls they are grouped into.

Pure functions (no driver, no client): the relay decides what to send, these decide how.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import uuid
    from collections.abc import Iterable, Iterator
    from datetime import datetime

    from mercadofresco.outbox.config import OutboxConfig

_TIME_FIELD_BYTES = 14  # how EventBridge counts a present ``Time`` towards the 256 KB


@dataclass(frozen=True, slots=True)
class OutboxRow:
    """A claimed outbox row; ``bloqueada`` = an earlier event of its aggregate is held elsewhere.

    ``detalle`` is the entry's ``Detail`` as PostgreSQL wrote it (``postgres.ROW_COLUMNS``): the
    payload with the outbox id as ``id`` and the row's ``version``, which a payload can never override.
    """

    id: uuid.UUID
    tipo_agregado: str
    agregado_id: str
    tipo_evento: str
    version: int
    detalle: str
    creado_en: datetime
    intentos: int
    bloqueada: bool = False

    @property
    def agregado(self) -> tuple[str, str]:
        return (self.tipo_agregado, self.agregado_id)


def entry(row: OutboxRow, config: OutboxConfig) -> dict[str, Any]:
    """The ``PutEvents`` entry for a row: its ``Detail`` carries the outbox id as ``id``."""
    return {
        "Source": config.source,
        "DetailType": row.tipo_evento,
        "Detail": row.detalle,
        "EventBusName": config.bus_name,
        "Time": row.creado_en,
    }


def entry_size(entry: dict[str, Any]) -> int:
    """An entry's size as EventBridge counts it (UTF-8 of Source, DetailType, Detail, Resources; Time = 14)."""
    size = sum(len(entry.get(k, "").encode()) for k in ("Source", "DetailType", "Detail"))
    size += sum(len(r.encode()) for r in entry.get("Resources", ()))
    return size + (_TIME_FIELD_BYTES if "Time" in entry else 0)


def split_entries(
    pending: Iterable[tuple[OutboxRow, dict[str, Any], int]], config: OutboxConfig
) -> Iterator[list[tuple[OutboxRow, dict[str, Any], int]]]:
    """Group ``(row, entry, size)`` in order into calls of ≤ N entries and ≤ the byte limit.

    A call also holds at most one event per aggregate: EventBridge does not order the
    entries of one call, so two events of the same order go in consecutive calls.
    """
    current: list[tuple[OutboxRow, dict[str, Any], int]] = []
    current_bytes = 0
    aggregates: set[tuple[str, str]] = set()
    for item in pending:
        row, _, size = item
        full = len(current) >= config.entries_per_call or current_bytes + size > config.bytes_per_call
        if current and (full or row.agregado in aggregates):
            yield current
            current, current_bytes, aggregates = [], 0, set()
        current.append(item)
        current_bytes += size
        aggregates.add(row.agregado)
    if current:
        yield current
