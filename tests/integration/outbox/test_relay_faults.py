"""Faults actually injected: a relay killed between PutEvents and commit; PostgreSQL restarted mid-drain."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from typing import TYPE_CHECKING

import psycopg
import pytest
from mercadofresco.aws import client
from mercadofresco.outbox.postgres import add_event
from mercadofresco.outbox.relay import OutboxRelay
from mercadofresco.outbox.schema import apply_migrations
from psycopg_pool import ConnectionPool
from sam_emulator import private_postgres
from sam_emulator.private_postgres import PrivatePostgres

from tests.integration.outbox.conftest import Consumidor, crear_bus_en_cola

if TYPE_CHECKING:
    from collections.abc import Iterator

    from mercadofresco.outbox.config import OutboxConfig

    from tests.integration.outbox.conftest import BusEnCola

pytestmark = pytest.mark.integration

HANG_GUARD_S = 900  # only stops a hung run; the steps below wait on events, not on time


# The child is a relay that SIGKILLs itself the moment PutEvents has returned: the events are
# on the bus, its transaction never commits, its connection just vanishes.
RELAY_QUE_MUERE = textwrap.dedent(
    """
    import os, signal, sys
    from psycopg_pool import ConnectionPool
    from mercadofresco.aws import client
    from mercadofresco.outbox.config import OutboxConfig
    from mercadofresco.outbox.relay import OutboxRelay

    eventos = client("events", endpoint_url=sys.argv[2])
    eventos.meta.events.register(
        "after-call.events.PutEvents", lambda **_: os.kill(os.getpid(), signal.SIGKILL)
    )
    with ConnectionPool(sys.argv[1], min_size=1, max_size=1) as pool:
        OutboxRelay(pool, eventos, OutboxConfig(bus_name="bus-mercadofresco")).process_batch()
    print("not killed")
    """
)


def _pendientes(dsn: str) -> set[str]:
    with psycopg.connect(dsn) as conn:
        return {str(i) for (i,) in conn.execute("SELECT id FROM outbox WHERE NOT publicado")}


def test_relay_when_killed_between_put_events_and_commit_republishes_same_ids(
    outbox_dsn: str, config: OutboxConfig, moto_server: str
) -> None:
    # GIVEN five pending events and a bus delivering to a queue, on a moto server
    bus = crear_bus_en_cola(endpoint_url=moto_server)
    with psycopg.connect(outbox_dsn) as conn:
        ids = {str(add_event(conn, "pedido", f"p{i}", "PedidoCreado", {"pedido_id": f"p{i}"})) for i in range(5)}
    # WHEN a relay process publishes them and is SIGKILLed before its commit
    hijo = subprocess.run(
        [sys.executable, "-c", RELAY_QUE_MUERE, outbox_dsn, moto_server],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        env=os.environ.copy(),
    )
    # THEN the events went out but the rows are still pending
    assert hijo.returncode == -9, hijo.stderr
    assert _pendientes(outbox_dsn) == ids
    # WHEN another relay runs
    with ConnectionPool(outbox_dsn, min_size=1, max_size=1) as pool:
        OutboxRelay(pool, client("events", endpoint_url=moto_server), config).process_batch()
    # THEN each event was delivered twice with the same id (the duplicate is detectable) and all are marked
    entregas = Counter(e["detail"]["id"] for e in bus.recibir_todo())
    assert entregas == dict.fromkeys(ids, 2)
    assert _pendientes(outbox_dsn) == set()


@pytest.fixture
def cluster() -> Iterator[PrivatePostgres]:
    """A private PostgreSQL server (the installed version) that can really be restarted, not the shared one."""
    if not private_postgres.available():
        pytest.skip("needs PostgreSQL server binaries (initdb, postgres)")
    with PrivatePostgres() as servidor:
        yield servidor


def test_relay_when_postgres_restarts_mid_drain_recovers_and_loses_nothing(
    cluster: PrivatePostgres, config: OutboxConfig, bus_en_cola: BusEnCola
) -> None:
    # GIVEN 3,000 pending events on a private cluster and a relay draining them
    with psycopg.connect(cluster.url) as conn:
        apply_migrations(conn)
        conn.execute(
            "INSERT INTO outbox (id, tipo_agregado, agregado_id, tipo_evento, version, payload)"
            " SELECT gen_random_uuid(), 'pedido', 'p' || g, 'PedidoCreado', 1,"
            "        jsonb_build_object('pedido_id', 'p' || g)"
            " FROM generate_series(1, 3000) AS g"
        )
        ids = {str(i) for (i,) in conn.execute("SELECT id FROM outbox")}
    consumidor = Consumidor(bus_en_cola)
    pool = ConnectionPool(
        cluster.url, min_size=1, max_size=1, open=True, timeout=2, check=ConnectionPool.check_connection
    )
    parar = threading.Event()
    reloj = lambda: float("inf") if parar.is_set() else time.monotonic()  # noqa: E731 - ends the drain on demand
    eventos = consumidor.frenar(client("events"))
    # The relay's 51st PutEvents (500 events out) waits, inside its batch's transaction, until the restart
    # is done: the outage always lands mid-drain and mid-transaction, however the threads are scheduled.
    a_medias, reiniciado, llamadas = threading.Event(), threading.Event(), [0]

    def esperar_reinicio(**_: object) -> None:
        llamadas[0] += 1
        if llamadas[0] == 51:
            a_medias.set()
            assert reiniciado.wait(HANG_GUARD_S), "the test never restarted PostgreSQL"

    eventos.meta.events.register("before-call.events.PutEvents", esperar_reinicio)
    relay = OutboxRelay(pool, eventos, config, clock=reloj)
    resultado = []
    hilo = threading.Thread(target=lambda: resultado.append(relay.drain(time.monotonic() + HANG_GUARD_S)), daemon=True)
    hilo.start()
    # WHEN PostgreSQL restarts once part of the backlog is published
    assert a_medias.wait(HANG_GUARD_S), "the relay never published 500 events"
    cluster.reset()
    reiniciado.set()
    while _pendientes(cluster.url):
        assert hilo.is_alive(), "the relay stopped draining"
        time.sleep(0.1)
    parar.set()
    hilo.join(HANG_GUARD_S)
    assert not hilo.is_alive(), "the relay did not stop"
    entregados = consumidor.terminar()
    # THEN the relay saw the outage, carried on, and every event was delivered (a duplicate at most per row)
    assert {e["detail"]["id"] for e in entregados} == ids
    assert len(entregados) - len(ids) <= config.batch_max
    pool.close()
    assert resultado and resultado[0].db_errors >= 1
