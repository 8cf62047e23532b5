"""The relay and clean-up Lambdas, imported as Lambda imports them, on PostgreSQL and moto."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from mercadofresco import db
from mercadofresco.dominio.pedidos import Pedido, crear_pedido
from mercadofresco.outbox import environment

from tests.conftest import load_event
from tests.integration.outbox.conftest import metricas_emf

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from tests.integration.outbox.conftest import BusEnCola

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def entorno_nuevo() -> Iterator[None]:
    """Each test gets a fresh execution environment (pool and migrations are cached per environment)."""
    environment.environment.cache_clear()
    db.shared_pool.cache_clear()
    yield
    if db.shared_pool.cache_info().currsize:
        db.shared_pool().close()
    environment.environment.cache_clear()
    db.shared_pool.cache_clear()


def test_relay_handler_on_fresh_database_migrates_publishes_and_reports_backlog(
    pg_dsn: str,
    bus_en_cola: BusEnCola,
    app_module: Callable[..., Any],
    lambda_context: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN a database nobody has migrated, and a relay that drains for a fraction of a second
    app = app_module("outbox", DATABASE_URL=pg_dsn, EVENT_BUS_NAME="bus-mercadofresco", OUTBOX_DRAIN_S="0.3")
    # WHEN the scheduler invokes it on the empty database
    primera = app.lambda_handler(load_event("outbox-relay.json"), lambda_context)
    # THEN it migrated the schema (the same step as the tests and the local run) and found nothing
    assert primera["publicadas"] == 0
    # GIVEN the store then writes three orders
    with psycopg.connect(pg_dsn) as conn:
        for i in range(3):
            datos = {
                "pedido_id": f"P-{i}",
                "cliente_id": "C",
                "email": "c@example.com",
                "lineas": [{"sku": "S", "cantidad": 1, "precio_centimos": 100}],
            }
            crear_pedido(conn, Pedido.desde_dict(datos))
    capsys.readouterr()
    # WHEN the next schedule invokes the relay
    resultado = app.lambda_handler(load_event("outbox-relay.json"), lambda_context)
    # THEN the three orders' events are on the bus and the backlog gauges say it is empty
    assert resultado["publicadas"] == 3
    entregados = bus_en_cola.recibir_todo()
    assert sorted(e["detail"]["pedido_id"] for e in entregados) == ["P-0", "P-1", "P-2"]
    assert {e["detail-type"] for e in entregados} == {"PedidoCreado"}
    metricas = metricas_emf(capsys.readouterr().out)
    assert metricas["OutboxPublicados"] == 3
    assert (metricas["OutboxPendientes"], metricas["OutboxAparcadas"]) == (0, 0)


def test_limpieza_handler_deletes_old_published_rows(
    outbox_dsn: str, app_module: Callable[..., Any], lambda_context: Any
) -> None:
    # GIVEN one row published 8 days ago and one pending
    with psycopg.connect(outbox_dsn) as conn:
        for nombre, publicado in (("viejo", True), ("pendiente", False)):
            conn.execute(
                "INSERT INTO outbox (id, tipo_agregado, agregado_id, tipo_evento, version, payload, publicado,"
                " publicado_en) VALUES (gen_random_uuid(), 'pedido', %s, 'PedidoCreado', 1, '{}', %s,"
                " CASE WHEN %s THEN now() - interval '8 days' END)",
                (nombre, publicado, publicado),
            )
    app = app_module("outbox_limpieza", DATABASE_URL=outbox_dsn, EVENT_BUS_NAME="bus-mercadofresco")
    # WHEN the daily schedule invokes the clean-up
    resultado = app.lambda_handler(load_event("outbox-limpieza.json"), lambda_context)
    # THEN only the old published row is gone
    assert resultado == {"borradas": 1}
    with psycopg.connect(outbox_dsn) as conn:
        assert [a for (a,) in conn.execute("SELECT agregado_id FROM outbox")] == ["pendiente"]
