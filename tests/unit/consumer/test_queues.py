"""Dead letters carry their reason: exact SendMessage shapes, pinned with botocore's Stubber (no network)."""

from __future__ import annotations

import base64
import json

import pytest
from mercadofresco.consumer.queues import Queue, Queues, QueueWithoutDlqError, send_to_dlq, with_attributes
from mercadofresco.dlq import DlqReason

from tests.conftest import load_event

URL = "https://sqs.eu-south-2.amazonaws.com/123456789012/"
COLA = Queue(
    "arn:aws:sqs:eu-south-2:123456789012:mercadofresco-erp",
    URL + "mercadofresco-erp",
    URL + "mercadofresco-erp-fallidos",
    4,
)
STOCK = Queue(
    "arn:aws:sqs:eu-south-2:123456789012:cola-mercadofresco-stock.fifo",
    URL + "cola-mercadofresco-stock.fifo",
    URL + "mercadofresco-stock-fallidos.fifo",
    4,
)


def test_with_attributes_keeps_originals_converts_binary_and_ours_win() -> None:
    # GIVEN a record with a string, a binary and a stale mf-motivo attribute
    record = {
        "messageAttributes": {
            "traza": {"stringValue": "t-1", "dataType": "String"},
            "firma": {"binaryValue": base64.b64encode(b"\x00\x01").decode(), "dataType": "Binary"},
            "mf-motivo": {"stringValue": "viejo", "dataType": "String"},
        }
    }
    # WHEN our attributes are added
    atributos = with_attributes(record, {"mf-motivo": "json-invalido"})
    # THEN
    assert atributos == {
        "traza": {"DataType": "String", "StringValue": "t-1"},
        "firma": {"DataType": "Binary", "BinaryValue": b"\x00\x01"},
        "mf-motivo": {"DataType": "String", "StringValue": "json-invalido"},
    }


def test_with_attributes_never_exceeds_sqs_limit_of_ten() -> None:
    record = {"messageAttributes": {f"a{i}": {"stringValue": "x", "dataType": "String"} for i in range(10)}}
    atributos = with_attributes(record, {f"mf-{i}": "y" for i in range(4)})
    assert len(atributos) == 10
    assert all(f"mf-{i}" in atributos for i in range(4))


def test_send_to_dlq_standard_sends_body_verbatim_with_reason(sqs) -> None:
    # GIVEN the malformed ERP record
    cliente, stubber = sqs
    record = load_event("erp-malformado.json")["Records"][0]
    stubber.add_response(
        "send_message",
        {"MessageId": "m-1"},
        {
            "QueueUrl": COLA.dlq_url,
            "MessageBody": record["body"],
            "MessageAttributes": {
                "mf-motivo": {"DataType": "String", "StringValue": "json-invalido"},
                "mf-detalle": {"DataType": "String", "StringValue": "body is not JSON"},
                "mf-cola-origen": {"DataType": "String", "StringValue": COLA.url},
                "mf-funcion": {"DataType": "String", "StringValue": "erp"},
            },
        },
    )
    # WHEN / THEN (the Stubber fails on any other request shape)
    send_to_dlq(cliente, COLA, record, DlqReason.JSON_INVALIDO, "body is not JSON", "erp")


def test_send_to_dlq_fifo_keeps_group_and_dedups_by_message_id(sqs) -> None:
    cliente, stubber = sqs
    record = load_event("erp-reserva-stock-malformada.json")["Records"][0]
    stubber.add_response(
        "send_message",
        {"MessageId": "m-1"},
        {
            "QueueUrl": STOCK.dlq_url,
            "MessageBody": record["body"],
            "MessageAttributes": {
                "mf-motivo": {"DataType": "String", "StringValue": "campo-ausente"},
                "mf-detalle": {"DataType": "String", "StringValue": "sku"},
                "mf-cola-origen": {"DataType": "String", "StringValue": STOCK.url},
                "mf-funcion": {"DataType": "String", "StringValue": "erp"},
            },
            "MessageGroupId": "FRU-MAN-001",
            "MessageDeduplicationId": record["messageId"],
        },
    )
    send_to_dlq(cliente, STOCK, record, DlqReason.CAMPO_AUSENTE, "sku", "erp")


def test_send_to_dlq_without_redrive_policy_refuses_to_drop(sqs) -> None:
    cliente, _ = sqs
    sin_dlq = Queue(COLA.arn, COLA.url, None, None)
    with pytest.raises(QueueWithoutDlqError) as info:
        send_to_dlq(cliente, sin_dlq, {"body": "x", "messageId": "m"}, DlqReason.JSON_INVALIDO, "x", "erp")
    assert "mercadofresco-erp" in str(info.value)


def test_from_arn_reads_redrive_policy_once(sqs) -> None:
    # GIVEN the queue and its DLQ answer once each
    cliente, stubber = sqs
    stubber.add_response("get_queue_url", {"QueueUrl": COLA.url}, {"QueueName": "mercadofresco-erp"})
    redrive = json.dumps({"deadLetterTargetArn": COLA.arn + "-fallidos", "maxReceiveCount": "4"})
    stubber.add_response(
        "get_queue_attributes",
        {"Attributes": {"RedrivePolicy": redrive}},
        {"QueueUrl": COLA.url, "AttributeNames": ["RedrivePolicy"]},
    )
    stubber.add_response("get_queue_url", {"QueueUrl": COLA.dlq_url}, {"QueueName": "mercadofresco-erp-fallidos"})
    colas = Queues(cliente)
    # WHEN resolved twice
    primera = colas.from_arn(COLA.arn)
    segunda = colas.from_arn(COLA.arn)
    # THEN one set of calls (the Stubber has no more responses), same answer
    assert primera == segunda == COLA
    assert not primera.fifo and STOCK.fifo
