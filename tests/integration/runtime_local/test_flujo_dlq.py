"""The run's message accounting reads which orders a DLQ holds, without consuming it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sam_emulator.moto_server import MotoServer

pytestmark = pytest.mark.integration


def test_pedidos_en_reads_every_message_of_a_dlq_once_and_leaves_them_all_there(servidor_moto: MotoServer) -> None:
    from mercadofresco.aws import client
    from mercadofresco_local.flujo import pedidos_en
    from sam_emulator.runtime import messages_in_queue

    # GIVEN a DLQ with more messages than one receive returns, in the three body shapes the flows
    # dead-letter (raw JSON, an EventBridge envelope, an SNS envelope) and a cart reminder without order
    sqs = client("sqs")
    url = sqs.create_queue(QueueName="prueba-fallidos")["QueueUrl"]
    cuerpos = [{"tipo": "PedidoConfirmado", "pedido_id": f"P{i}"} for i in range(12)]
    cuerpos += [
        {"detail-type": "PedidoCreado", "detail": {"pedido_id": "P0"}},
        {"Type": "Notification", "Message": '{"pedido_id": "P1"}'},
        {"detail-type": "CarritoAbandonado", "detail": {"carrito_id": "CAR-1"}},
    ]
    for cuerpo in cuerpos:
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps(cuerpo))

    # WHEN the accounting reads it
    pedidos = pedidos_en("prueba-fallidos")

    # THEN every message was read exactly once, and all of them are still in the DLQ, visible
    assert pedidos == {**{f"P{i}": 1 for i in range(2, 12)}, "P0": 2, "P1": 2, "": 1}
    assert messages_in_queue(url) == 15
    visibles = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    assert visibles["Attributes"]["ApproximateNumberOfMessages"] == "15"
