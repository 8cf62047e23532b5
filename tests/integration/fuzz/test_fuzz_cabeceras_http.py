"""The HTTP client sends any domain key as an Idempotency-Key the provider receives intact, or refuses it first.

Real HTTP on loopback: the ERP stand-in records the header it received, byte for byte as
``http.server`` decodes it, so "sent mangled" would show as a key that differs from ours.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import unquote

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mercadofresco.dominio import claves
from mercadofresco.http import ProviderClient
from mercadofresco.http.client import idempotency_key_header
from mercadofresco.idempotency.exceptions import IdempotencyKeyError
from mercadofresco_local.proveedores import ProveedorSimulado

from tests.unit.fuzz.estrategias import texto_cualquiera, texto_fuera_de_latin1

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.integration


@pytest.fixture
def erp() -> Iterator[ProveedorSimulado]:
    with ProveedorSimulado("erp") as proveedor:
        yield proveedor


@given(
    pedido_id=st.one_of(texto_fuera_de_latin1, texto_cualquiera, st.just("PED-2026-084417")),
    sku=st.one_of(texto_fuera_de_latin1, st.sampled_from(["MANZANA-ÑORA", "梨-1", "a%C3%91", "x y"])),
)
def test_fuzz_cliente_any_domain_key_reaches_the_provider_intact_or_is_refused_before_sending(
    erp, pedido_id, sku
) -> None:
    # GIVEN a reservation key built from any order id and sku (outside Latin-1, escapes, spaces...)
    try:
        clave = claves.reserva(pedido_id, sku)
    except IdempotencyKeyError:
        return  # refused at key building, with its clear error: nothing to send
    cliente = ProviderClient(dependency="erp", base_url=erp.url)
    # WHEN it is sent (an example may repeat a key: the provider then answers from its memory)
    status, _ = cliente.post("/reservas", json={"sku": sku}, idempotency_key=clave, idempotent=True)
    # THEN the provider acted once under a header that is our key, ASCII-encoded and decodable to exactly it
    assert status < 300
    recibida = idempotency_key_header(clave)
    assert erp.efectos_por_clave[recibida] == 1 and unquote(recibida, errors="strict") == clave


def test_cliente_key_with_lone_surrogate_is_refused_before_any_call(erp) -> None:
    # GIVEN a raw string key that is not text WHEN sent THEN a clear ValueError and no request at all
    cliente = ProviderClient(dependency="erp", base_url=erp.url)
    with pytest.raises(ValueError, match="surrogate"):
        cliente.post("/reservas", json={}, idempotency_key="reserva:P:\ud800", idempotent=True)
    assert sum(erp.llamadas.values()) == 0
