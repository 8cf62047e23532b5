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
from mercadofresco.payload_limits import SQS_MESSAGE_MAX_BYTES

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from mercadofresco.dlq import DlqReason

logger = Logger(child=True)

MAX_ATTRIBUTES = 10  # SQS's limit of message attributes per message
MAX_DETAIL_CHARS = 1000  # characters of the error kept with a dead letter
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
            attributes = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["RedrivePolicy"])
            redrive = json.loads(attributes.get("Attributes", {}).get("RedrivePolicy") or "{}")
            target = redrive.get("deadLetterTargetArn")
            self._cache[arn] = Queue(
                arn=arn,
                url=url,
                dlq_url=self._url(target) if target else None,
                max_receives=int(redrive["maxReceiveCount"]) if "maxReceiveCount" in redrive else None,
            )
        return self._cache[arn]


def original_attributes(record: dict[str, Any], exclude: frozenset[str] = frozenset()) -> dict[str, dict[str, Any]]:
    """The record's message attributes in ``SendMessage`` form (Lambda's event uses camelCase)."""
    out: dict[str, dict[str, Any]] = {}
    for name, value in (record.get("messageAttributes") or {}).items():
        if name in exclude:
            continue
        data_type = value.get("dataType", "String")
        if value.get("stringValue") is not None:
            out[name] = {"DataType": data_type, "StringValue": value["stringValue"]}
        elif value.get("binaryValue") is not None:
            out[name] = {"DataType": data_type, "BinaryValue": base64.b64decode(value["binaryValue"])}
    return out


def with_attributes(record: dict[str, Any], own: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The record's attributes with ``own`` set (ours win), within SQS's limit of 10."""
    ours = {k: {"DataType": "String", "StringValue": v} for k, v in own.items()}
    originals = original_attributes(record, exclude=frozenset(ours))
    room = MAX_ATTRIBUTES - len(ours)
    return dict(list(originals.items())[:room]) | ours


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _size(body: str, attributes: dict[str, dict[str, Any]]) -> int:
    """Bytes SQS counts against MaximumMessageSize: the body plus each attribute's name, type and value."""
    total = _bytes(body)
    for name, value in attributes.items():
        string_value = value.get("StringValue")
        total += _bytes(name) + _bytes(value["DataType"])
        total += _bytes(string_value) if string_value is not None else len(value.get("BinaryValue", b""))
    return total


def _fit(
    body: str, attributes: dict[str, dict[str, Any]], own: dict[str, str]
) -> tuple[str, dict[str, dict[str, Any]]]:
    """The body and attributes of the dead letter, within SQS's size: our ``mf-*`` attributes always travel.

    SQS's limit (1 MiB, :data:`~mercadofresco.payload_limits.SQS_MESSAGE_MAX_BYTES`) counts the body AND
    every attribute's name, type and value. Anything SNS delivered (256 KiB at most) fits whole with
    its reason; only a body near SQS's own limit leaves no room for it.

    What gives way, in order: the record's own attributes, then the end of the body (marked with
    ``mf-cuerpo-recortado``: its original size). A message the consumer could not read (a huge
    non-JSON body) is worth nothing without its reason and origin; the tail of its body is.
    """
    if _size(body, attributes) <= SQS_MESSAGE_MAX_BYTES:
        return body, attributes
    ours = {k: v for k, v in attributes.items() if k in own}
    if _size(body, ours) <= SQS_MESSAGE_MAX_BYTES:
        return body, ours
    original = body.encode("utf-8", "surrogatepass")
    ours[dlq.TRUNCATED_BODY_ATTRIBUTE] = {"DataType": "String", "StringValue": str(len(original))}
    room = SQS_MESSAGE_MAX_BYTES - _size("", ours)
    return original[:room].decode("utf-8", "ignore"), ours  # "ignore": a character cut in two is dropped


def receives(record: dict[str, Any]) -> int:
    return int(record.get("attributes", {}).get("ApproximateReceiveCount", "1"))


def _int_attribute(record: dict[str, Any], attribute: str) -> int:
    value = (record.get("messageAttributes") or {}).get(attribute, {})
    try:
        return int(value.get("stringValue") or 0)
    except ValueError:
        return 0


def deferrals(record: dict[str, Any]) -> int:
    """How many times this message was deferred (``mf-aplazamientos``)."""
    return _int_attribute(record, dlq.DEFERRALS_ATTRIBUTE)


def previous_receives(record: dict[str, Any]) -> int:
    """Receives the earlier copies of this message spent before being deferred."""
    return _int_attribute(record, PREVIOUS_RECEIVES_ATTRIBUTE)


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
    body, attributes = _fit(record["body"], with_attributes(record, own), own)
    message: dict[str, Any] = {"QueueUrl": queue.dlq_url, "MessageBody": body, "MessageAttributes": attributes}
    if queue.dlq_url.endswith(".fifo"):
        message["MessageGroupId"] = record.get("attributes", {}).get("MessageGroupId") or "sin-grupo"
        message["MessageDeduplicationId"] = record["messageId"]
    sqs.send_message(**message)
    logger.warning(
        "message sent to its DLQ",
        motivo=reason.value,
        detalle=detail[:MAX_DETAIL_CHARS],
        message_id=record.get("messageId"),
        cola=queue.name,
    )
