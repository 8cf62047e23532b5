"""The relay's pending signal (issue 26): an idle relay does not connect to Aurora, so it can pause at 0 ACU.

Real Redis (a private key prefix) and real PostgreSQL; "does not connect" is shown with a
database URL nothing listens on: a relay that tried would fail there.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
import redis
from mercadofresco.outbox.pending import PendingSignal
from mercadofresco.outbox.schema import apply_migrations

from tests.conftest import load_event
from tests.integration.outbox.conftest import metricas_emf

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.integration.outbox.conftest import BusEnCola

pytestmark = pytest.mark.integration

SIN_BASE = "postgresql://postgres@127.0.0.1:1/postgres?connect_timeout=1"  # nothing listens on port 1


@pytest.fixture
def senal(redis_url: str, redis_prefix: str) -> PendingSignal:
    """A signal on this test's keys, its first full check already done (as after the relay's first minute)."""
    s = PendingSignal(redis.Redis.from_url(redis_url), prefix=redis_prefix, full_check_s=3600)
    assert s.has_work()  # the first call is the periodic full check
    return s


def test_signal_says_work_once_per_mark_and_once_per_full_check_period(
    senal: PendingSignal, redis_url: str, redis_prefix: str
) -> None:
    # GIVEN the full check of this period done: nothing marked means nothing to do
    assert not senal.has_work()
    # WHEN the store marks twice (two orders) before the relay looks
    senal.mark()
    senal.mark()
    # THEN one drain takes both, and the flag is gone
    assert senal.has_work()
    assert not senal.has_work()
    # AND the full check comes back when its key expires (Valkey's TTL, at most the period)
    ttl = redis.Redis.from_url(redis_url).ttl(f"{redis_prefix}outbox:comprobacion")
    assert 0 < ttl <= 3600


def test_signal_fails_open_when_valkey_does_not_answer() -> None:
    # GIVEN a Valkey nothing listens on
    caida = PendingSignal(redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.5), prefix="x:")
    # THEN the relay drains (an Aurora wake-up) rather than risk leaving orders behind
    assert caida.has_work()
    # AND the store's mark fails loudly (the order is refused before it commits)
    with pytest.raises(redis.RedisError):
        caida.mark()


def test_idle_relay_returns_without_connecting_and_still_reports_an_empty_backlog(
    senal: PendingSignal,
    app_module: Callable[..., Any],
    lambda_context: Any,
    fresh_environment: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN a relay with the signal on, nothing marked, and a database that cannot be reached
    app = app_module(
        "outbox", DATABASE_URL=SIN_BASE, EVENT_BUS_NAME="bus-mercadofresco", OUTBOX_PENDING_SIGNAL="valkey"
    )
    app._senal = lambda: senal
    capsys.readouterr()
    # WHEN the schedule invokes it
    resultado = app.lambda_handler(load_event("outbox-relay.json"), lambda_context)
    # THEN it returned without touching the database, and the age alarm still gets its gauge
    assert resultado == {"publicadas": 0, "sin_trabajo": 1}
    metricas = metricas_emf(capsys.readouterr().out)
    assert metricas["OutboxPendientes"] == 0
    assert metricas["OutboxAntiguedadPendienteS"] == 0


def test_an_order_placed_through_the_store_marks_the_signal_and_the_relay_publishes_it(
    senal: PendingSignal,
    pg_dsn: str,
    bus_en_cola: BusEnCola,
    app_module: Callable[..., Any],
    lambda_context: Any,
    fresh_environment: None,
) -> None:
    # GIVEN a migrated database, the store and the relay with the signal on
    with psycopg.connect(pg_dsn) as conn:
        apply_migrations(conn)
    tienda = app_module("tienda", DATABASE_URL=pg_dsn, OUTBOX_PENDING_SIGNAL="valkey")
    tienda._senal = lambda: senal
    # WHEN a customer places an order
    respuesta = tienda.lambda_handler(load_event("tienda-crear-pedido.json"), lambda_context)
    assert respuesta["statusCode"] == 201
    pedido_id = json.loads(respuesta["body"])["pedido_id"]
    relay = app_module(
        "outbox",
        DATABASE_URL=pg_dsn,
        EVENT_BUS_NAME="bus-mercadofresco",
        OUTBOX_PENDING_SIGNAL="valkey",
        OUTBOX_DRAIN_S="0.3",
    )
    relay._senal = lambda: senal
    # THEN the next schedule drains it onto the bus
    assert relay.lambda_handler(load_event("outbox-relay.json"), lambda_context)["publicadas"] == 1
    assert [e["detail"]["pedido_id"] for e in bus_en_cola.recibir_todo()] == [pedido_id]
    # AND with nothing left pending, the following minute is idle again
    assert not senal.has_work()


def test_store_refuses_the_order_before_commit_when_the_signal_cannot_be_set(
    pg_dsn: str, app_module: Callable[..., Any], lambda_context: Any, fresh_environment: None
) -> None:
    # GIVEN the store with the signal on and Valkey down
    with psycopg.connect(pg_dsn) as conn:
        apply_migrations(conn)
    tienda = app_module("tienda", DATABASE_URL=pg_dsn, OUTBOX_PENDING_SIGNAL="valkey")
    tienda._senal = lambda: PendingSignal(redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.5))
    # WHEN a customer places an order
    respuesta = tienda.lambda_handler(load_event("tienda-crear-pedido.json"), lambda_context)
    # THEN 503 with Retry-After (the client retries with its Idempotency-Key), and nothing was committed
    assert respuesta["statusCode"] == 503
    assert "Retry-After" in respuesta["headers"]
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM outbox").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM solicitudes_pedido").fetchone() == (0,)
