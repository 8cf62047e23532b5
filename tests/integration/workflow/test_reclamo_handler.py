"""functions/reclamo: the order claim pedido:{pedido_id} with a lease and a TTL, on a real table (moto).

The claim is the workflow's first write (ReclamarPedido): one execution per order (invariant 1), and
a claim that never outlives its lease (invariant 6), so a timed-out execution's order can be redriven.
"""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from mercadofresco.errors import EventoInvalido

from tests.conftest import load_event

pytestmark = pytest.mark.integration

LEASE_S = 7500


class Reloj:
    def __init__(self) -> None:
        self.ahora_s = 1_796_000_000.0

    def __call__(self) -> float:
        return self.ahora_s


@pytest.fixture
def reclamo(app_module, tabla_idempotencia) -> Any:
    app = app_module("reclamo", TABLA_IDEMPOTENCIA=tabla_idempotencia, IDEMPOTENCY_LEASE_S=str(LEASE_S))
    app.reloj_s = app.store._now_s = Reloj()
    return app


def _item(tabla: str) -> dict[str, Any]:
    clave = {"clave": {"S": "pedido:PED-2026-084417"}}
    return boto3.client("dynamodb").get_item(TableName=tabla, Key=clave)["Item"]


def test_reclamo_first_execution_claims_with_lease_and_ttl(reclamo, tabla_idempotencia, lambda_context):
    # GIVEN no claim for the order
    ahora = int(reclamo.reloj_s())
    # WHEN the workflow claims it
    respuesta = reclamo.lambda_handler(load_event("reclamo-pedido.json"), lambda_context)
    # THEN claimed EN_CURSO for this execution, with a lease past the workflow's bound and a 24 h TTL after it
    assert respuesta == {
        "reclamado": True, "ahora_s": ahora, "caduca_bloqueo": ahora + LEASE_S,
        "expira_en": ahora + LEASE_S + 24 * 3600, "estado": "EN_CURSO",
    }  # fmt: skip
    item = _item(tabla_idempotencia)
    assert item["estado"]["S"] == "EN_CURSO"
    assert item["propietario"]["S"] == load_event("reclamo-pedido.json")["ejecucion"]
    assert int(item["caduca_bloqueo"]["N"]) == ahora + LEASE_S
    assert int(item["expira_en"]["N"]) == ahora + LEASE_S + 24 * 3600


def test_reclamo_another_execution_under_a_live_lease_is_duplicado(reclamo, lambda_context):
    # GIVEN the order claimed by a live execution
    reclamo.lambda_handler(load_event("reclamo-pedido.json"), lambda_context)
    # WHEN a redelivery's execution tries to claim it
    respuesta = reclamo.lambda_handler(load_event("reclamo-otra-ejecucion.json"), lambda_context)
    # THEN refused: the workflow ends in Duplicado
    assert respuesta["reclamado"] is False and respuesta["estado"] == "EN_CURSO"


def test_reclamo_same_attempt_repeated_is_still_its_own(reclamo, lambda_context):
    # GIVEN a claim whose answer was lost (the task is retried by the same execution)
    reclamo.lambda_handler(load_event("reclamo-pedido.json"), lambda_context)
    # WHEN the same execution claims again THEN the claim is its own
    assert reclamo.lambda_handler(load_event("reclamo-pedido.json"), lambda_context)["reclamado"] is True


def test_reclamo_expired_lease_is_taken_by_another_execution(reclamo, tabla_idempotencia, lambda_context):
    # GIVEN an execution that claimed the order and then timed out (its lease lapsed)
    reclamo.lambda_handler(load_event("reclamo-pedido.json"), lambda_context)
    reclamo.reloj_s.ahora_s += LEASE_S + 1
    # WHEN a redrive's execution claims it
    respuesta = reclamo.lambda_handler(load_event("reclamo-otra-ejecucion.json"), lambda_context)
    # THEN it takes the order over
    assert respuesta["reclamado"] is True
    assert _item(tabla_idempotencia)["propietario"]["S"] == load_event("reclamo-otra-ejecucion.json")["ejecucion"]


def test_reclamo_closed_outcome_blocks_until_its_ttl(reclamo, tabla_idempotencia, lambda_context):
    # GIVEN a claim closed with the order's outcome (what the workflow's CerrarReclamo writes)
    reclamo.lambda_handler(load_event("reclamo-pedido.json"), lambda_context)
    boto3.client("dynamodb").update_item(
        TableName=tabla_idempotencia,
        Key={"clave": {"S": "pedido:PED-2026-084417"}},
        UpdateExpression="SET estado = :c REMOVE caduca_bloqueo",
        ExpressionAttributeValues={":c": {"S": "COMPLETADO"}},
    )
    # WHEN a replay arrives after the lease would have lapsed, but within the TTL
    reclamo.reloj_s.ahora_s += LEASE_S + 3600
    # THEN it is a duplicate
    assert reclamo.lambda_handler(load_event("reclamo-otra-ejecucion.json"), lambda_context)["reclamado"] is False


@pytest.mark.parametrize(
    "evento",
    [
        {},
        {"pedido_id": "PED-1"},
        {"pedido_id": 7, "ejecucion": "arn"},
        [],
        {"pedido_id": "PED-\U0001f600", "ejecucion": "arn"},  # not the store's format
        {"pedido_id": "9b2e6c1a-4a4f-4f7e-9d8c-1c2b3a4d5e6f", "ejecucion": "arn"},  # a MessageId's shape
        {"pedido_id": "PED-1", "ejecucion": "arn\x00"},
        {"pedido_id": "PED-1", "ejecucion": "a" * 257},
    ],
)
def test_reclamo_invalid_payload_gives_a_clear_error(reclamo, tabla_idempotencia, lambda_context, evento):
    # GIVEN a payload without the order or the execution WHEN handled THEN a clear, non-retried error
    with pytest.raises(EventoInvalido, match="payload"):
        reclamo.lambda_handler(evento, lambda_context)
    # AND nothing was claimed
    assert boto3.client("dynamodb").scan(TableName=tabla_idempotencia)["Count"] == 0
