"""Local Pipes: SQS → workflow start, and a DynamoDB stream (TTL deletions only) → event bus."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

import pytest
from sam_emulator.testing import wait_until

if TYPE_CHECKING:
    from sam_emulator.moto_server import MotoServer

pytestmark = pytest.mark.integration


def test_apply_template_inserts_json_outside_quotes_and_text_inside() -> None:
    from sam_emulator.pipes import apply_template

    # GIVEN an SQS record whose body is JSON
    event = {"messageId": "m-1", "body": json.dumps({"pedido_id": "PED-1", "lineas": [{"sku": "A"}]})}

    # WHEN a Pipes input template reads into the body
    output = apply_template('{"id": "<$.messageId>", "pedido": "P:<$.body.pedido_id>", "l": <$.body.lineas>}', event)

    # THEN quoted placeholders become text and bare ones JSON values
    assert output == {"id": "m-1", "pedido": "P:PED-1", "l": [{"sku": "A"}]}


def test_pipe_sqs_to_state_machine_starts_one_execution_per_message_and_deletes_it(moto_server: MotoServer) -> None:
    from sam_emulator.aws import client
    from sam_emulator.functions import Functions
    from sam_emulator.pipes import Target, sqs_pipe

    # GIVEN a queue with 5 messages and a pipe (batch size 1) to a state machine
    sqs, sfn = client("sqs"), client("stepfunctions")
    url = sqs.create_queue(QueueName="origen")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    role = "arn:aws:iam::123456789012:role/x"
    definition_text = json.dumps({"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}})
    state_machine_arn = sfn.create_state_machine(name="m", definition=definition_text, roleArn=role)["stateMachineArn"]
    for i in range(5):
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"pedido_id": f"PED-{i}"}))
    target = Target("pipe-mf-prueba", state_machine_arn, {}, '{"pedido_id": "<$.body.pedido_id>"}', Functions())
    # compression 1: the queue's 30 s visibility as written, so a message is redelivered only if the pipe stalls
    # that long, not when a loaded machine takes more than a compressed second to start its execution
    pipe = sqs_pipe("pipe-mf-prueba", queue_arn, target, {"SqsQueueParameters": {"BatchSize": 1}}, [], 1)

    # WHEN the pipe runs
    pipe.start()
    try:
        wait_until(
            lambda: len(sfn.list_executions(stateMachineArn=state_machine_arn)["executions"]) == 5, "five executions"
        )
    finally:
        pipe.stop()

    # THEN each message started one execution with the templated input (a batch array) and was deleted
    inputs = [
        json.loads(sfn.describe_execution(executionArn=e["executionArn"])["input"])
        for e in sfn.list_executions(stateMachineArn=state_machine_arn)["executions"]
    ]
    assert sorted(e[0]["pedido_id"] for e in inputs) == [f"PED-{i}" for i in range(5)]
    assert (
        sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"][
            "ApproximateNumberOfMessages"
        ]
        == "0"
    )


def test_pipe_stream_with_ttl_publishes_only_the_expirations(moto_server: MotoServer) -> None:
    from sam_emulator.aws import client
    from sam_emulator.functions import Functions
    from sam_emulator.pipes import PipeStream, Target
    from sam_emulator.ttl import TtlSweeper

    # GIVEN a carts table with a stream and TTL, a bus whose rule feeds a queue, one expired and one live cart
    ddb, events, sqs = client("dynamodb"), client("events"), client("sqs")
    table = ddb.create_table(
        TableName="carritos", BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "carrito_id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "carrito_id", "KeyType": "HASH"}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )["TableDescription"]  # fmt: skip
    ddb.update_time_to_live(
        TableName="carritos", TimeToLiveSpecification={"AttributeName": "expira_en", "Enabled": True}
    )
    bus = events.create_event_bus(Name="bus")["EventBusArn"]
    url = sqs.create_queue(QueueName="recordatorios")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(Name="r", EventBusName="bus", EventPattern=json.dumps({"detail-type": ["CarritoAbandonado"]}))
    events.put_targets(Rule="r", EventBusName="bus", Targets=[{"Id": "q", "Arn": queue_arn}])
    now = int(time.time())
    ddb.put_item(TableName="carritos", Item={"carrito_id": {"S": "C-viejo"}, "expira_en": {"N": str(now - 10)}})
    ddb.put_item(TableName="carritos", Item={"carrito_id": {"S": "C-vivo"}, "expira_en": {"N": str(now + 3600)}})
    ddb.delete_item(TableName="carritos", Key={"carrito_id": {"S": "C-vivo"}})  # the customer emptied it
    sweeper = TtlSweeper.of_tables_with_streams()
    rule_filter = {"eventName": ["REMOVE"], "userIdentity": {"principalId": ["dynamodb.amazonaws.com"]}}
    target = Target(
        "pipe-mf-carritos", bus, {"EventBridgeEventBusParameters": {"DetailType": "CarritoAbandonado", "Source": "mf"}},
        '{"carrito_id": "<$.dynamodb.Keys.carrito_id.S>"}', Functions(),
    )  # fmt: skip
    pipe = PipeStream("pipe-mf-carritos", table["LatestStreamArn"], target, [rule_filter], sweeper=sweeper)

    # WHEN TTL sweeps and the pipe reads the stream
    assert sweeper.sweep() == 1
    pipe.start()
    try:
        # every stream record read (two puts, the customer's delete, TTL's) and what passed the filter sent
        wait_until(lambda: pipe.read_count == 4 and pipe.sent >= 1, "the pipe to read the whole stream")
    finally:
        pipe.stop()

    # THEN only the expired cart became a CarritoAbandonado event on the bus
    messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert [json.loads(m["Body"])["detail"] for m in messages] == [{"carrito_id": "C-viejo"}]
    assert pipe.read_count == 4
