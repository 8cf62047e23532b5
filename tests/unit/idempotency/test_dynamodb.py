"""The exact requests behind each verb, pinned with botocore's Stubber (no network, no moto).

What ``claim``, ``complete`` and ``fail`` send is what the table's records, the template's least-privilege
policies and the workflow's own writes (``Confirmado``/``CerrarReclamo`` close ``pedido:`` by the same
``propietario``) rely on: the condition expressions and the stored attribute names never change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from mercadofresco.dominio import claves
from mercadofresco.dominio.errores import CobroRechazado, PasarelaNoDisponible
from mercadofresco.errors import OperacionEnCurso
from mercadofresco.idempotency import IdempotencyStore
from mercadofresco.idempotency.keys import canonical_hash

if TYPE_CHECKING:
    from collections.abc import Callable

    from botocore.stub import Stubber

T0_S = 1_790_000_000
TABLA = "mercadofresco-idempotencia"
LEASE_S = 90  # the layer's default: its 30 s function timeout + 60 s
DIA_S = 86_400
CLAVE = claves.cobro("PED-2026-084417")
DUENO = "consumidor-1"
RECLAMO = "attribute_not_exists(#clave) OR #expira_en < :ahora OR (#estado = :en_curso AND #caduca_bloqueo < :ahora"
MISMO_PAYLOAD = " AND (attribute_not_exists(#hash_payload) OR #hash_payload = :hash)"
ES_SUYO = "attribute_not_exists(#clave) OR #propietario = :propietario"
NOMBRES_RECLAMO = {
    "#clave": "clave",
    "#estado": "estado",
    "#expira_en": "expira_en",
    "#caduca_bloqueo": "caduca_bloqueo",
}


@pytest.fixture
def stub(stubbed: Callable[[str], tuple[Any, Stubber]]) -> tuple[Any, Stubber]:
    return stubbed("dynamodb")


def _reclamo_ganado(stubber: Stubber) -> None:
    """The claim every outcome test starts from: PutItem accepted, no payload validated."""
    stubber.add_response(
        "put_item",
        {},
        {
            "TableName": TABLA,
            "Item": {
                "clave": {"S": CLAVE},
                "estado": {"S": "EN_CURSO"},
                "expira_en": {"N": str(T0_S + LEASE_S + DIA_S)},
                "caduca_bloqueo": {"N": str(T0_S + LEASE_S)},
                "propietario": {"S": DUENO},
            },
            "ConditionExpression": RECLAMO + ")",
            "ExpressionAttributeNames": NOMBRES_RECLAMO,
            "ExpressionAttributeValues": {":ahora": {"N": str(T0_S)}, ":en_curso": {"S": "EN_CURSO"}},
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        },
    )


def test_claim_is_one_conditional_put_returning_all_old(stub: tuple[Any, Stubber]) -> None:
    # GIVEN a DynamoDB that refuses the claim with a live EN_CURSO item
    cliente, stubber = stub
    pedido = {"pedido_id": "PED-2026-084417"}
    stubber.add_client_error(
        "put_item",
        service_error_code="ConditionalCheckFailedException",
        http_status_code=400,
        expected_params={
            "TableName": TABLA,
            "Item": {
                "clave": {"S": CLAVE},
                "estado": {"S": "EN_CURSO"},
                # the lease's end, and 24 h after it: the record outlives the last moment its outcome may come
                "expira_en": {"N": str(T0_S + LEASE_S + DIA_S)},
                "caduca_bloqueo": {"N": str(T0_S + LEASE_S)},
                "propietario": {"S": DUENO},
                "hash_payload": {"S": canonical_hash(pedido)},
            },
            "ConditionExpression": RECLAMO + MISMO_PAYLOAD + ")",
            "ExpressionAttributeNames": {**NOMBRES_RECLAMO, "#hash_payload": "hash_payload"},
            "ExpressionAttributeValues": {
                ":ahora": {"N": str(T0_S)},
                ":en_curso": {"S": "EN_CURSO"},
                ":hash": {"S": canonical_hash(pedido)},
            },
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        },
        modeled_fields={"Item": {"clave": {"S": CLAVE}, "estado": {"S": "EN_CURSO"}, "expira_en": {"N": "1"}}},
    )
    store = IdempotencyStore(TABLA, cliente, now_s=lambda: T0_S)
    # WHEN a duplicate tries to claim
    reclamo = store.claim(CLAVE, payload=pedido, owner=DUENO)
    # THEN exactly that one request was sent (the Stubber checks parameters and that nothing else was called),
    # and the refusal is the answer: the record found, in progress elsewhere
    assert not reclamo.won and reclamo.record.estado == "EN_CURSO"
    with pytest.raises(OperacionEnCurso):
        reclamo.result()


def test_complete_is_one_update_to_completado_by_the_owner(stub: tuple[Any, Stubber]) -> None:
    # GIVEN a claim won at T0, and the operation ending 5 s later
    cliente, stubber = stub
    reloj = [T0_S]
    store = IdempotencyStore(TABLA, cliente, now_s=lambda: reloj[0])
    _reclamo_ganado(stubber)
    reclamo = store.claim(CLAVE, owner=DUENO)
    reloj[0] += 5
    stubber.add_response(
        "update_item",
        {},
        {
            "TableName": TABLA,
            "Key": {"clave": {"S": CLAVE}},
            "UpdateExpression": "SET #estado = :estado, #resultado = :resultado, #expira_en = :expira_en "
            "REMOVE #caduca_bloqueo",
            "ConditionExpression": ES_SUYO,
            "ExpressionAttributeNames": {
                "#clave": "clave",
                "#estado": "estado",
                "#expira_en": "expira_en",
                "#caduca_bloqueo": "caduca_bloqueo",
                "#propietario": "propietario",
                "#resultado": "resultado",
            },
            "ExpressionAttributeValues": {
                ":estado": {"S": "COMPLETADO"},
                ":resultado": {"S": '{"referencia_cobro": "ch_0001"}'},
                ":expira_en": {"N": str(T0_S + 5 + DIA_S)},
                ":propietario": {"S": DUENO},
            },
        },
    )
    # WHEN it is completed
    resultado = store.complete(reclamo, {"referencia_cobro": "ch_0001"})
    # THEN one UpdateItem by the claim's owner wrote COMPLETADO, 24 h from the completion, and the result came back
    assert resultado == {"referencia_cobro": "ch_0001"}


def test_fail_permanent_is_one_update_to_fallido_by_the_owner(stub: tuple[Any, Stubber]) -> None:
    # GIVEN a claim won, and a declined card
    cliente, stubber = stub
    store = IdempotencyStore(TABLA, cliente, now_s=lambda: T0_S)
    _reclamo_ganado(stubber)
    reclamo = store.claim(CLAVE, owner=DUENO)
    stubber.add_response(
        "update_item",
        {},
        {
            "TableName": TABLA,
            "Key": {"clave": {"S": CLAVE}},
            "UpdateExpression": "SET #estado = :estado, #error = :error, #expira_en = :expira_en "
            "REMOVE #caduca_bloqueo",
            "ConditionExpression": ES_SUYO,
            "ExpressionAttributeNames": {
                "#clave": "clave",
                "#estado": "estado",
                "#expira_en": "expira_en",
                "#caduca_bloqueo": "caduca_bloqueo",
                "#propietario": "propietario",
                "#error": "error",
            },
            "ExpressionAttributeValues": {
                ":estado": {"S": "FALLIDO"},
                ":error": {
                    "M": {
                        "tipo": {"S": "mercadofresco.dominio.errores.CobroRechazado"},
                        "mensaje": {"S": "tarjeta denegada"},
                    }
                },
                ":expira_en": {"N": str(T0_S + DIA_S)},
                ":propietario": {"S": DUENO},
            },
        },
    )
    # WHEN the claim is failed with it
    store.fail(reclamo, CobroRechazado("tarjeta denegada"))
    # THEN one UpdateItem by the owner recorded FALLIDO with the error's class and message (the Stubber checked it)


def test_fail_transient_is_one_delete_by_the_owner(stub: tuple[Any, Stubber]) -> None:
    # GIVEN a claim won, and a gateway that is down
    cliente, stubber = stub
    store = IdempotencyStore(TABLA, cliente, now_s=lambda: T0_S)
    _reclamo_ganado(stubber)
    reclamo = store.claim(CLAVE, owner=DUENO)
    stubber.add_response(
        "delete_item",
        {},
        {
            "TableName": TABLA,
            "Key": {"clave": {"S": CLAVE}},
            "ConditionExpression": "#propietario = :propietario",
            "ExpressionAttributeNames": {"#propietario": "propietario"},
            "ExpressionAttributeValues": {":propietario": {"S": DUENO}},
        },
    )
    # WHEN the claim is failed with it
    store.fail(reclamo, PasarelaNoDisponible("503 from gateway"))
    # THEN the key was released by one DeleteItem, conditioned on the owner (the Stubber checked it)
