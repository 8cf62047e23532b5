"""Keys: built from the domain, a type of their own, independent of JSON key order."""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest
from mercadofresco.dominio import claves
from mercadofresco.idempotency import IdempotencyKey, keys
from mercadofresco.idempotency.exceptions import IdempotencyKeyError


def test_domain_builders_produce_the_lesson_keys() -> None:
    # GIVEN an order, a line and a cart
    # WHEN their keys are built
    construidas = [
        claves.cobro("PED-2026-084417"),
        claves.reembolso("PED-2026-084417"),
        claves.correo_confirmacion("PED-2026-084417"),
        claves.aviso_erp("PED-2026-084417"),
        claves.reserva("PED-2026-084417", "SKU-TOM-1KG"),
        claves.recordatorio_carrito("CAR-77"),
    ]
    # THEN they are exactly the lesson's, each a IdempotencyKey naming its operation
    assert construidas == [
        "cobro:PED-2026-084417",
        "reembolso:PED-2026-084417",
        "correo-confirmacion:PED-2026-084417",
        "aviso-erp:PED-2026-084417",
        "reserva:PED-2026-084417:SKU-TOM-1KG",
        "recordatorio-carrito:CAR-77",
    ]
    assert all(type(c) is IdempotencyKey for c in construidas)
    assert [c.operation for c in construidas[:2]] == ["cobro", "reembolso"]


@pytest.mark.parametrize("falso_id", [str(uuid.uuid4()), uuid.uuid4().hex, "059f36b4-87a3-44ab-83d2-661975830a7d"])
def test_order_builders_with_message_id_or_uuid_raise_clear_error(falso_id: str) -> None:
    # GIVEN what a MessageId or a fresh uuid4() looks like
    # WHEN it is used as the order id of a charge key
    with pytest.raises(IdempotencyKeyError) as info:
        claves.cobro(falso_id)
    # THEN the error explains the rule
    assert "MessageId" in str(info.value) and "pedido_id" in str(info.value)


def test_cart_reminder_accepts_uuid_cart_id() -> None:
    # GIVEN a cart whose stable id is a UUID minted at creation
    carrito_id = "0b7e3a4c-9f5e-4c1b-8d2a-3e4f5a6b7c8d"
    # WHEN its reminder key is built
    clave = claves.recordatorio_carrito(carrito_id)
    # THEN it is accepted
    assert clave == f"recordatorio-carrito:{carrito_id}"


@pytest.mark.parametrize("malo", ["", "  ", "PED:1", " PED-1", None, 84417, "x" * 201])
def test_builders_bad_part_raise_key_error(malo: object) -> None:
    # GIVEN an empty, ambiguous, non-str or oversized id
    # WHEN a key is built from it
    with pytest.raises(IdempotencyKeyError) as info:
        claves.reserva("PED-1", malo)  # type: ignore[arg-type]
    # THEN the error names the operation
    assert "reserva" in str(info.value)


def test_key_from_content_independent_of_key_order_and_sensitive_to_values() -> None:
    # GIVEN the same content with keys in another order (nested too), and one changed value
    a = {"sku": "SKU-1", "cantidad": 2, "extra": {"x": 1, "y": [1, 2]}}
    b = {"extra": {"y": [1, 2], "x": 1}, "cantidad": 2, "sku": "SKU-1"}
    c = {"sku": "SKU-1", "cantidad": 3, "extra": {"x": 1, "y": [1, 2]}}
    # WHEN content keys are built
    ka, kb, kc = (keys.key_from_content("ajuste-stock", o) for o in (a, b, c))
    # THEN order does not matter, values do, and the key says it is a content hash
    assert ka == kb != kc
    assert ka.startswith("ajuste-stock:sha256:") and len(ka.rsplit(":", 1)[1]) == 64


def test_canonical_json_keeps_decimal_exact_and_refuses_unknown_types() -> None:
    # GIVEN an amount as Decimal (a float would round it) and an object JSON cannot express
    # WHEN canonical JSON is built
    texto = keys.canonical_json({"importe": Decimal("48.20"), "b": 1})
    with pytest.raises(IdempotencyKeyError) as info:
        keys.canonical_json({"x": object()})
    # THEN the Decimal is its exact string and the unknown type is a clear error
    assert texto == '{"b":1,"importe":"48.20"}'
    assert "object is not JSON-serialisable" in str(info.value)


def test_operation_name_must_be_lowercase_slug() -> None:
    # GIVEN an operation name with spaces and capitals
    # WHEN a content key is built
    with pytest.raises(IdempotencyKeyError):
        keys.key_from_content("Ajuste Stock", {"a": 1})
    # THEN it is refused (asserted by the raise)
