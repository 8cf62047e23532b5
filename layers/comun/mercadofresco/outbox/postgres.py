"""The outbox's SQL: claim, mark, record failures, park, measure, clean up.

Every function runs in the caller's transaction (``conn``); the relay owns the
transaction boundaries. The claim's lock/visibility timeline, for two relays A and B::

    A: BEGIN ─ claim rows 1..100 (row locks) ─ PutEvents ─ mark accepted ─ COMMIT
    B: BEGIN ─ claim: SKIP LOCKED jumps 1..100, takes 101..200 ────────── ... ─ COMMIT

If A dies before COMMIT its locks vanish with its connection and its rows are claimed
again: published twice, with the same ``id`` (at least once, never lost).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mercadofresco.outbox.events import OutboxRow

if TYPE_CHECKING:
    from collections.abc import Mapping

    from psycopg import Connection

# A ``OutboxRow``'s columns, in order. PostgreSQL writes the entry's ``Detail`` (jsonb to text, in C):
# parsing the payload into a dict and dumping it again cost the relay ~0.01 ms per event (~5 % of it).
# ``||`` keeps its right operand's keys, so the outbox id and the row's version beat the payload's.
ROW_COLUMNS = (
    "id, tipo_agregado, agregado_id, tipo_evento, version,"
    " (payload || jsonb_build_object('id', id::text, 'version', version))::text AS detalle, creado_en, intentos"
)

# ``bloqueada``: an earlier pending event of the same aggregate is not in this batch (another
# relay holds it, or it did not fit). EXISTS reads the statement's snapshot, so a row another
# relay holds counts as pending until that relay commits: publishing waits, order is kept.
_CLAIM = f"""
WITH claimed AS (
    SELECT {ROW_COLUMNS}, secuencia
    FROM outbox
    WHERE NOT publicado AND aparcado_en IS NULL
    ORDER BY creado_en, secuencia
    LIMIT %(batch_size)s
    FOR UPDATE SKIP LOCKED
)
SELECT l.id, l.tipo_agregado, l.agregado_id, l.tipo_evento, l.version, l.detalle, l.creado_en, l.intentos,
       EXISTS (
           SELECT 1 FROM outbox e
           WHERE e.tipo_agregado = l.tipo_agregado AND e.agregado_id = l.agregado_id
             AND NOT e.publicado AND e.aparcado_en IS NULL
             AND (e.creado_en, e.secuencia) < (l.creado_en, l.secuencia)
             AND e.id NOT IN (SELECT id FROM claimed)
       ) AS bloqueada
FROM claimed l
ORDER BY l.creado_en, l.secuencia
"""

_RECORD_FAILURES = """
UPDATE outbox o
SET intentos = o.intentos + f.rejections,
    ultimo_error = f.error,
    aparcado_en = CASE WHEN NOT o.publicado AND o.intentos + f.rejections >= %(max)s THEN clock_timestamp() END,
    motivo_aparcado = CASE WHEN NOT o.publicado AND o.intentos + f.rejections >= %(max)s
        THEN 'rejected ' || (o.intentos + f.rejections) || ' times; last: ' || f.error END
FROM unnest(%(ids)s::uuid[], %(rejections)s::int[], %(errors)s::text[]) AS f(id, rejections, error)
WHERE o.id = f.id
RETURNING o.id, o.aparcado_en IS NOT NULL AS parked
"""


@dataclass(frozen=True, slots=True)
class OutboxStatus:
    """What the metrics and alarms watch."""

    pending: int
    max_age_s: float
    parked: int


def claim(conn: Connection, batch_size: int) -> list[OutboxRow]:
    """Lock up to ``batch_size`` pending rows no other relay holds, oldest first."""
    rows = conn.execute(_CLAIM, {"batch_size": batch_size}).fetchall()
    return [OutboxRow(*row) for row in rows]


def mark_published(conn: Connection, ids: list[uuid.UUID]) -> None:
    """Mark rows EventBridge accepted (and only those)."""
    if ids:
        conn.execute(
            "UPDATE outbox SET publicado = true, publicado_en = clock_timestamp() WHERE id = ANY(%s)",
            (ids,),
        )


def record_failures(conn: Connection, failures: dict[uuid.UUID, tuple[int, str]], max_attempts: int) -> list[uuid.UUID]:
    """Add each row's rejections to ``intentos`` and keep its last error; park the ones at the limit.

    Call after :func:`mark_published`: a row accepted on a re-send keeps its count but is
    never parked. Returns the ids parked now.
    """
    if not failures:
        return []
    ids = list(failures)
    rows = conn.execute(
        _RECORD_FAILURES,
        {
            "ids": ids,
            "rejections": [failures[i][0] for i in ids],
            "errors": [failures[i][1][:1000] for i in ids],
            "max": max_attempts,
        },
    ).fetchall()
    return [id_ for id_, parked in rows if parked]


def park(conn: Connection, id_: uuid.UUID, reason: str) -> None:
    """Park a row that can never be sent (e.g. larger than PutEvents accepts)."""
    conn.execute(
        "UPDATE outbox SET aparcado_en = clock_timestamp(), motivo_aparcado = %s, ultimo_error = %s WHERE id = %s",
        (reason, reason, id_),
    )


def status(conn: Connection) -> OutboxStatus:
    """Pending rows, age of the oldest pending one (seconds), parked rows."""
    pending, age_s, parked = conn.execute(
        "SELECT count(*) FILTER (WHERE aparcado_en IS NULL),"
        " COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - min(creado_en) FILTER (WHERE aparcado_en IS NULL)), 0),"
        " (SELECT count(*) FROM outbox WHERE aparcado_en IS NOT NULL)"
        " FROM outbox WHERE NOT publicado"
    ).fetchone()
    return OutboxStatus(int(pending), float(age_s), int(parked))


def delete_published(conn: Connection, retention_days: int, batch_size: int) -> int:
    """Delete up to ``batch_size`` rows published more than ``retention_days`` ago; return how many."""
    cursor = conn.execute(
        "DELETE FROM outbox WHERE id IN ("
        " SELECT id FROM outbox WHERE publicado AND publicado_en < clock_timestamp() - make_interval(days => %s)"
        " ORDER BY publicado_en LIMIT %s FOR UPDATE SKIP LOCKED)",
        (retention_days, batch_size),
    )
    return cursor.rowcount


def add_event(
    conn: Connection,
    aggregate_type: str,
    aggregate_id: str,
    event_type: str,
    payload: Mapping[str, Any],
    version: int = 1,
) -> uuid.UUID:
    """Insert one outbox row in the caller's transaction; return its id (the event's ``id``)."""
    # The driver is imported by the first write, not by importing the module (the store API's init phase).
    from psycopg.types.json import Jsonb

    outbox_id = uuid.uuid4()
    conn.execute(
        "INSERT INTO outbox (id, tipo_agregado, agregado_id, tipo_evento, version, payload)"
        " VALUES (%s, %s, %s, %s, %s, %s)",
        (outbox_id, aggregate_type, aggregate_id, event_type, version, Jsonb(dict(payload))),
    )
    return outbox_id
