"""Stubber expectations for a consumer's SQS calls (shared by the handler unit tests)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from botocore.stub import ANY

if TYPE_CHECKING:
    from botocore.stub import Stubber

URL = "https://sqs.eu-south-2.amazonaws.com/123456789012/"
# Unit tests must never leave the machine: any AWS client not stubbed hits a closed local port.
SIN_RED = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "REDIS_URL": "redis://127.0.0.1:9/0"}


def espera_cola(stubber: Stubber, cola: str, dlq: str) -> None:
    """The consumer resolving ``cola`` and its DLQ from the RedrivePolicy (once per container)."""
    stubber.add_response("get_queue_url", {"QueueUrl": URL + cola}, {"QueueName": cola})
    redrive = json.dumps({"deadLetterTargetArn": f"arn:aws:sqs:eu-south-2:123456789012:{dlq}", "maxReceiveCount": 4})
    stubber.add_response(
        "get_queue_attributes",
        {"Attributes": {"RedrivePolicy": redrive}},
        {"QueueUrl": URL + cola, "AttributeNames": ["RedrivePolicy"]},
    )
    stubber.add_response("get_queue_url", {"QueueUrl": URL + dlq}, {"QueueName": dlq})


def espera_dlq(stubber: Stubber, dlq: str, record: dict[str, Any], fifo: bool = False) -> None:
    """One SendMessage of ``record``'s body, verbatim, to ``dlq``."""
    esperado = {"QueueUrl": URL + dlq, "MessageBody": record["body"], "MessageAttributes": ANY}
    if fifo:
        esperado |= {"MessageGroupId": record["attributes"]["MessageGroupId"], "MessageDeduplicationId": ANY}
    stubber.add_response("send_message", {"MessageId": "dlq-1"}, esperado)
