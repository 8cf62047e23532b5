"""OutboxRelay against a real PostgreSQL and EventBridge on moto delivering to SQS."""

from __future__ import annotations

import threading
import uuid
from collections import defaultdict
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from botocore.stub import Stubber
from mercadofresco.aws import client
from mercadofresco.outbox.config import OutboxConfig
from mercadofresco.outbox.postgres import add_event
from mercadofresco.outbox.relay import EVENTS_CLIENT_CONFIG, OutboxRelay, RelayResult
from psycopg_pool import ConnectionPool

from tests.integration.outbox.conftest import Consumidor

if TYPE_CHECKING:
    from tests.integration.outbox.conftest import BusEnCola

pytestmark = pytest.mark.integration

AGREGADOS = 250  # 40 events each, 250 rows apart: with 4 x 100 rows in flight, relays do block each other
FILAS = 10_000
HANG_GUARD_S = 900  # only stops a hung run; how fast a drain is belongs in bench/bench_outbox.py


def _sembrar(pool: ConnectionPool, filas: int, agregados: int) -> None:
    """``filas`` events spread over ``agregados`` orders; ``n`` grows per order in creation order."""
    with pool.connection() as conn:
        conn.execute(
            "INSERT INTO outbox (id, tipo_agregado, agregado_id, tipo_evento, version, payload)"
            " SELECT gen_random_uuid(), 'pedido', 'p' || (g %% %(a)s), 'PedidoActualizado', 1,"
            "        jsonb_build_object('pedido_id', 'p' || (g %% %(a)s), 'n', g)"
            " FROM generate_series(0, %(f)s - 1) AS g ORDER BY g",
            {"a": agregados, "f": filas},
        )


def _ids_en_bd(pool: ConnectionPool, publicado: bool) -> set[str]:
    with pool.connection() as conn:
        return {str(i) for (i,) in conn.execute("SELECT id FROM outbox WHERE publicado = %s", (publicado,))}


def _vaciar(relay: OutboxRelay) -> RelayResult:
    total = RelayResult()
    while (lote := relay.process_batch()).claimed:
        total.add(lote)
    return total


def test_relays_when_four_drain_in_parallel_deliver_each_once_in_order(
    outbox_dsn: str, pool: ConnectionPool, config: OutboxConfig, bus_en_cola: BusEnCola
) -> None:
    # GIVEN 10,000 pending events of 1,000 orders (10 each, interleaved)
    _sembrar(pool, FILAS, AGREGADOS)
    pools = [ConnectionPool(outbox_dsn, min_size=1, max_size=1, open=True) for _ in range(4)]
    consumidor = Consumidor(bus_en_cola)
    relays = [OutboxRelay(p, consumidor.frenar(client("events")), config) for p in pools]
    errores: list[BaseException] = []
    retenidas: list[int] = []

    def correr(relay: OutboxRelay) -> None:
        try:
            retenidas.append(_vaciar(relay).held)
        except BaseException as exc:  # surfaced in the main thread
            errores.append(exc)

    # WHEN four relays drain the table at once, in real threads with their own connections
    hilos = [threading.Thread(target=correr, args=(r,)) for r in relays]
    for h in hilos:
        h.start()
    for h in hilos:
        h.join(timeout=HANG_GUARD_S)
    assert not any(h.is_alive() for h in hilos), "a relay hung"
    for p in pools:
        p.close()
    entregados = consumidor.terminar()

    # THEN every event was delivered exactly once by the relays, each order's events in order
    assert errores == []
    ids = [e["detail"]["id"] for e in entregados]
    assert len(ids) == FILAS
    assert set(ids) == _ids_en_bd(pool, publicado=True)
    assert _ids_en_bd(pool, publicado=False) == set()
    por_pedido: dict[str, list[int]] = defaultdict(list)
    for e in entregados:
        por_pedido[e["detail"]["pedido_id"]].append(e["detail"]["n"])
    assert len(por_pedido) == AGREGADOS
    assert all(ns == sorted(ns) for ns in por_pedido.values())
    assert sum(retenidas) > 0  # the relays did get in each other's way: order was really at stake


class _Grabadora:
    """Records the ``Entries`` of every PutEvents call a client makes."""

    def __init__(self, eventos: Any) -> None:
        self.llamadas: list[list[str]] = []
        eventos.meta.events.register("provide-client-params.events.PutEvents", self._grabar)

    def _grabar(self, params: dict[str, Any], **_: Any) -> None:
        import json

        self.llamadas.append([json.loads(e["Detail"])["id"] for e in params["Entries"]])


def _respuesta(*errores: str | None) -> dict[str, Any]:
    entradas = [{"ErrorCode": e, "ErrorMessage": "no"} if e else {"EventId": str(uuid.uuid4())} for e in errores]
    return {"FailedEntryCount": sum(1 for e in errores if e), "Entries": entradas}


def _cinco_pedidos(pool: ConnectionPool) -> list[str]:
    with pool.connection() as conn:
        return [str(add_event(conn, "pedido", f"p{i}", "PedidoCreado", {"pedido_id": f"p{i}"})) for i in range(5)]


def test_relay_when_some_entries_fail_resends_only_those_and_marks_only_accepted(
    pool: ConnectionPool, config: OutboxConfig
) -> None:
    # GIVEN five pending events and an EventBridge that rejects entries 2 and 4 once
    ids = _cinco_pedidos(pool)
    eventos = client("events")
    grabadora = _Grabadora(eventos)
    with Stubber(eventos) as stub:
        stub.add_response("put_events", _respuesta(None, "ThrottlingException", None, "InternalFailure", None))
        stub.add_response("put_events", _respuesta(None, None))
        # WHEN the relay processes a batch
        resultado = OutboxRelay(pool, eventos, config).process_batch()
        stub.assert_no_pending_responses()
    # THEN only the two rejected entries were sent again, and all five are published
    assert grabadora.llamadas == [ids, [ids[1], ids[3]]]
    assert (resultado.published, resultado.rejections, resultado.calls) == (5, 2, 2)
    with pool.connection() as conn:
        filas = {
            str(id_): resto
            for id_, *resto in conn.execute("SELECT id, publicado, intentos, ultimo_error FROM outbox").fetchall()
        }
    assert filas[ids[1]] == [True, 1, "ThrottlingException: no"]
    assert filas[ids[3]] == [True, 1, "InternalFailure: no"]
    assert [filas[ids[i]] for i in (0, 2, 4)] == [[True, 0, None]] * 3


def test_relay_when_entry_keeps_failing_never_marks_it_and_holds_its_aggregate(
    pool: ConnectionPool, config: OutboxConfig
) -> None:
    # GIVEN p0's creation and a later p0 event, plus p1, and an EventBridge that always rejects p0's first
    with pool.connection() as conn:
        p0 = str(add_event(conn, "pedido", "p0", "PedidoCreado", {"pedido_id": "p0"}))
        p1 = str(add_event(conn, "pedido", "p1", "PedidoCreado", {"pedido_id": "p1"}))
        p0b = str(add_event(conn, "pedido", "p0", "PedidoCancelado", {"pedido_id": "p0"}))
    eventos = client("events")
    grabadora = _Grabadora(eventos)
    with Stubber(eventos) as stub:
        stub.add_response("put_events", _respuesta("InternalFailure", None))
        stub.add_response("put_events", _respuesta("InternalFailure"))
        stub.add_response("put_events", _respuesta("InternalFailure"))
        # WHEN the relay processes a batch (one send + two re-sends of the rejected entry)
        resultado = OutboxRelay(pool, eventos, config).process_batch()
        stub.assert_no_pending_responses()
    # THEN p0's later event was never sent (order), p1 was published, p0 counts three rejections
    assert grabadora.llamadas == [[p0, p1], [p0], [p0]]
    assert (resultado.published, resultado.rejections, resultado.held) == (1, 3, 1)
    assert _ids_en_bd(pool, publicado=True) == {p1}
    with pool.connection() as conn:
        intentos, error, aparcado = conn.execute(
            "SELECT intentos, ultimo_error, aparcado_en FROM outbox WHERE id = %s", (p0,)
        ).fetchone()
    assert (intentos, error, aparcado) == (3, "InternalFailure: no", None)
    assert p0b in _ids_en_bd(pool, publicado=False)


def test_relay_when_entry_reaches_attempt_limit_parks_it_and_unblocks_rest(pool: ConnectionPool) -> None:
    # GIVEN an event rejected on every send, a later event of the same order, and a limit of 3 attempts
    config = OutboxConfig(bus_name="bus-mercadofresco", max_attempts=3, resends_per_batch=2, resend_wait_s=0)
    with pool.connection() as conn:
        malo = str(add_event(conn, "pedido", "p0", "PedidoCreado", {"pedido_id": "p0"}))
        siguiente = str(add_event(conn, "pedido", "p0", "PedidoCancelado", {"pedido_id": "p0"}))
    eventos = client("events")
    relay = OutboxRelay(pool, eventos, config)
    with Stubber(eventos) as stub:
        for _ in range(3):
            stub.add_response("put_events", _respuesta("InternalFailure"))
        stub.add_response("put_events", _respuesta(None))
        # WHEN the relay processes two batches
        primero = relay.process_batch()
        segundo = relay.process_batch()
        stub.assert_no_pending_responses()
    # THEN the bad row is parked with its reason and the rest of its order goes through
    assert primero.parked == 1
    assert segundo.published == 1
    assert _ids_en_bd(pool, publicado=True) == {siguiente}
    with pool.connection() as conn:
        motivo = conn.execute("SELECT motivo_aparcado FROM outbox WHERE id = %s", (malo,)).fetchone()[0]
    assert motivo == "rejected 3 times; last: InternalFailure: no"
    assert relay.status().parked == 1


def test_relay_when_entry_exceeds_put_events_limit_parks_it_and_publishes_rest(
    pool: ConnectionPool, config: OutboxConfig, bus_en_cola: BusEnCola
) -> None:
    # GIVEN a 300 KB event between two normal ones
    with pool.connection() as conn:
        bueno1 = str(add_event(conn, "pedido", "p1", "PedidoCreado", {"pedido_id": "p1"}))
        grande = str(add_event(conn, "pedido", "p2", "PedidoCreado", {"pedido_id": "p2", "x": "a" * 300_000}))
        bueno2 = str(add_event(conn, "pedido", "p3", "PedidoCreado", {"pedido_id": "p3"}))
    relay = OutboxRelay(pool, client("events"), config)
    # WHEN the relay processes a batch
    resultado = relay.process_batch()
    # THEN the large row is parked with the reason, the other two are delivered
    assert resultado.parked == 1
    assert {e["detail"]["id"] for e in bus_en_cola.recibir_todo()} == {bueno1, bueno2}
    with pool.connection() as conn:
        motivo = conn.execute("SELECT motivo_aparcado FROM outbox WHERE id = %s", (grande,)).fetchone()[0]
    assert "exceeds PutEvents' 262144-byte limit" in motivo
    assert relay.status().parked == 1


def test_relay_when_payload_sets_id_or_version_publishes_outbox_id_and_row_version(
    pool: ConnectionPool, config: OutboxConfig, bus_en_cola: BusEnCola
) -> None:
    # GIVEN an event whose payload tries to set its own id and version
    with pool.connection() as conn:
        id_ = add_event(conn, "pedido", "p1", "PedidoCreado", {"pedido_id": "p1", "id": "falso", "version": 99})
    # WHEN the relay publishes it with its own client (no client-side validation, fixed User-Agent)
    OutboxRelay(pool, client("events", config=EVENTS_CLIENT_CONFIG), config).process_batch()
    # THEN the outbox id and the row's version win over the payload's, the rest of it travels
    (evento,) = bus_en_cola.recibir_todo()
    assert (evento["detail"]["id"], evento["detail"]["version"], evento["detail"]["pedido_id"]) == (str(id_), 1, "p1")
    assert _ids_en_bd(pool, publicado=True) == {str(id_)}


def test_relay_when_eventbridge_unreachable_keeps_rows_pending(pool: ConnectionPool, config: OutboxConfig) -> None:
    # GIVEN pending events and an EventBridge endpoint nobody listens on
    ids = _cinco_pedidos(pool)
    eventos = client("events", endpoint_url="http://127.0.0.1:9", config=None)
    # WHEN the relay processes a batch
    resultado = OutboxRelay(pool, eventos, config).process_batch()
    # THEN nothing is marked, no attempt is burnt, and the failure is counted
    assert resultado.service_errors == 1
    assert _ids_en_bd(pool, publicado=False) == set(ids)
    with pool.connection() as conn:
        assert conn.execute("SELECT max(intentos) FROM outbox").fetchone()[0] == 0


def test_drenar_when_idle_polls_about_once_a_second_until_deadline(pool: ConnectionPool) -> None:
    # GIVEN an empty outbox and a fake clock advanced only by the relay's own sleeps
    ahora = [0.0]
    pausas: list[float] = []

    def dormir(s: float) -> None:
        pausas.append(s)
        ahora[0] += s

    config = OutboxConfig(bus_name="bus-mercadofresco")
    relay = OutboxRelay(pool, client("events"), config, clock=lambda: ahora[0], sleep=dormir)
    # WHEN it drains until second 50
    resultado = relay.drain(until=50.0)
    # THEN it polled once a second, 50 times, and stopped at the deadline
    assert resultado.batches == 50
    assert set(pausas) == {1.0}
    assert ahora[0] == 50.0


def test_relay_when_earlier_event_is_held_by_another_relay_waits_for_it(
    outbox_dsn: str, pool: ConnectionPool, bus_en_cola: BusEnCola
) -> None:
    # GIVEN p1's creation, p2's creation and p1's cancellation, and another relay holding p1's creation
    with pool.connection() as conn:
        p1 = str(add_event(conn, "pedido", "p1", "PedidoCreado", {"pedido_id": "p1"}))
        p2 = str(add_event(conn, "pedido", "p2", "PedidoCreado", {"pedido_id": "p2"}))
        p1b = str(add_event(conn, "pedido", "p1", "PedidoCancelado", {"pedido_id": "p1"}))
    config = OutboxConfig(bus_name="bus-mercadofresco", batch_max=2)
    relay = OutboxRelay(pool, client("events"), config)
    otro = psycopg.connect(outbox_dsn)
    otro.execute("SELECT id FROM outbox WHERE id = %s FOR UPDATE", (p1,))
    # WHEN this relay runs while the other holds p1's first event
    mientras = relay.process_batch()
    # THEN it publishes p2 but holds back p1's cancellation (it would overtake the creation)
    assert (mientras.claimed, mientras.published, mientras.held) == (2, 1, 1)
    assert [e["detail"]["id"] for e in bus_en_cola.recibir_todo()] == [p2]
    # WHEN the other relay goes away without publishing, and this one runs again
    otro.rollback()
    otro.close()
    _vaciar(relay)
    # THEN p1's events arrive in order
    assert [e["detail"]["id"] for e in bus_en_cola.recibir_todo()] == [p1, p1b]
