"""LocalRuntime runs a template's DynamoDB-stream pipe with TTL expiries, generically."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from tests.conftest import wait_until

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration

_CARRITOS = """
  Carritos:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: carritos-prueba
      BillingMode: PAY_PER_REQUEST
      AttributeDefinitions: [{AttributeName: carrito_id, AttributeType: S}]
      KeySchema: [{AttributeName: carrito_id, KeyType: HASH}]
      StreamSpecification: {StreamViewType: OLD_IMAGE}
      TimeToLiveSpecification: {AttributeName: expira_en, Enabled: true}
  Fallidos:
    Type: AWS::SQS::Queue
    Properties: {QueueName: carritos-fallidos-prueba}
  PipeCarritos:
    Type: AWS::Pipes::Pipe
    Properties:
      Name: pipe-mf-carritos-prueba
      RoleArn: arn:aws:iam::123456789012:role/pipe
      Source: !GetAtt Carritos.StreamArn
      SourceParameters:
        DynamoDBStreamParameters:
          StartingPosition: TRIM_HORIZON
          BatchSize: 10
          MaximumRetryAttempts: 3
          DeadLetterConfig: {Arn: !GetAtt Fallidos.Arn}
        FilterCriteria:
          Filters:
            - Pattern: '{"eventName": ["REMOVE"], "userIdentity": {"principalId": ["dynamodb.amazonaws.com"]}}'
      Target: !Ref BusArn
      TargetParameters:
        EventBridgeEventBusParameters: {DetailType: CarritoAbandonado, Source: mercadofresco.carritos}
        InputTemplate: >-
          {"carrito_id": "<$.dynamodb.OldImage.carrito_id.S>", "email": "<$.dynamodb.OldImage.email.S>"}
"""

_BUS_Y_REGLA = """
  Bus:
    Type: AWS::Events::EventBus
    Properties: {Name: bus-prueba}
  Recordatorios:
    Type: AWS::SQS::Queue
    Properties: {QueueName: recordatorios-prueba}
  Regla:
    Type: AWS::Events::Rule
    Properties:
      EventBusName: !Ref Bus
      EventPattern: {detail-type: [CarritoAbandonado]}
      Targets: [{Id: cola, Arn: !GetAtt Recordatorios.Arn}]
"""

# The carts written in the root, or as a nested unit the root passes its bus to (decision 0130): the local run
# must run the pipe and find the table and the queues either way.
PLANTILLAS = {
    "en la raiz": {
        "template.yaml": "Resources:" + _BUS_Y_REGLA + _CARRITOS.replace("!Ref BusArn", "!GetAtt Bus.Arn"),
    },
    "en una unidad": {
        "template.yaml": "Resources:"
        + _BUS_Y_REGLA
        + """
  UnidadCarritos:
    Type: AWS::Serverless::Application
    Properties:
      Location: unidades/carritos.yaml
      Parameters: {BusArn: !GetAtt Bus.Arn}
""",
        "unidades/carritos.yaml": "Parameters: {BusArn: {Type: String}}\nResources:" + _CARRITOS,
    },
}


@pytest.mark.parametrize("forma", PLANTILLAS)
def test_runtime_carts_pipe_publishes_only_carts_expired_by_ttl(tmp_path: Path, forma: str) -> None:
    from mercadofresco.aws import client
    from mercadofresco_local import carritos
    from sam_emulator.pipes import PipeStream
    from sam_emulator.runtime import LocalRuntime
    from sam_emulator.template import Template

    # GIVEN a template with a carts table (stream + TTL), a pipe to a bus, and a rule to a queue
    for nombre, texto in PLANTILLAS[forma].items():
        (tmp_path / nombre).parent.mkdir(exist_ok=True)
        (tmp_path / nombre).write_text(texto)
    with LocalRuntime(template=Template(path=tmp_path / "template.yaml"), compression=30) as rt:
        # AND three expired carts plus one the customer emptied
        sembrados = carritos.sembrar(rt.template, 3)
        assert sembrados is not None and sembrados.tabla == "carritos-prueba"
        # AND the run knows each queue by its path, the pipe's DLQ as a DLQ (it is not drained like the others)
        unidad = "UnidadCarritos/" if forma == "en una unidad" else ""
        assert rt.queues() == {"Recordatorios": "recordatorios-prueba", f"{unidad}Fallidos": "carritos-fallidos-prueba"}
        assert rt.is_dlq(f"{unidad}Fallidos") and not rt.is_dlq("Recordatorios")

        # WHEN the runtime runs the TTL and the pipe
        rt.start_consuming()
        sqs = client("sqs")
        url = rt.queue_url_of("Recordatorios")
        # (the pipe has read all 8 stream records: 4 puts, the customer's delete, TTL's 3 deletes)
        (pipe,) = (p for p in rt.pipes if isinstance(p, PipeStream))
        wait_until(lambda: pipe.read_count == 8 and pipe.sent >= 3, "the pipe to read the whole stream")
        recibidos: list[dict] = []
        while mensajes := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
            for m in mensajes:
                recibidos.append(json.loads(m["Body"]))
                sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])

    # THEN exactly the expired carts became CarritoAbandonado events, with the template's input shape
    assert sorted(e["detail"]["carrito_id"] for e in recibidos) == sorted(sembrados.caducados)
    assert all(e["detail-type"] == "CarritoAbandonado" and "@" in e["detail"]["email"] for e in recibidos)
