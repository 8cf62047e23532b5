"""The daily clean-up and the backlog metrics."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest
from mercadofresco.outbox.cleanup import purge_published
from mercadofresco.outbox.config import OutboxConfig
from mercadofresco.outbox.postgres import add_event
from mercadofresco.outbox.relay import OutboxRelay

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

pytestmark = pytest.mark.integration


def _fila(pool: ConnectionPool, nombre: str, publicado_hace: str | None, creado_hace: str = "10 days") -> None:
    """An outbox row created ``creado_hace`` ago, published ``publicado_hace`` ago (None = pending)."""
    with pool.connection() as conn:
        id_ = add_event(conn, "pedido", nombre, "PedidoCreado", {"pedido_id": nombre})
        conn.execute(
            "UPDATE outbox SET creado_en = now() - %s::interval, publicado = %s,"
            " publicado_en = CASE WHEN %s THEN now() - %s::interval END WHERE id = %s",
            (creado_hace, publicado_hace is not None, publicado_hace is not None, publicado_hace, id_),
        )


def _quedan(pool: ConnectionPool) -> set[str]:
    with pool.connection() as conn:
        return {a for (a,) in conn.execute("SELECT agregado_id FROM outbox")}


def test_purge_published_deletes_only_published_rows_older_than_7_days(pool: ConnectionPool) -> None:
    # GIVEN published rows 8 and 7.5 days old, one 6 days old, and pending and parked rows 10 days old
    _fila(pool, "viejo-1", "8 days")
    _fila(pool, "viejo-2", "7 days 12 hours")
    _fila(pool, "reciente", "6 days")
    _fila(pool, "pendiente", None)
    _fila(pool, "aparcado", None)
    with pool.connection() as conn:
        conn.execute("UPDATE outbox SET aparcado_en = now(), motivo_aparcado = 'x' WHERE agregado_id = 'aparcado'")
    # WHEN the clean-up runs in batches of one row
    config = OutboxConfig(bus_name="bus-mercadofresco", purge_batch=1)
    borradas = purge_published(pool, config, time.monotonic() + 30)
    # THEN only the two old published rows are gone
    assert borradas == 2
    assert _quedan(pool) == {"reciente", "pendiente", "aparcado"}


def test_purge_published_when_deadline_passed_deletes_nothing(pool: ConnectionPool) -> None:
    # GIVEN an old published row and a run whose deadline has already passed
    _fila(pool, "viejo", "9 days")
    # WHEN the clean-up runs
    borradas = purge_published(pool, OutboxConfig(bus_name="b"), until=0.0)
    # THEN it stops at once and the row waits for tomorrow's run
    assert borradas == 0
    assert _quedan(pool) == {"viejo"}


def test_status_reports_pending_oldest_age_and_parked(pool: ConnectionPool) -> None:
    # GIVEN two pending rows (the oldest 90 s old), one published and one parked
    _fila(pool, "a", None, creado_hace="90 seconds")
    _fila(pool, "b", None, creado_hace="5 seconds")
    _fila(pool, "c", "1 minute")
    _fila(pool, "d", None, creado_hace="1 hour")
    with pool.connection() as conn:
        conn.execute("UPDATE outbox SET aparcado_en = now(), motivo_aparcado = 'x' WHERE agregado_id = 'd'")
    # WHEN the relay reads the backlog
    estado = OutboxRelay(pool, None, OutboxConfig(bus_name="b")).status()  # type: ignore[arg-type]
    # THEN parked rows do not count as pending nor age the backlog
    assert (estado.pending, estado.parked) == (2, 1)
    assert 90 <= estado.max_age_s < 100
