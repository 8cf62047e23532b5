"""The e-mail consumer: fallback to the secondary provider, and one e-mail per order under duplicates."""

from __future__ import annotations

import json
import threading

import boto3
import pytest
from mercadofresco.circuit_breaker import CircuitBreaker
from mercadofresco.valkey import valkey_client

from tests.conftest import HANG_GUARD_S, load_event
from tests.integration.consumidores.conftest import BREAKER_PRUEBA, Cola, Sondeo, mensajes

pytestmark = pytest.mark.integration

PEDIDO = json.loads(load_event("correo-confirmacion.json")["Records"][0]["body"])
CLAVE = "correo-confirmacion:PED-2026-084417"


def test_primary_circuit_open_sends_through_secondary_once(
    recursos, cargar_consumidor, proveedores, redis_url, redis_prefix, lambda_context
) -> None:
    # GIVEN the primary provider's shared breaker forced open (as another Lambda would have left it)
    sqs = boto3.client("sqs")
    app = cargar_consumidor("correo")
    CircuitBreaker("correo-principal", valkey_client(redis_url), config=BREAKER_PRUEBA, prefix=redis_prefix).force(
        "abierto"
    )
    cola = Cola.de(recursos, "ColaCorreo")
    sqs.send_message(QueueUrl=cola.url, MessageBody=json.dumps(PEDIDO))
    # WHEN the confirmation is handled
    sondeo = Sondeo(sqs, cola, app.lambda_handler, lambda_context)
    sondeo.drenar()
    # THEN the primary was never called, the secondary sent it once, and the message is done
    assert proveedores["correo-principal"].llamadas["/correos"] == 0
    assert proveedores["correo-secundario"].efectos_por_clave == {CLAVE: 1}
    assert sondeo.respuestas == [{"batchItemFailures": []}]
    assert mensajes(sqs, cola) == []


def test_both_circuits_open_defers_instead_of_failing(
    recursos, cargar_consumidor, proveedores, redis_url, redis_prefix, reloj, lambda_context
) -> None:
    # GIVEN both providers' breakers open
    sqs = boto3.client("sqs")
    app = cargar_consumidor("correo")
    for dependencia in ("correo-principal", "correo-secundario"):
        breaker = CircuitBreaker(dependencia, valkey_client(redis_url), config=BREAKER_PRUEBA, prefix=redis_prefix)
        breaker.force("abierto")
    cola, dlq = Cola.de(recursos, "ColaCorreo"), Cola.de(recursos, "ColaCorreoFallidos")
    sqs.send_message(QueueUrl=cola.url, MessageBody=json.dumps(PEDIDO))
    # WHEN it is handled
    sondeo = Sondeo(sqs, cola, app.lambda_handler, lambda_context)
    sondeo.drenar()
    # THEN nothing was sent, nothing failed: a deferred copy waits in the queue with its counter
    principal, secundario = proveedores["correo-principal"], proveedores["correo-secundario"]
    assert principal.llamadas["/correos"] == secundario.llamadas["/correos"] == 0
    assert sondeo.respuestas == [{"batchItemFailures": []}]
    reloj.avanzar(900)
    (copia,) = mensajes(sqs, cola)
    assert copia["MessageAttributes"]["mf-aplazamientos"]["StringValue"] == "1"
    assert mensajes(sqs, dlq) == []


def test_duplicates_in_concurrent_batches_send_exactly_one_email_per_order(
    recursos, cargar_consumidor, proveedores, reloj, lambda_context
) -> None:
    # GIVEN the same confirmation delivered 6 times (SNS at-least-once, a replayed outbox row...)
    sqs, sns = boto3.client("sqs"), boto3.client("sns")
    app = cargar_consumidor("correo")
    cola = Cola.de(recursos, "ColaCorreo")
    for _ in range(6):
        sns.publish(TopicArn=recursos.physical_ids["TopicPedidoConfirmado"]["Ref"], Message=json.dumps(PEDIDO))
    # WHEN three pollers handle batches of 2 at the same time, then whatever is redelivered
    sondeos = [Sondeo(sqs, cola, app.lambda_handler, lambda_context, tamano_lote=2) for _ in range(3)]
    barrera = threading.Barrier(len(sondeos), timeout=HANG_GUARD_S)

    def sondear(sondeo: Sondeo) -> None:
        barrera.wait()
        sondeo.lote()

    hilos = [threading.Thread(target=sondear, args=(s,)) for s in sondeos]
    for hilo in hilos:
        hilo.start()
    for hilo in hilos:
        hilo.join(timeout=300)  # a hang guard only: the outcome does not depend on how the threads interleave
    assert not any(hilo.is_alive() for hilo in hilos), "a poller hung"
    reloj.avanzar(181)
    sondeos[0].drenar()
    # THEN all six are gone and exactly one e-mail was requested and sent
    assert sum(len(r["batchItemFailures"]) for s in sondeos for r in s.respuestas) <= 5
    assert mensajes(sqs, cola) == []
    assert proveedores["correo-principal"].llamadas["/correos"] == 1, [s.respuestas for s in sondeos]
    assert proveedores["correo-principal"].efectos_por_clave == {CLAVE: 1}


def test_order_not_confirmed_then_declined_tells_the_customer_once(
    recursos, cargar_consumidor, proveedores, lambda_context
) -> None:
    # GIVEN the workflow's PedidoNoConfirmado (bus rule mercadofresco-avisos-cliente -> the e-mail queue), then a
    # PedidoRechazado of the same order (an order ends in one outcome: a second notice must not send a second e-mail)
    sqs = boto3.client("sqs")
    app = cargar_consumidor("correo")
    cola = Cola.de(recursos, "ColaCorreo")
    no_confirmado = load_event("correo-pedido-no-confirmado.json")["Records"][0]["body"]
    rechazado = json.loads(no_confirmado)
    rechazado["detail-type"], rechazado["detail"]["motivo"] = "PedidoRechazado", "tarjeta_rechazada"
    sqs.send_message(QueueUrl=cola.url, MessageBody=no_confirmado)
    sqs.send_message(QueueUrl=cola.url, MessageBody=json.dumps(rechazado))
    # WHEN they are handled
    sondeo = Sondeo(sqs, cola, app.lambda_handler, lambda_context)
    sondeo.drenar()
    # THEN the customer got one "not confirmed, please retry" e-mail under correo-no-confirmado:{pedido_id}
    clave = "correo-no-confirmado:PED-2026-084417"
    assert proveedores["correo-principal"].efectos_por_clave == {clave: 1}
    (efecto,) = proveedores["correo-principal"].efectos
    assert efecto["cuerpo"]["plantilla"] == "pedido-no-confirmado"
    assert efecto["cuerpo"]["destinatario"] == "lucia.ferrer@example.com"
    assert efecto["cuerpo"]["datos"] == {"pedido_id": "PED-2026-084417", "motivo": "pasarela-no-disponible"}
    assert mensajes(sqs, cola) == []
