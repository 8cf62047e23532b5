"""The durable execution's name from the order (``claves.ejecucion_pedido``): always valid, never shared."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mercadofresco.dominio import claves
from mercadofresco.idempotency.exceptions import IdempotencyKeyError

# Lambda's Invoke DurableExecutionName, said again by hand to check the layer against it.
NOMBRE = re.compile(r"[a-zA-Z0-9_-]{1,64}")
ID_TIENDA = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", fullmatch=True)


@given(pedido_id=ID_TIENDA)
def test_fuzz_ejecucion_pedido_is_a_valid_durable_execution_name_for_every_store_id(pedido_id: str) -> None:
    # GIVEN any id the store may give an order WHEN its execution is named
    try:
        nombre = claves.ejecucion_pedido(pedido_id)
    except IdempotencyKeyError:
        # THEN only an id that cannot name its claim either is refused (a UUID-shaped one)
        with pytest.raises(IdempotencyKeyError):
            claves.pedido(pedido_id)
        return
    # THEN the name is one Lambda accepts
    assert NOMBRE.fullmatch(nombre)


@given(a=ID_TIENDA, b=ID_TIENDA)
def test_fuzz_ejecucion_pedido_two_orders_never_share_a_name(a: str, b: str) -> None:
    # GIVEN two different orders WHEN both are named THEN their names differ (a start deduplicates one order only)
    try:
        nombres = {claves.ejecucion_pedido(a), claves.ejecucion_pedido(b)}
    except IdempotencyKeyError:
        return
    assert len(nombres) == (1 if a == b else 2)


@pytest.mark.parametrize(
    ("pedido_id", "nombre"),
    [
        ("PED-2026-084417", "pedido-PED-2026-084417"),  # the store's own ids fit as they are
        ("PED-20f1c0ffee0123456789ab", "pedido-PED-20f1c0ffee0123456789ab"),
    ],
)
def test_ejecucion_pedido_keeps_a_store_id_readable(pedido_id: str, nombre: str) -> None:
    assert claves.ejecucion_pedido(pedido_id) == nombre


@pytest.mark.parametrize("pedido_id", ["PED.2026.1", "P" * 58, "P" * 64])
def test_ejecucion_pedido_hashes_an_id_a_name_cannot_hold(pedido_id: str) -> None:
    # GIVEN an id with a '.' or too long for "pedido-" + id WHEN named THEN a hash, under its own prefix
    nombre = claves.ejecucion_pedido(pedido_id)
    assert nombre.startswith("pedidoh-") and NOMBRE.fullmatch(nombre) and len(nombre) == 64
