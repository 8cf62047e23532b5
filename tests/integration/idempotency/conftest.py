"""Fixtures for the idempotency store against moto's DynamoDB: a movable clock and a call counter."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest
from mercadofresco import aws
from mercadofresco.idempotency import IdempotencyConfig, IdempotencyStore

from tests.integration.idempotency.apoyo_idempotencia import Reloj

if TYPE_CHECKING:
    from collections.abc import Callable


class Llamadas(Counter):
    """DynamoDB API calls by operation name, counted with botocore's ``before-call`` event."""

    @property
    def total(self) -> int:
        return sum(self.values())


@pytest.fixture
def dynamodb(tabla_idempotencia: str) -> Any:
    """A project client (``mercadofresco.aws.client``) on moto, with the table already created."""
    return aws.client("dynamodb")


@pytest.fixture
def llamadas(dynamodb: Any) -> Llamadas:
    contador = Llamadas()

    def contar(model: Any, **_: Any) -> None:
        contador[model.name] += 1

    dynamodb.meta.events.register("before-call.dynamodb", contar)
    return contador


@pytest.fixture
def reloj() -> Reloj:
    return Reloj()


@pytest.fixture
def crear_store(tabla_idempotencia: str, dynamodb: Any, reloj: Reloj) -> Callable[..., IdempotencyStore]:
    """``crear_store(**config_fields)``: a store on the moto table with the test's clock."""

    def _crear(**config: Any) -> IdempotencyStore:
        return IdempotencyStore(
            tabla_idempotencia, dynamodb, IdempotencyConfig(**config), now_s=reloj, sleep=reloj.sleep
        )

    return _crear


@pytest.fixture
def store(crear_store: Callable[..., IdempotencyStore]) -> IdempotencyStore:
    return crear_store()


@pytest.fixture
def leer_item(dynamodb: Any, tabla_idempotencia: str) -> Callable[[str], dict[str, Any] | None]:
    """The raw item as DynamoDB holds it (what other tools and people will see); not counted."""
    lector = aws.client("dynamodb")

    def _leer(clave: str) -> dict[str, Any] | None:
        respuesta = lector.get_item(TableName=tabla_idempotencia, Key={"clave": {"S": clave}}, ConsistentRead=True)
        return respuesta.get("Item")

    return _leer
