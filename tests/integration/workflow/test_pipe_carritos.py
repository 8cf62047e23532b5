"""pipe-mf-carritos keeps TTL expiries only: the template's own filter against DynamoDB Streams records.

The filter is evaluated with moto's EventBridge pattern matcher (``moto.events.models.EventPattern``,
the code that routes moto's bus rules; Pipes filters use the same pattern language). The user
delete is a real stream record: the carts table is created in moto from the template and an item
is deleted through the API. moto does not run TTL, so the TTL record is that same record with the
``userIdentity`` AWS documents for TTL deletions ({"type": "Service", "principalId":
"dynamodb.amazonaws.com"}).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import boto3
import pytest
from moto.events.models import EventPattern
from sam_emulator.template import Template, create_table_from

pytestmark = pytest.mark.integration

IDENTIDAD_TTL = {"type": "Service", "principalId": "dynamodb.amazonaws.com"}


def _pipe() -> dict[str, Any]:
    unidad, pipe = Template().locate("Carritos/PipeCarritos")  # the carts unit (decision 0130)
    return unidad.resources[pipe]["Properties"]


def _patrones() -> list[EventPattern]:
    filtros = _pipe()["SourceParameters"]["FilterCriteria"]["Filters"]
    return [EventPattern.load(f["Pattern"]) for f in filtros]


def _pasa(registro: dict[str, Any]) -> bool:
    return any(p.matches_event(registro) for p in _patrones())


@pytest.fixture
def registros(plantilla: Template) -> list[dict[str, Any]]:
    """Stream records of a cart written, updated and deleted by a user, in moto."""
    dynamodb = boto3.client("dynamodb")
    nombre = create_table_from(dynamodb, plantilla, "TablaCarritos")
    carrito = {
        "carrito_id": {"S": "CAR-7781"},
        "cliente_id": {"S": "CLI-0193"},
        "email": {"S": "lucia@example.com"},
        "expira_en": {"N": "1764426000"},
    }
    dynamodb.put_item(TableName=nombre, Item=carrito)
    dynamodb.put_item(TableName=nombre, Item={**carrito, "skus": {"SS": ["FRU-MAN-001"]}})
    dynamodb.delete_item(TableName=nombre, Key={"carrito_id": {"S": "CAR-7781"}})
    streams = boto3.client("dynamodbstreams")
    arn = dynamodb.describe_table(TableName=nombre)["Table"]["LatestStreamArn"]
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    iterador = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")
    return json.loads(json.dumps(streams.get_records(ShardIterator=iterador["ShardIterator"])["Records"], default=str))


def test_pipe_filter_when_ttl_deletes_a_cart_matches(registros: list[dict[str, Any]]) -> None:
    # GIVEN the REMOVE record, as DynamoDB's TTL process writes it
    (borrado,) = [r for r in registros if r["eventName"] == "REMOVE"]
    ttl = {**copy.deepcopy(borrado), "userIdentity": IDENTIDAD_TTL}
    # WHEN / THEN the template's filter keeps it
    assert _pasa(ttl)


def test_pipe_filter_when_user_deletes_or_writes_a_cart_drops_it(registros: list[dict[str, Any]]) -> None:
    # GIVEN the records of a user's insert, update and delete (no userIdentity)
    assert [r["eventName"] for r in registros] == ["INSERT", "MODIFY", "REMOVE"]
    # WHEN / THEN the filter drops all of them
    assert [_pasa(r) for r in registros] == [False, False, False]


def test_pipe_filter_when_service_identity_on_a_modify_drops_it(registros: list[dict[str, Any]]) -> None:
    # GIVEN an update attributed to a service (not a deletion)
    modificado = {**registros[1], "userIdentity": IDENTIDAD_TTL}
    # WHEN / THEN only deletions pass
    assert not _pasa(modificado)


def test_pipe_input_template_renders_carrito_abandonado_with_version(registros: list[dict[str, Any]]) -> None:
    # GIVEN the TTL record and the pipe's input template (placeholders <$.path> on the record)
    ttl = {**registros[2], "userIdentity": IDENTIDAD_TTL}
    props = _pipe()
    plantilla = props["TargetParameters"]["InputTemplate"]

    def valor(m: re.Match[str]) -> str:
        nodo: Any = ttl
        for parte in m.group(1).split("."):
            nodo = nodo[parte]
        return str(nodo)

    # WHEN the placeholders are filled the way Pipes fills quoted string placeholders
    detalle = json.loads(re.sub(r"<\$\.([^>]+)>", valor, plantilla))
    # THEN the event is a CarritoAbandonado the e-mail consumer can read
    assert props["TargetParameters"]["EventBridgeEventBusParameters"]["DetailType"] == "CarritoAbandonado"
    assert detalle["version"] == 1
    assert (detalle["carrito_id"], detalle["email"]) == ("CAR-7781", "lucia@example.com")
    assert detalle["id"] == ttl["eventID"]


def test_pipe_source_sets_retry_limits_bisect_and_dlq() -> None:
    # GIVEN the pipe's stream parameters
    fuente = _pipe()["SourceParameters"]["DynamoDBStreamParameters"]
    # THEN a failing batch is neither retried forever nor lost silently
    assert fuente["MaximumRetryAttempts"] <= 10
    assert 60 <= fuente["MaximumRecordAgeInSeconds"] <= 86400
    assert fuente["OnPartialBatchItemFailure"] == "AUTOMATIC_BISECT"
    # AND its DLQ is the one the root keeps (with what a stack delete retains) and passes to the unit
    assert fuente["DeadLetterConfig"]["Arn"] == {"Ref": "DlqArn"}
    pasados = Template().resources["Carritos"]["Properties"]["Parameters"]
    assert pasados["DlqArn"] == {"Fn::GetAtt": ["ColaCarritosFallidos", "Arn"]}
