"""functions/reclamo: the order claim pedido:{pedido_id} with a lease and a TTL, on a real table (moto).

The claim is the workflow's first write (ReclamarPedido): one execution per order (invariant 1), and
a claim that never outlives its lease (invariant 6), so a timed-out execution's order can be redriven.
"""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from mercadofresco.dominio.errores import LoteNoAdmitido, PedidoDuplicado
from mercadofresco.errors import EventoInvalido

from tests.conftest import load_event
from tests.fixtures.flujo import tiempos_plantilla

pytestmark = pytest.mark.integration


LEASE_S = tiempos_plantilla().leases_s["ReclamoFunction"]  # rule E9114 keeps it above TimeoutSeconds


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
    # THEN claimed EN_CURSO for this execution, with a lease past the workflow's bound and a 24 h TTL after it,
    # and the answer is the execution's state: the order read from the batch, the confirmation, the counters
    pedido = json.loads(load_event("reclamo-pedido.json")["registros"][0]["body"])["detail"]
    assert respuesta["pedido"] == pedido and respuesta["cobro"] == {"referencia_cobro": None}
    assert (
        respuesta["confirmacion"]["pedido_id"] == pedido["pedido_id"]
        and "token_tarjeta" not in respuesta["confirmacion"]
    )
    item = _item(tabla_idempotencia)
    assert item["estado"]["S"] == "EN_CURSO"
    assert item["propietario"]["S"] == load_event("reclamo-pedido.json")["ejecucion"]
    assert int(item["caduca_bloqueo"]["N"]) == ahora + LEASE_S
    assert int(item["expira_en"]["N"]) == ahora + LEASE_S + 24 * 3600


def test_reclamo_another_execution_under_a_live_lease_is_duplicado(reclamo, lambda_context):
    # GIVEN the order claimed by a live execution
    reclamo.lambda_handler(load_event("reclamo-pedido.json"), lambda_context)
    # WHEN a redelivery's execution tries to claim it
    # THEN refused: the workflow ends in Duplicado
    with pytest.raises(PedidoDuplicado, match="EN_CURSO"):
        reclamo.lambda_handler(load_event("reclamo-otra-ejecucion.json"), lambda_context)


def test_reclamo_same_attempt_repeated_is_still_its_own(reclamo, lambda_context):
    # GIVEN a claim whose answer was lost (the task is retried by the same execution)
    reclamo.lambda_handler(load_event("reclamo-pedido.json"), lambda_context)
    # WHEN the same execution claims again THEN the claim is its own
    assert reclamo.lambda_handler(load_event("reclamo-pedido.json"), lambda_context)["pedido"]


def test_reclamo_expired_lease_is_taken_by_another_execution(reclamo, tabla_idempotencia, lambda_context):
    # GIVEN an execution that claimed the order and then timed out (its lease lapsed)
    reclamo.lambda_handler(load_event("reclamo-pedido.json"), lambda_context)
    reclamo.reloj_s.ahora_s += LEASE_S + 1
    # WHEN a redrive's execution claims it
    reclamo.lambda_handler(load_event("reclamo-otra-ejecucion.json"), lambda_context)
    # THEN it takes the order over
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
    with pytest.raises(PedidoDuplicado, match="COMPLETADO"):
        reclamo.lambda_handler(load_event("reclamo-otra-ejecucion.json"), lambda_context)


@pytest.mark.parametrize(
    "evento",
    [{}, {"registros": []}, {"ejecucion": " "}, [], {"ejecucion": "arn\x00"}, {"ejecucion": "a" * 257}],
)
def test_reclamo_invalid_payload_gives_a_clear_error(reclamo, lambda_context, evento):
    # GIVEN a payload without the execution WHEN handled THEN a clear, non-retried error
    with pytest.raises(EventoInvalido, match="payload"):
        reclamo.lambda_handler(evento, lambda_context)


@pytest.mark.parametrize("registros", [[], [{"body": "{}"}, {"body": "{}"}], {"body": "{}"}, [{"cuerpo": "x"}]])
def test_reclamo_anything_but_one_sqs_record_is_lote_no_admitido(
    reclamo, tabla_idempotencia, lambda_context, registros
):
    # GIVEN a pipe that sent no record, two, or something that is not an SQS record
    evento = {"registros": registros, "ejecucion": "arn:aws:states:::execution:x:1"}
    # WHEN handled THEN the execution fails loudly and nothing is claimed
    with pytest.raises(LoteNoAdmitido):
        reclamo.lambda_handler(evento, lambda_context)
    assert boto3.client("dynamodb").scan(TableName=tabla_idempotencia)["Items"] == []


@pytest.mark.parametrize(
    ("cuerpo", "motivo"),
    [
        ("no es json", "json-invalido"),
        ({"detail": {"version": 2}}, "version-desconocida"),
        ({"detail": {"version": True, "pedido_id": "PED-1"}}, "version-desconocida"),
        ({"detail": {"version": 1, "pedido_id": "PED-1"}}, "campo-ausente"),
        (
            {
                "detail": {
                    "version": 1,
                    "pedido_id": 7,
                    "importe_centimos": 1,
                    "lineas": [],
                    "email": "e",
                    "moneda": "EUR",
                }
            },
            "dato-invalido",
        ),
        (  # not the store's format
            {
                "detail": {
                    "version": 1,
                    "pedido_id": "PED-\U0001f600",
                    "importe_centimos": 1,
                    "lineas": [],
                    "email": "e",
                    "moneda": "EUR",
                }
            },
            "dato-invalido",
        ),
        (  # a MessageId's shape: it cannot name an order's claim
            {
                "detail": {
                    "version": 1,
                    "pedido_id": "9b2e6c1a-4a4f-4f7e-9d8c-1c2b3a4d5e6f",
                    "importe_centimos": 1,
                    "lineas": [],
                    "email": "e",
                    "moneda": "EUR",
                }
            },
            "dato-invalido",
        ),
    ],
)
def test_reclamo_unreadable_order_names_its_reason_and_claims_nothing(
    reclamo, tabla_idempotencia, lambda_context, cuerpo, motivo
):
    # GIVEN a record whose body the contract refuses
    texto = cuerpo if isinstance(cuerpo, str) else json.dumps(cuerpo)
    evento = {"registros": [{"body": texto}], "ejecucion": "arn:aws:states:::execution:x:1"}
    # WHEN handled THEN EventoInvalido says '<mf-motivo>: <detail>' (the DLQ attribute) and nothing is claimed
    with pytest.raises(EventoInvalido, match=f"^{motivo}: "):
        reclamo.lambda_handler(evento, lambda_context)
    assert boto3.client("dynamodb").scan(TableName=tabla_idempotencia)["Items"] == []
