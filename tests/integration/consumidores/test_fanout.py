"""SNS -> SQS fan-out (raw delivery), the bus rule to the e-mail queue, and bad input in a batch."""

from __future__ import annotations

import json
import logging

import boto3
import pytest

from tests.conftest import load_event
from tests.integration.consumidores.conftest import Cola, Sondeo, mensajes, motivo

pytestmark = pytest.mark.integration

PEDIDO = json.loads(load_event("erp-pedido-confirmado.json")["Records"][0]["body"])


def test_pedido_confirmado_fans_out_raw_to_erp_and_correo_each_acting_once(
    recursos, cargar_consumidor, proveedores, lambda_context
) -> None:
    # GIVEN both consumers and the confirmation topic from the template
    sqs, sns = boto3.client("sqs"), boto3.client("sns")
    erp, correo = cargar_consumidor("erp"), cargar_consumidor("correo")
    cola_erp, cola_correo = Cola.de(recursos, "ColaErp"), Cola.de(recursos, "ColaCorreo")
    # WHEN one order confirmation is published
    sns.publish(TopicArn=recursos.physical_ids["TopicPedidoConfirmado"]["Ref"], Message=json.dumps(PEDIDO))
    # THEN each queue holds the raw event (no SNS envelope)...
    for cola in (cola_erp, cola_correo):
        (mensaje,) = mensajes(sqs, cola)
        assert json.loads(mensaje["Body"]) == PEDIDO
    # ...and each consumer acts exactly once, leaving nothing behind
    assert Sondeo(sqs, cola_erp, erp.lambda_handler, lambda_context).drenar() == 1
    assert Sondeo(sqs, cola_correo, correo.lambda_handler, lambda_context).drenar() == 1
    assert proveedores["erp"].efectos_por_clave == {"aviso-erp:PED-2026-084417": 1}
    assert proveedores["correo-principal"].efectos_por_clave == {"correo-confirmacion:PED-2026-084417": 1}
    assert mensajes(sqs, cola_erp) == mensajes(sqs, cola_correo) == []


def test_carrito_abandonado_on_bus_reaches_correo_and_sends_one_reminder(
    recursos, cargar_consumidor, proveedores, lambda_context
) -> None:
    # GIVEN the e-mail consumer and the template's CarritoAbandonado rule
    sqs, events = boto3.client("sqs"), boto3.client("events")
    correo = cargar_consumidor("correo")
    detalle = json.loads(load_event("correo-carrito-abandonado.json")["Records"][0]["body"])["detail"]
    # WHEN the carts pipe puts the event on the bus (twice: at-least-once)
    entrada = {
        "EventBusName": recursos.physical_ids["BusMercadoFresco"]["Ref"],
        "Source": "mercadofresco.carritos",
        "DetailType": "CarritoAbandonado",
        "Detail": json.dumps(detalle),
    }
    assert events.put_events(Entries=[entrada, entrada])["FailedEntryCount"] == 0
    Sondeo(sqs, Cola.de(recursos, "ColaCorreo"), correo.lambda_handler, lambda_context).drenar()
    # THEN one request and one reminder, sent with its domain key
    assert proveedores["correo-principal"].llamadas["/correos"] == 1
    assert proveedores["correo-principal"].efectos_por_clave == {"recordatorio-carrito:CAR-7781": 1}
    assert proveedores["correo-principal"].efectos[0]["cuerpo"]["destinatario"] == "lucia.ferrer@example.com"


@pytest.mark.parametrize("funcion", ["erp", "correo"])
def test_bad_input_goes_to_dlq_with_reason_and_rest_of_batch_succeeds(
    funcion, recursos, cargar_consumidor, proveedores, lambda_context
) -> None:
    # GIVEN a batch of two good orders, one body that is not JSON and one version-2 event
    sqs = boto3.client("sqs")
    app = cargar_consumidor(funcion)
    lid = {"erp": "ColaErp", "correo": "ColaCorreo"}[funcion]
    cola, dlq = Cola.de(recursos, lid), Cola.de(recursos, f"{lid}Fallidos")
    for registro in load_event(f"{funcion}-lote-mixto.json")["Records"]:
        sqs.send_message(QueueUrl=cola.url, MessageBody=registro["body"])
    # WHEN one batch is handled
    sondeo = Sondeo(sqs, cola, app.lambda_handler, lambda_context)
    assert sondeo.lote() == 4
    # THEN no record is reported failed (nothing retried as transient) and the source queue is empty
    assert sondeo.respuestas == [{"batchItemFailures": []}]
    assert mensajes(sqs, cola) == []
    # AND the two bad ones are in the DLQ, each with its reason and the consumer that classified it
    muertos = mensajes(sqs, dlq)
    assert sorted(motivo(m) for m in muertos) == ["json-invalido", "version-desconocida"]
    assert {m["MessageAttributes"]["mf-funcion"]["StringValue"] for m in muertos} == {funcion}
    assert {m["MessageAttributes"]["mf-cola-origen"]["StringValue"] for m in muertos} == {cola.url}
    assert "no es json" in {m["Body"] for m in muertos}
    # AND the two good ones reached the provider once each
    proveedor = proveedores["erp"] if funcion == "erp" else proveedores["correo-principal"]
    assert sorted(proveedor.efectos_por_clave.values()) == [1, 1]


def test_handler_logs_carry_pedido_id_as_correlation_id(
    recursos, cargar_consumidor, proveedores, lambda_context
) -> None:
    # GIVEN the ERP consumer, its log lines also collected through its own formatter
    erp = cargar_consumidor("erp")
    lineas: list[dict] = []

    class Recoger(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lineas.append(json.loads(self.format(record)))

    recoger = Recoger()
    recoger.setFormatter(erp.logger.registered_formatter)
    logging.getLogger("mercadofresco").addHandler(recoger)
    # WHEN it handles one notice
    try:
        erp.lambda_handler(load_event("erp-pedido-confirmado.json"), lambda_context)
    finally:
        logging.getLogger("mercadofresco").removeHandler(recoger)
    # THEN its line about the event is structured and correlated by pedido_id
    (linea,) = [linea for linea in lineas if linea["message"] == "handling event"]
    assert linea["correlation_id"] == linea["pedido_id"] == "PED-2026-084417"
    assert linea["tipo"] == "PedidoConfirmado"
