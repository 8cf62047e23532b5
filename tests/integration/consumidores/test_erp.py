"""The ERP consumer under faults: redrive after maxReceiveCount, FIFO groups, and a 30-minute outage."""

from __future__ import annotations

import json

import boto3
import pytest
from mercadofresco.circuit_breaker import CircuitBreaker
from mercadofresco.valkey import valkey_client
from mercadofresco_local.fallos import Fallo

from tests.conftest import load_event
from tests.integration.consumidores.conftest import BREAKER_PRUEBA, BREAKER_QUE_NO_ABRE, Cola, Sondeo, mensajes, motivo

pytestmark = pytest.mark.integration

PEDIDO = json.loads(load_event("erp-pedido-confirmado.json")["Records"][0]["body"])
VISIBILIDAD_S = 180


def _pedido(n: int) -> str:
    return json.dumps(PEDIDO | {"pedido_id": f"PED-2026-{n:06d}"})


def test_transient_failure_reaches_dlq_after_max_receive_count_without_reason(
    recursos, cargar_consumidor, proveedores, reloj, lambda_context
) -> None:
    # GIVEN an ERP answering 500 to everything, and a breaker that never opens on one message
    sqs = boto3.client("sqs")
    app = cargar_consumidor("erp", breaker=BREAKER_QUE_NO_ABRE)
    proveedores.fallos.programar(Fallo.estado(500, proveedor="erp"))
    cola, dlq = Cola.de(recursos, "ColaErp"), Cola.de(recursos, "ColaErpFallidos")
    sqs.send_message(QueueUrl=cola.url, MessageBody=_pedido(1))
    sondeo = Sondeo(sqs, cola, app.lambda_handler, lambda_context)
    # WHEN it is received as often as the queue allows (visibility 180 s between receives)
    for _ in range(6):
        sondeo.lote()
        reloj.avanzar(VISIBILIDAD_S + 1)
    sondeo.lote()
    # THEN it was tried on 4 receives (2 HTTP attempts each) and SQS's redrive moved it
    assert len(sondeo.respuestas) == 4
    assert all(len(r["batchItemFailures"]) == 1 for r in sondeo.respuestas)
    assert proveedores["erp"].llamadas["/avisos"] == 4 * 2
    (muerto,) = mensajes(sqs, dlq)
    assert json.loads(muerto["Body"])["pedido_id"] == "PED-2026-000001"
    # AND it carries no reason: the DLQ tools read that as "transient, outlived the retries"
    assert motivo(muerto) is None
    assert mensajes(sqs, cola) == []


def test_fifo_group_stops_at_first_failure_other_groups_go_on(
    recursos, cargar_consumidor, proveedores, reloj, lambda_context
) -> None:
    # GIVEN reservations: two lines of sku A (in order), one of sku B; the ERP fails the first two requests
    sqs = boto3.client("sqs")
    app = cargar_consumidor("erp")
    cola = Cola.de(recursos, "ColaStock")
    lineas = [("PED-1", "A"), ("PED-2", "A"), ("PED-3", "B")]
    for pedido_id, sku in lineas:
        cuerpo = {"tipo": "ReservaStock", "version": 1, "pedido_id": pedido_id, "sku": sku, "cantidad": 1}
        sqs.send_message(
            QueueUrl=cola.url,
            MessageBody=json.dumps(cuerpo),
            MessageGroupId=sku,
            MessageDeduplicationId=f"reserva:{pedido_id}:{sku}",
        )
    proveedores.fallos.programar(Fallo.estado(503, proveedor="erp", ruta="/reservas", veces=2))
    sondeo = Sondeo(sqs, cola, app.lambda_handler, lambda_context)
    # WHEN one batch holds all three
    assert sondeo.lote() == 3
    # THEN PED-1/A failed (both attempts), PED-2/A was not even tried (its group stopped), B went on
    (respuesta,) = sondeo.respuestas
    assert len(respuesta["batchItemFailures"]) == 2
    assert proveedores["erp"].llamadas["/reservas"] == 2 + 1
    assert list(proveedores["erp"].efectos_por_clave) == ["reserva:PED-3:B"]
    # WHEN the failed group is redelivered after its visibility
    reloj.avanzar(VISIBILIDAD_S + 1)
    sondeo.drenar()
    # THEN sku A's reservations reach the ERP once each. (Their order on redelivery is moto's:
    # moto 5.2.5 hands back a FIFO group's second message before its first after both time out.)
    assert proveedores["erp"].efectos_por_clave == {"reserva:PED-3:B": 1, "reserva:PED-1:A": 1, "reserva:PED-2:A": 1}
    assert mensajes(sqs, cola) == []


def test_erp_outage_of_30_minutes_defers_and_ends_with_zero_messages_in_dlq(
    recursos, cargar_consumidor, proveedores, reloj, lambda_context
) -> None:
    # GIVEN 20 order notices and an ERP returning 503 for the first 30 minutes
    sqs = boto3.client("sqs")
    app = cargar_consumidor("erp")
    cola, dlq = Cola.de(recursos, "ColaErp"), Cola.de(recursos, "ColaErpFallidos")
    proveedores.fallos.programar(Fallo.estado(503, proveedor="erp", hasta_s=30 * 60))
    pedidos = [f"PED-2026-{n:06d}" for n in range(20)]
    for n in range(20):
        sqs.send_message(QueueUrl=cola.url, MessageBody=_pedido(n))
    sondeo = Sondeo(sqs, cola, app.lambda_handler, lambda_context)
    # WHEN the consumer polls every 10 s for 3 hours of (compressed) time
    for _ in range(3 * 360):
        sondeo.drenar()
        reloj.avanzar(10)
    # THEN every notice reached the ERP exactly once, none is left, and the DLQ is empty
    assert proveedores["erp"].efectos_por_clave == {f"aviso-erp:{p}": 1 for p in pedidos}
    assert mensajes(sqs, cola) == []
    assert mensajes(sqs, dlq) == []
    # AND it was the deferral that carried them: messages came back with mf-aplazamientos, while
    # the open breaker kept the ERP's load to a handful of probes instead of 20 messages x receives
    assert sondeo.aplazamientos_vistos >= 3
    llamadas_en_caida = proveedores["erp"].llamadas["/avisos"] - len(pedidos)
    assert llamadas_en_caida < 40


def test_fifo_reservation_with_erp_circuit_open_is_held_then_recycled_never_dead_lettered(
    recursos, cargar_consumidor, proveedores, redis_url, redis_prefix, reloj, lambda_context
) -> None:
    # GIVEN a reservation on the FIFO queue and the ERP's breaker forced open
    sqs = boto3.client("sqs")
    app = cargar_consumidor("erp")
    breaker = CircuitBreaker("erp", valkey_client(redis_url), config=BREAKER_PRUEBA, prefix=redis_prefix)
    breaker.force("abierto")
    cola, dlq = Cola.de(recursos, "ColaStock"), Cola.de(recursos, "ColaStockFallidos")
    cuerpo = {"tipo": "ReservaStock", "version": 1, "pedido_id": "PED-9", "sku": "A", "cantidad": 3}
    sqs.send_message(
        QueueUrl=cola.url, MessageBody=json.dumps(cuerpo), MessageGroupId="A", MessageDeduplicationId="reserva:PED-9:A"
    )
    sondeo = Sondeo(sqs, cola, app.lambda_handler, lambda_context)
    # WHEN it is received 6 times, each time after the longest hold (900 s)
    for _ in range(6):
        sondeo.lote()
        reloj.avanzar(901)
    # THEN it was held by visibility on receives 1-2 (reported failed: its group waits), recycled on the
    # 3rd with maxReceiveCount 4 still one away, and so on: never in the DLQ, the ERP never called
    assert [len(r["batchItemFailures"]) for r in sondeo.respuestas] == [1, 1, 0, 1, 1, 0]
    assert sondeo.aplazamientos_vistos == 1
    assert proveedores["erp"].llamadas["/reservas"] == 0
    assert mensajes(sqs, dlq) == []
    # WHEN the circuit closes  THEN the reservation goes through once
    breaker.force("")
    sondeo.drenar()
    assert proveedores["erp"].efectos_por_clave == {"reserva:PED-9:A": 1}
    assert mensajes(sqs, cola) == []


def test_duplicate_notice_differing_only_in_time_is_absorbed_but_other_amount_is_a_conflict(
    recursos, cargar_consumidor, proveedores, lambda_context
) -> None:
    # GIVEN a notice already sent to the ERP
    sqs = boto3.client("sqs")
    app = cargar_consumidor("erp")
    cola, dlq = Cola.de(recursos, "ColaErp"), Cola.de(recursos, "ColaErpFallidos")
    primero = PEDIDO | {"pedido_id": "PED-7", "importe_centimos": 4820}
    sqs.send_message(QueueUrl=cola.url, MessageBody=json.dumps(primero))
    sondeo = Sondeo(sqs, cola, app.lambda_handler, lambda_context)
    sondeo.drenar()
    # WHEN the same order arrives again with a later timestamp, and once more with another amount
    for cambio in ({"confirmado_en": "2026-11-29T18:20:00Z"}, {"importe_centimos": 9999}):
        sqs.send_message(QueueUrl=cola.url, MessageBody=json.dumps(primero | cambio))
    sondeo.drenar()
    # THEN the ERP heard of the order once; the conflicting copy waits in the DLQ as bad data
    assert proveedores["erp"].llamadas["/avisos"] == 1
    (conflicto,) = mensajes(sqs, dlq)
    assert json.loads(conflicto["Body"])["importe_centimos"] == 9999
    assert motivo(conflicto) == "dato-invalido"
    assert all(r == {"batchItemFailures": []} for r in sondeo.respuestas)
