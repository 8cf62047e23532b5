"""The queues a record came from, and sending a record on to its dead-letter queue with its reason.

A consumer learns its DLQ from the source queue's own ``RedrivePolicy`` (one
``GetQueueAttributes`` per queue per cold start), so the template stays the only place
that says which DLQ belongs to which queue, and ``maxReceiveCount`` comes with it.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger

from mercadofresco import dlq
from mercadofresco.aws import cached_client
from mercadofresco.errors import MercadoFrescoError

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from mercadofresco.dlq import DlqReason

logger = Logger(child=True)

MAX_ATTRIBUTES = 10  # SQS's limit of message attributes per message
MAX_DETAIL_CHARS = 1000  # characters of the error kept with a dead letter
# SQS's MaximumMessageSize as SNS, EventBridge and Lambda's mappings still cap a message (256 KiB): the body
# AND every attribute's name, type and value count. A body near the limit leaves no room for the reason:
# the body's end is cut, never the reason nor the message.
MAX_MESSAGE_BYTES = 262_144
# What SQS accepts in a string: #x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD #x10000-#x10FFFF (anything else: "?").
# Written as the complement: the negated class over those ranges costs ~10 ms to compile at import.
_NO_SQS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# Receives spent by the earlier copies of a deferred message (standard queues): keeps the
# worst case of calls per message at 2 HTTP attempts x maxReceiveCount across all copies.
PREVIOUS_RECEIVES_ATTRIBUTE = "mf-recepciones-previas"


class QueueWithoutDlqError(MercadoFrescoError, RuntimeError):
    """The source queue has no RedrivePolicy: there is nowhere safe to put a bad message."""


@dataclass(frozen=True, slots=True)
class Queue:
    """A source queue as a consumer needs it."""

    arn: str
    url: str
    dlq_url: str | None
    max_receives: int | None

    @property
    def name(self) -> str:
        return self.arn.rsplit(":", 1)[-1]

    @property
    def fifo(self) -> bool:
        return self.name.endswith(".fifo")


class Queues:
    """Resolves a record's ``eventSourceARN`` to its :class:`Queue`, cached for the container's life."""

    def __init__(self, sqs: BaseClient | None = None) -> None:
        self._sqs = sqs
        self._cache: dict[str, Queue] = {}

    @property
    def sqs(self) -> BaseClient:
        return self._sqs or cached_client("sqs")

    def _url(self, arn: str) -> str:
        # By name, in the function's own account and region (where its template put the queue and its
        # DLQ): the same event file then works in any account, moto's included (events/ for sam local).
        return self.sqs.get_queue_url(QueueName=arn.rsplit(":", 1)[-1])["QueueUrl"]

    def from_arn(self, arn: str) -> Queue:
        if arn not in self._cache:
            url = self._url(arn)
            atributos = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["RedrivePolicy"])
            redrive = json.loads(atributos.get("Attributes", {}).get("RedrivePolicy") or "{}")
            destino = redrive.get("deadLetterTargetArn")
            self._cache[arn] = Queue(
                arn=arn,
                url=url,
                dlq_url=self._url(destino) if destino else None,
                max_receives=int(redrive["maxReceiveCount"]) if "maxReceiveCount" in redrive else None,
            )
        return self._cache[arn]


def original_attributes(record: dict[str, Any], exclude: frozenset[str] = frozenset()) -> dict[str, dict[str, Any]]:
    """The record's message attributes in ``SendMessage`` form (Lambda's event uses camelCase)."""
    salida: dict[str, dict[str, Any]] = {}
    for nombre, valor in (record.get("messageAttributes") or {}).items():
        if nombre in exclude:
            continue
        tipo = valor.get("dataType", "String")
        if valor.get("stringValue") is not None:
            salida[nombre] = {"DataType": tipo, "StringValue": valor["stringValue"]}
        elif valor.get("binaryValue") is not None:
            salida[nombre] = {"DataType": tipo, "BinaryValue": base64.b64decode(valor["binaryValue"])}
    return salida


def with_attributes(record: dict[str, Any], own: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The record's attributes with ``own`` set (ours win), within SQS's limit of 10."""
    nuestros = {k: {"DataType": "String", "StringValue": v} for k, v in own.items()}
    originales = original_attributes(record, exclude=frozenset(nuestros))
    cabe = MAX_ATTRIBUTES - len(nuestros)
    return dict(list(originales.items())[:cabe]) | nuestros


def _bytes(texto: str) -> int:
    return len(texto.encode("utf-8", "surrogatepass"))


def _tamano(cuerpo: str, atributos: dict[str, dict[str, Any]]) -> int:
    """Bytes SQS counts against MaximumMessageSize: the body plus each attribute's name, type and value."""
    total = _bytes(cuerpo)
    for nombre, valor in atributos.items():
        dato = valor.get("StringValue")
        total += _bytes(nombre) + _bytes(valor["DataType"])
        total += _bytes(dato) if dato is not None else len(valor.get("BinaryValue", b""))
    return total


def _que_quepa(
    cuerpo: str, atributos: dict[str, dict[str, Any]], own: dict[str, str]
) -> tuple[str, dict[str, dict[str, Any]]]:
    """The body and attributes of the dead letter, within SQS's size: our ``mf-*`` attributes always travel.

    What gives way, in order: the record's own attributes, then the end of the body (marked with
    ``mf-cuerpo-recortado``: its original size). A message the consumer could not read (a huge
    non-JSON body) is worth nothing without its reason and origin; the tail of its body is.
    """
    if _tamano(cuerpo, atributos) <= MAX_MESSAGE_BYTES:
        return cuerpo, atributos
    nuestros = {k: v for k, v in atributos.items() if k in own}
    if _tamano(cuerpo, nuestros) <= MAX_MESSAGE_BYTES:
        return cuerpo, nuestros
    original = cuerpo.encode("utf-8", "surrogatepass")
    nuestros[dlq.TRUNCATED_BODY_ATTRIBUTE] = {"DataType": "String", "StringValue": str(len(original))}
    cabe = MAX_MESSAGE_BYTES - _tamano("", nuestros)
    return original[:cabe].decode("utf-8", "ignore"), nuestros  # "ignore": a character cut in two is dropped


def receives(record: dict[str, Any]) -> int:
    return int(record.get("attributes", {}).get("ApproximateReceiveCount", "1"))


def _entero(record: dict[str, Any], atributo: str) -> int:
    valor = (record.get("messageAttributes") or {}).get(atributo, {})
    try:
        return int(valor.get("stringValue") or 0)
    except ValueError:
        return 0


def deferrals(record: dict[str, Any]) -> int:
    """How many times this message was deferred (``mf-aplazamientos``)."""
    return _entero(record, dlq.DEFERRALS_ATTRIBUTE)


def previous_receives(record: dict[str, Any]) -> int:
    """Receives the earlier copies of this message spent before being deferred."""
    return _entero(record, PREVIOUS_RECEIVES_ATTRIBUTE)


def send_to_dlq(
    sqs: BaseClient, queue: Queue, record: dict[str, Any], reason: DlqReason, detail: str, function: str
) -> None:
    """Copy ``record`` to ``queue``'s DLQ with why (``mf-*`` attributes); the caller then acknowledges it.

    A FIFO DLQ keeps the record's ``MessageGroupId``; its dedup id is the record's
    MessageId, so a copy sent twice (the ack after it was lost) lands once.
    """
    if queue.dlq_url is None:
        raise QueueWithoutDlqError(f"{queue.name} has no RedrivePolicy: refusing to drop a {reason.value} message")
    detail = _NO_SQS.sub("?", detail[:MAX_DETAIL_CHARS])
    own = {
        dlq.REASON_ATTRIBUTE: reason.value,
        dlq.DETAIL_ATTRIBUTE: detail,
        dlq.SOURCE_QUEUE_ATTRIBUTE: queue.url,
        dlq.FUNCTION_ATTRIBUTE: function,
    }
    cuerpo, atributos = _que_quepa(record["body"], with_attributes(record, own), own)
    envio: dict[str, Any] = {"QueueUrl": queue.dlq_url, "MessageBody": cuerpo, "MessageAttributes": atributos}
    if queue.dlq_url.endswith(".fifo"):
        envio["MessageGroupId"] = record.get("attributes", {}).get("MessageGroupId") or "sin-grupo"
        envio["MessageDeduplicationId"] = record["messageId"]
    sqs.send_message(**envio)
    logger.warning(
        "message sent to its DLQ",
        motivo=reason.value,
        detalle=detail[:MAX_DETAIL_CHARS],
        message_id=record.get("messageId"),
        cola=queue.name,
    )
