"""The emulated account's SQS-source pipes (emulated_account.puente_pipes), run from what DescribePipe answers.

moto keeps a pipe's parameters as AWS does and never runs it, as MiniStack does not run an SQS source:
the bridge must start what the account describes (its batch size, its filter) and nothing the template
says, and stop what the account no longer has.
"""

from __future__ import annotations

import json

import boto3
import pytest
from emulated_account.puente_pipes import PuentePipes

from tests.conftest import wait_until

pytestmark = pytest.mark.integration

PASO = json.dumps({"StartAt": "Fin", "States": {"Fin": {"Type": "Pass", "End": True}}})


def _cuenta() -> tuple[str, str]:
    """A queue and a state machine, as a stack leaves them; their ARNs."""
    sqs, sfn = boto3.client("sqs"), boto3.client("stepfunctions")
    url = sqs.create_queue(QueueName="cola-pedidos")["QueueUrl"]
    cola = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    rol = "arn:aws:iam::123456789012:role/pipe"
    maquina = sfn.create_state_machine(name="procesar", definition=PASO, roleArn=rol)["stateMachineArn"]
    return cola, maquina


def _entradas(maquina: str) -> list[list[dict]]:
    sfn = boto3.client("stepfunctions")
    ejecuciones = sfn.list_executions(stateMachineArn=maquina)["executions"]
    return [json.loads(sfn.describe_execution(executionArn=e["executionArn"])["input"]) for e in ejecuciones]


def test_bridge_runs_a_deployed_sqs_pipe_with_its_described_batch_size_and_filter(aws: None) -> None:
    # GIVEN a pipe deployed with BatchSize 1 and a filter that keeps only PedidoCreado
    cola, maquina = _cuenta()
    filtro = {"body": {"detail-type": ["PedidoCreado"]}}
    boto3.client("pipes").create_pipe(
        Name="pipe-pedidos", RoleArn="arn:aws:iam::123456789012:role/pipe", Source=cola, Target=maquina,
        SourceParameters={
            "SqsQueueParameters": {"BatchSize": 1},
            "FilterCriteria": {"Filters": [{"Pattern": json.dumps(filtro)}]},
        },
        TargetParameters={"StepFunctionStateMachineParameters": {"InvocationType": "FIRE_AND_FORGET"}},
    )  # fmt: skip
    url = boto3.client("sqs").get_queue_url(QueueName="cola-pedidos")["QueueUrl"]
    for tipo in ("PedidoCreado", "Otro", "PedidoCreado"):
        boto3.client("sqs").send_message(QueueUrl=url, MessageBody=json.dumps({"detail-type": tipo}))
    # WHEN the bridge runs the account's pipes
    with PuentePipes() as puente:
        puente.sincronizar()
        wait_until(lambda: len(_entradas(maquina)) == 2, "two executions")
        # THEN one execution a PedidoCreado, each with a batch of one record; the other message was filtered out
        entradas = _entradas(maquina)
        assert sorted(len(e) for e in entradas) == [1, 1]
        assert {json.loads(e[0]["body"])["detail-type"] for e in entradas} == {"PedidoCreado"}
        wait_until(lambda: _visibles(url) == 0, "the queue drained")  # the filtered one is deleted too
        assert set(puente.corriendo) == {"pipe-pedidos"}
        # AND a pipe the account no longer has is stopped
        boto3.client("pipes").delete_pipe(Name="pipe-pedidos")
        puente.sincronizar()
        assert puente.corriendo == {}


def test_bridge_leaves_pipes_it_does_not_run_to_the_account(aws: None) -> None:
    # GIVEN a pipe whose source is not SQS (a DynamoDB stream: MiniStack runs those) and a stopped SQS pipe
    cola, maquina = _cuenta()
    ddb = boto3.client("dynamodb")
    tabla = ddb.create_table(
        TableName="carritos", KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )["TableDescription"]  # fmt: skip
    pipes = boto3.client("pipes")
    rol = "arn:aws:iam::123456789012:role/pipe"
    pipes.create_pipe(Name="pipe-carritos", RoleArn=rol, Source=tabla["LatestStreamArn"], Target=maquina)
    pipes.create_pipe(Name="pipe-parada", RoleArn=rol, Source=cola, Target=maquina, DesiredState="STOPPED")
    # WHEN the bridge looks at the account THEN it runs neither
    with PuentePipes() as puente:
        puente.sincronizar()
        assert puente.corriendo == {}


def _visibles(url: str) -> int:
    atributos = boto3.client("sqs").get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    return sum(int(v) for v in atributos.values())
