"""The store's id format (``valores.id_tienda``): what the generator makes passes, and names every key."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mercadofresco import validation
from mercadofresco.dominio import claves, valores

from tests.unit.fuzz.estrategias import texto_cualquiera, valor_json

FORMATO = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")  # said again, by hand, to check the layer against it


@given(st.integers(0, 10))  # each example draws fresh uuid4s inside the generator
def test_nuevo_pedido_id_is_always_in_the_store_format_and_names_its_keys(_: int) -> None:
    # GIVEN an order id as the store makes it
    pedido_id = valores.nuevo_pedido_id()
    # THEN the format every entry point checks accepts it, and every key of the order can be built from it
    assert valores.id_tienda(pedido_id, "pedido_id") == pedido_id
    assert claves.cobro(pedido_id) and claves.pedido(pedido_id) and claves.reserva(pedido_id, "FRU-MAN-001")


@given(valor=st.one_of(texto_cualquiera, valor_json, st.text(alphabet="Aa0._-:😀 ", max_size=70)))
def test_fuzz_id_tienda_accepts_exactly_the_format_and_never_repeats_the_value(valor) -> None:
    # GIVEN any value offered as an order, customer or sku id (a UUID-shaped one passes here; the keys refuse it)
    try:
        aceptado = valores.id_tienda(valor, "sku")
    except validation.InvalidValueError as exc:
        # THEN refused: it is not in the format, and the message does not repeat it (it may be personal)
        assert not (isinstance(valor, str) and FORMATO.fullmatch(valor))
        assert not isinstance(valor, str) or len(valor) < 3 or valor not in str(exc)
        return
    # THEN accepted: exactly the format
    assert FORMATO.fullmatch(aceptado)


@pytest.mark.parametrize("valor", ["PED-\U0001f600", "CLI:1", " A", "A\n", "Ñ", "a" * 65, "", "-A", 7, None])
def test_id_tienda_refuses_what_the_store_never_makes(valor) -> None:
    with pytest.raises(validation.InvalidValueError, match=r"ASCII letters|must be a string"):
        valores.id_tienda(valor, "pedido_id")
