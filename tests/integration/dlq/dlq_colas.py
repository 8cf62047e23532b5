"""Queue helpers for the DLQ tests: the project's pairs as DESIGN.md names them, fill, drain, count."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable

PARES = {
    "pedidos": ("cola-mercadofresco-pedidos", "mercadofresco-pedidos-fallidos"),
    "erp": ("mercadofresco-erp", "mercadofresco-erp-fallidos"),
    "stock": ("cola-mercadofresco-stock.fifo", "mercadofresco-stock-fallidos.fifo"),
}
RETENCION_S = str(4 * 24 * 3600)


def crear_par(sqs: Any, origen: str, dlq: str) -> tuple[str, str]:
    """Create a source queue and its DLQ (RedrivePolicy maxReceiveCount 4); return both URLs."""
    fifo = {"FifoQueue": "true"} if dlq.endswith(".fifo") else {}
    url_dlq = sqs.create_queue(QueueName=dlq, Attributes={"MessageRetentionPeriod": RETENCION_S, **fifo})["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url_dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    politica = json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 4})
    url = sqs.create_queue(QueueName=origen, Attributes={"RedrivePolicy": politica, **fifo})["QueueUrl"]
    return url, url_dlq


def llenar(sqs: Any, url: str, cuerpos: Iterable[Any], **extra: Any) -> None:
    """Send each body (dicts as JSON) to ``url`` with the same extra SendMessage arguments."""
    for cuerpo in cuerpos:
        sqs.send_message(QueueUrl=url, MessageBody=cuerpo if isinstance(cuerpo, str) else json.dumps(cuerpo), **extra)


def drenar(sqs: Any, url: str) -> list[dict[str, Any]]:
    """Receive and delete everything visible in ``url``, in receive order (so a FIFO's group order shows)."""
    todos = []
    while lote := sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"], MessageSystemAttributeNames=["All"]
    ).get("Messages", []):
        for m in lote:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        todos.extend(lote)
    return todos


def total(sqs: Any, url: str) -> int:
    """Visible + in flight: a message hidden by an inspection is still in the queue."""
    a = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    return int(a["ApproximateNumberOfMessages"]) + int(a["ApproximateNumberOfMessagesNotVisible"])
