"""The batch glue with a Stubber'd SQS (no network): partial responses and the time guard."""

from __future__ import annotations

from botocore.stub import ANY
from mercadofresco.consumer import Consumer, Route
from sam_emulator.moto_lambda import LambdaContext

from tests.conftest import load_event
from tests.unit.consumer.stub_sqs import URL, espera_cola


def Contexto(remaining_ms: int) -> LambdaContext:
    """A Lambda context with ``remaining_ms`` left (it counts down from there)."""
    return LambdaContext(
        "mercadofresco-erp", "arn:aws:lambda:eu-south-2:123456789012:function:erp", remaining_ms / 1000
    )


def test_consumidor_with_too_little_time_defers_records_without_starting_them(sqs) -> None:
    # GIVEN two notices and an invocation with 1 s left (less than one record's worst case)
    cliente, stubber = sqs
    llamados: list[str] = []
    consumidor = Consumer("erp", {"PedidoConfirmado": Route(lambda e: llamados.append(e["pedido_id"]))}, sqs=cliente)
    event = load_event("erp-pedido-confirmado-duplicado.json")
    espera_cola(stubber, "mercadofresco-erp", "mercadofresco-erp-fallidos")
    for registro in event["Records"]:
        esperado = {"QueueUrl": URL + "mercadofresco-erp", "MessageBody": registro["body"]}
        stubber.add_response(
            "send_message", {"MessageId": "m"}, esperado | {"MessageAttributes": ANY, "DelaySeconds": ANY}
        )
    # WHEN
    respuesta = consumidor(event, Contexto(remaining_ms=1_000))
    # THEN nothing ran, nothing failed: both wait in the queue as deferred copies
    assert llamados == []
    assert respuesta == {"batchItemFailures": []}


def test_consumidor_transient_error_fails_only_its_record(sqs) -> None:
    # GIVEN a handler that fails for one order only
    cliente, stubber = sqs

    def manejar(evento) -> None:
        if evento["pedido_id"] == "PED-2026-084420":
            raise ConnectionError("provider reset")

    consumidor = Consumer("erp", {"PedidoConfirmado": Route(manejar, fields=("pedido_id",))}, sqs=cliente)
    event = load_event("erp-lote-mixto.json")
    espera_cola(stubber, "mercadofresco-erp", "mercadofresco-erp-fallidos")
    for _ in range(2):  # the malformed body and the version-2 event go to the DLQ
        stubber.add_response(
            "send_message", {"MessageId": "m"}, {"QueueUrl": ANY, "MessageBody": ANY, "MessageAttributes": ANY}
        )
    # WHEN
    respuesta = consumidor(event, Contexto(remaining_ms=30_000))
    # THEN only the failing order is reported, for SQS to redeliver
    assert respuesta == {"batchItemFailures": [{"itemIdentifier": event["Records"][3]["messageId"]}]}


def test_consumidor_handover_for_lack_of_time_keeps_the_deferral_count(sqs) -> None:
    # GIVEN a copy deferred 12 times already (the policy's maximum) and no time left
    cliente, stubber = sqs
    consumidor = Consumer("erp", {"PedidoConfirmado": Route(lambda e: None)}, sqs=cliente)
    event = load_event("erp-pedido-confirmado.json")
    registro = event["Records"][0]
    registro["messageAttributes"] = {"mf-aplazamientos": {"stringValue": "12", "dataType": "String"}}
    espera_cola(stubber, "mercadofresco-erp", "mercadofresco-erp-fallidos")
    esperado = {
        "QueueUrl": URL + "mercadofresco-erp",
        "MessageBody": registro["body"],
        "MessageAttributes": {
            "mf-aplazamientos": {"DataType": "String", "StringValue": "12"},
            "mf-recepciones-previas": {"DataType": "String", "StringValue": "0"},
        },
        "DelaySeconds": ANY,
    }
    stubber.add_response("send_message", {"MessageId": "m"}, esperado)
    # WHEN / THEN: handed back to the queue unchanged, not to the DLQ (the Stubber checks the URL)
    assert consumidor(event, Contexto(remaining_ms=500)) == {"batchItemFailures": []}
