"""The local SQS event source mapping keeps Lambda's partial-batch and redrive semantics."""

from __future__ import annotations

import json
import textwrap
from typing import TYPE_CHECKING

import pytest
from sam_emulator.testing import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from sam_emulator.moto_server import MotoServer

pytestmark = pytest.mark.integration

HANDLER = textwrap.dedent(
    """
    import threading
    seen_ones = []
    _cerrojo = threading.Lock()

    def lambda_handler(event, context):
        fallos = []
        for r in event["Records"]:
            with _cerrojo:
                seen_ones.append(r["body"])
            if r["body"].startswith("malo"):
                fallos.append({"itemIdentifier": r["messageId"]})
        return {"batchItemFailures": fallos}
    """
)


def _queues(sqs, max_receive_count: int) -> tuple[str, str, str]:
    dlq = sqs.create_queue(QueueName="prueba-fallidos")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    policy = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": max_receive_count})
    queue = sqs.create_queue(QueueName="prueba", Attributes={"VisibilityTimeout": "60", "RedrivePolicy": policy})
    arn = sqs.get_queue_attributes(QueueUrl=queue["QueueUrl"], AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return queue["QueueUrl"], arn, dlq


def test_mapping_with_partial_failures_deletes_the_good_and_redrives_the_bad_after_max_receive_count(
    moto_server: MotoServer, tmp_path: Path
) -> None:
    from sam_emulator.aws import client
    from sam_emulator.event_sources import EventSourceMapping
    from sam_emulator.functions import Function

    # GIVEN a queue (maxReceiveCount 3) with 20 good and 2 poison messages, and a handler that reports the poison ones
    (tmp_path / "app.py").write_text(HANDLER)
    sqs = client("sqs")
    url, arn, dlq = _queues(sqs, max_receive_count=3)
    for i in range(20):
        sqs.send_message(QueueUrl=url, MessageBody=f"bueno-{i}")
    for i in range(2):
        sqs.send_message(QueueUrl=url, MessageBody=f"malo-{i}")
    function = Function(logical_id="Prueba", name="prueba", code=tmp_path)
    mapping = EventSourceMapping(
        name="prueba", function=function, queue_url=url, queue_arn=arn, batch_size=5, concurrency=2,
        reports_failures=True, visibility_s=1,
    )  # fmt: skip

    # WHEN the mapping runs until both poison messages are in the DLQ
    mapping.start()
    try:
        wait_until(lambda: _visible(sqs, dlq) == 2, "both poison messages in the DLQ")
    finally:
        mapping.stop()

    # THEN every good message was processed once and deleted; each poison one was tried exactly 3 times
    seen_ones = function.load().seen_ones
    assert sorted(b for b in seen_ones if b.startswith("bueno")) == sorted(f"bueno-{i}" for i in range(20))
    assert sorted(b for b in seen_ones if b.startswith("malo")) == ["malo-0"] * 3 + ["malo-1"] * 3
    assert _visible(sqs, url) == 0
    assert mapping.stats.deleted == 20


def test_mapping_without_report_batch_item_failures_deletes_nothing_when_the_handler_fails(
    moto_server: MotoServer, tmp_path: Path
) -> None:
    from sam_emulator.aws import client
    from sam_emulator.event_sources import EventSourceMapping
    from sam_emulator.functions import Function

    # GIVEN a handler that raises on every batch
    (tmp_path / "app.py").write_text("def lambda_handler(event, context):\n    raise RuntimeError('caido')\n")
    sqs = client("sqs")
    url, arn, dlq = _queues(sqs, max_receive_count=2)
    sqs.send_message(QueueUrl=url, MessageBody="uno")
    function = Function(logical_id="Caida", name="caida", code=tmp_path)
    mapping = EventSourceMapping(
        name="caida", function=function, queue_url=url, queue_arn=arn, concurrency=1, visibility_s=1
    )

    # WHEN the mapping runs
    mapping.start()
    try:
        wait_until(lambda: _visible(sqs, dlq) == 1, "the message in the DLQ")
    finally:
        mapping.stop()

    # THEN the message was never deleted: SQS redrove it after 2 failed receives
    assert function.errors == 2
    assert mapping.stats.deleted == 0


def test_mapping_never_holds_a_message_for_less_than_its_functions_timeout_however_compressed(
    moto_server: MotoServer, tmp_path: Path
) -> None:
    from sam_emulator.aws import client
    from sam_emulator.event_sources import sqs_mapping
    from sam_emulator.functions import Function

    # GIVEN a queue whose 60 s visibility the run compresses x60 to 1 s, a consumer with a 30 s
    # Timeout (the run does not compress it) and one with a 0.5 s Timeout
    sqs = client("sqs")
    _, arn, _ = _queues(sqs, max_receive_count=4)
    slow = Function(logical_id="Lento", name="lento", code=tmp_path, timeout_s=30)
    fast = Function(logical_id="Rapido", name="rapido", code=tmp_path, timeout_s=0.5)

    # WHEN their SQS event sources are built as the local run builds them
    props = {"Queue": arn, "BatchSize": 10, "FunctionResponseTypes": ["ReportBatchItemFailures"]}
    slow_mapping, fast_mapping = (sqs_mapping(f.name, f, props, compression=60) for f in (slow, fast))

    # THEN a batch stays invisible for as long as its invocation may run (AWS refuses a trigger whose
    # queue visibility is below the function's timeout): a slow batch is never handed to a second
    # invocation, which would burn maxReceiveCount and dead-letter a message processed once
    assert slow_mapping.visibility_s == 30
    assert fast_mapping.visibility_s == 1  # the compressed visibility, where it already covers the timeout


def test_failed_ids_answer_with_a_foreign_id_fails_the_whole_batch() -> None:
    from sam_emulator.event_sources import failed_ids

    # GIVEN a batch of two records and a response naming a record that is not in it
    ids = {"a", "b"}

    # WHEN / THEN Lambda treats the malformed response as a failure of the whole batch
    assert failed_ids({"batchItemFailures": [{"itemIdentifier": "x"}]}, ids) == ids
    assert failed_ids({"batchItemFailures": [{"itemIdentifier": "a"}]}, ids) == {"a"}
    assert failed_ids({"batchItemFailures": []}, ids) == set()


def _visible(sqs, url: str) -> int:
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    return int(attributes["Attributes"]["ApproximateNumberOfMessages"])
