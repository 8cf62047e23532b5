"""The exact requests the store sends, pinned with botocore's Stubber (no network, no moto)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from botocore.stub import ANY, Stubber
from mercadofresco import aws
from mercadofresco.dominio import claves
from mercadofresco.errors import OperacionEnCurso
from mercadofresco.idempotency import IdempotencyError, IdempotencyStore, keys

if TYPE_CHECKING:
    from collections.abc import Callable

T0_S = 1_790_000_000
TABLA = "mercadofresco-idempotencia"


@pytest.fixture
def stub(stubbed: Callable[[str], tuple[Any, Stubber]]) -> tuple[Any, Stubber]:
    return stubbed("dynamodb")


def test_claim_is_one_conditional_put_returning_all_old(stub: tuple[Any, Stubber]) -> None:
    # GIVEN a DynamoDB that refuses the claim with a live EN_CURSO item
    cliente, stubber = stub
    clave = claves.cobro("PED-2026-084417")
    stubber.add_client_error(
        "put_item",
        service_error_code="ConditionalCheckFailedException",
        http_status_code=400,
        expected_params={
            "TableName": TABLA,
            "Item": {
                "clave": {"S": clave},
                "estado": {"S": "EN_CURSO"},
                "expira_en": {"N": str(T0_S + 86_400)},
                "caduca_bloqueo": {"N": str(T0_S + 90)},
                "propietario": {"S": ANY},
                "hash_payload": {"S": ANY},
            },
            "ConditionExpression": "attribute_not_exists(#clave) OR #expira_en < :ahora OR "
            "(#estado = :en_curso AND #caduca_bloqueo < :ahora AND "
            "(attribute_not_exists(#hash_payload) OR #hash_payload = :hash))",
            "ExpressionAttributeNames": {
                "#clave": "clave",
                "#estado": "estado",
                "#expira_en": "expira_en",
                "#caduca_bloqueo": "caduca_bloqueo",
                "#hash_payload": "hash_payload",
            },
            "ExpressionAttributeValues": {
                ":ahora": {"N": str(T0_S)},
                ":en_curso": {"S": "EN_CURSO"},
                ":hash": {"S": keys.canonical_hash({"pedido_id": "PED-2026-084417"})},
            },
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        },
        modeled_fields={"Item": {"clave": {"S": clave}, "estado": {"S": "EN_CURSO"}, "expira_en": {"N": "1"}}},
    )
    store = IdempotencyStore(TABLA, cliente, now_s=lambda: T0_S)
    # WHEN a duplicate tries to claim
    with pytest.raises(OperacionEnCurso):
        store.run(clave, lambda: "no", payload={"pedido_id": "PED-2026-084417"})
    # THEN exactly that one request was sent (the Stubber checks parameters and that nothing else was called)


def test_from_env_without_table_name_raises_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a function deployed without TABLA_IDEMPOTENCIA
    monkeypatch.delenv("TABLA_IDEMPOTENCIA", raising=False)
    # WHEN the store is built from the environment
    with pytest.raises(IdempotencyError) as info:
        IdempotencyStore.from_env()
    # THEN the error names the variable
    assert "TABLA_IDEMPOTENCIA" in str(info.value)


def test_from_env_reads_table_and_lease(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN the template's environment for a function with a 60 s timeout
    monkeypatch.setenv("TABLA_IDEMPOTENCIA", "mercadofresco-idempotencia-dev")
    monkeypatch.setenv("FUNCTION_TIMEOUT_S", "60")
    monkeypatch.delenv("IDEMPOTENCY_LEASE_S", raising=False)
    # WHEN the store is built from it
    store = IdempotencyStore.from_env()
    # THEN it uses that table, a project client and a lease of timeout + margin
    assert store.table_name == "mercadofresco-idempotencia-dev"
    assert store.config.lease_s == 120
    assert store.records.client.meta.config.connect_timeout == aws.SDK_CONNECT_TIMEOUT_S
