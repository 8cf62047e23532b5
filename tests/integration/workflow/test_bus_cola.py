"""The template's wiring around the workflow on moto: bus -> rule -> order queue -> (pipe) -> workflow -> topic.

moto creates Pipes but never runs them, so the pipe's one step is done here the way Pipes
does it: receive one message, hand the workflow a batch (a JSON array) of one SQS record.
"""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from sam_emulator.event_sources import sqs_record

from tests.conftest import load_event

pytestmark = pytest.mark.integration

PEDIDO = "PED-2026-084417"


def _publicar(flujo, tipo: str, detalle: dict[str, Any], fuente: str = "mercadofresco.tienda") -> None:
    """Put one event on bus-mercadofresco the way the outbox relay does."""
    respuesta = boto3.client("events").put_events(
        Entries=[
            {
                "EventBusName": flujo.fisicos["BusMercadoFresco"]["Name"],
                "Source": fuente,
                "DetailType": tipo,
                "Detail": json.dumps(detalle),
            }
        ]
    )
    assert respuesta["FailedEntryCount"] == 0


def _detalle_pedido() -> dict[str, Any]:
    return json.loads(load_event("flujo/pedido-creado.json")[0]["body"])["detail"]


def test_bus_pedido_creado_reaches_only_the_orders_queue(flujo):
    # GIVEN the template's bus and rules
    # WHEN the store's PedidoCreado and the workflow's own PedidoRechazado are published
    _publicar(flujo, "PedidoCreado", _detalle_pedido())
    _publicar(flujo, "PedidoRechazado", {"version": 1, "pedido_id": PEDIDO}, fuente="mercadofresco.pedidos")
    # THEN only PedidoCreado is in the order queue, as the EventBridge event the workflow reads
    (mensaje,) = flujo.mensajes("ColaPedidos")
    evento = json.loads(mensaje["Body"])
    assert evento["detail-type"] == "PedidoCreado" and evento["detail"]["pedido_id"] == PEDIDO


def test_orders_queue_after_four_receives_goes_to_its_dlq(flujo):
    # GIVEN an order message nobody manages to process
    _publicar(flujo, "PedidoCreado", _detalle_pedido())
    sqs = boto3.client("sqs")
    url = flujo.fisicos["ColaPedidos"]["QueueUrl"]
    # WHEN it is received maxReceiveCount (4) times without being deleted
    recepciones = 0
    for _ in range(6):
        recibidos = sqs.receive_message(QueueUrl=url, VisibilityTimeout=0, WaitTimeSeconds=0).get("Messages", [])
        recepciones += len(recibidos)
    # THEN the 5th receive finds it in mercadofresco-pedidos-fallidos instead
    assert recepciones == 4
    (carta,) = flujo.mensajes("ColaPedidosFallidos")
    assert json.loads(carta["Body"])["detail"]["pedido_id"] == PEDIDO


def test_bus_confirmation_of_an_order_reaches_erp_and_correo(flujo):
    # GIVEN a PedidoCreado on the bus
    _publicar(flujo, "PedidoCreado", _detalle_pedido())
    sqs = boto3.client("sqs")
    (mensaje,) = sqs.receive_message(
        QueueUrl=flujo.fisicos["ColaPedidos"]["QueueUrl"], AttributeNames=["All"], MessageAttributeNames=["All"]
    )["Messages"]
    # WHEN the pipe's step starts the workflow with a batch of one record
    ejecucion = flujo.ejecutar([sqs_record(mensaje, flujo.fisicos["ColaPedidos"]["Arn"])])
    # THEN the order is charged once and the confirmation fans out to both consumer queues (raw delivery)
    assert ejecucion["status"] == "SUCCEEDED"
    assert flujo.pasarela.cobros_de(PEDIDO) == 1
    for cola in ("ColaErp", "ColaCorreo"):
        (confirmacion,) = [json.loads(m["Body"]) for m in flujo.mensajes(cola)]
        assert confirmacion["tipo"] == "PedidoConfirmado" and confirmacion["pedido_id"] == PEDIDO, cola


def test_bus_not_confirmed_outcomes_reach_the_correo_queue(flujo):
    # GIVEN the workflow's notices of an order that was not confirmed (issue 15: the customer is told)
    for tipo in ("PedidoNoConfirmado", "PedidoRechazado", "PedidoCancelado"):
        detalle = {"version": 1, "pedido_id": PEDIDO, "email": "lucia.ferrer@example.com", "motivo": tipo}
        # WHEN the workflow publishes it on bus-mercadofresco
        _publicar(flujo, tipo, detalle, fuente="mercadofresco.pedidos")
    # THEN the rule mercadofresco-avisos-cliente delivers each to the e-mail queue, and none to the order queue
    recibidos = []
    while lote := flujo.mensajes("ColaCorreo"):
        recibidos += [json.loads(m["Body"]) for m in lote]
    assert sorted(e["detail-type"] for e in recibidos) == ["PedidoCancelado", "PedidoNoConfirmado", "PedidoRechazado"]
    assert {e["detail"]["email"] for e in recibidos} == {"lucia.ferrer@example.com"}
    assert flujo.mensajes("ColaPedidos") == []
