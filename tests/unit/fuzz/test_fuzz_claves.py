"""Key builders and the Idempotency-Key header under any Unicode: a key or a clear error, a header always ASCII."""

from __future__ import annotations

from urllib.parse import unquote

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mercadofresco.dominio import claves
from mercadofresco.http.client import idempotency_key_header
from mercadofresco.idempotency import IdempotencyKey, keys
from mercadofresco.idempotency.exceptions import IdempotencyKeyError

from tests.unit.fuzz.estrategias import texto_cualquiera, texto_fuera_de_latin1, valor_json

MENSAJE_MAX_CHARS = 400  # an error about a key fits a log line, whatever the key was
CONSTRUCTORES_1 = (
    claves.cobro,
    claves.reembolso,
    claves.correo_confirmacion,
    claves.aviso_erp,
    claves.recordatorio_carrito,
)
CONSTRUCTORES_2 = (claves.reserva, claves.liberacion)


def _clave_o_error(construir, *partes) -> IdempotencyKey | None:
    try:
        clave = construir(*partes)
    except IdempotencyKeyError as exc:
        assert len(str(exc)) <= MENSAJE_MAX_CHARS
        return None
    assert isinstance(clave, IdempotencyKey)
    return clave


def _cabecera_fiel(clave: str) -> None:
    cabecera = idempotency_key_header(clave)
    assert cabecera.isascii() and cabecera.isprintable() and " " not in cabecera
    assert unquote(cabecera, errors="strict") == clave  # nothing mangled: the provider can recover the key


@pytest.mark.parametrize("construir", CONSTRUCTORES_1, ids=lambda f: f.__name__)
@given(parte=st.one_of(texto_cualquiera, texto_fuera_de_latin1, st.integers(), st.none(), st.text(max_size=300)))
def test_fuzz_key_builder_any_id_gives_key_or_idempotency_key_error(construir, parte) -> None:
    # GIVEN any id, of any type and any characters WHEN a key is built from it
    clave = _clave_o_error(construir, parte)
    # THEN either a key whose header travels intact, or a short, clear IdempotencyKeyError
    if clave is not None:
        assert str(clave).startswith(construir.__name__.replace("_", "-") + ":")
        _cabecera_fiel(clave)


@pytest.mark.parametrize("construir", CONSTRUCTORES_2, ids=lambda f: f.__name__)
@given(pedido_id=texto_cualquiera, sku=st.one_of(texto_cualquiera, texto_fuera_de_latin1))
def test_fuzz_line_key_builder_any_sku_gives_key_or_idempotency_key_error(construir, pedido_id, sku) -> None:
    # GIVEN / WHEN any order id and sku THEN a faithful key or a clear error
    if (clave := _clave_o_error(construir, pedido_id, sku)) is not None:
        _cabecera_fiel(clave)


@given(obj=valor_json)
def test_fuzz_key_from_content_any_json_is_stable_and_ascii(obj) -> None:
    # GIVEN any JSON value WHEN keyed by content, twice
    primera = _clave_o_error(keys.key_from_content, "evento", obj)
    # THEN the same key both times (a hash: always ASCII), or a clear error both times
    assert primera == _clave_o_error(keys.key_from_content, "evento", obj)
    if primera is not None:
        _cabecera_fiel(primera)


@given(texto=texto_cualquiera)
def test_fuzz_cabecera_idempotency_key_any_text_is_ascii_and_injective_or_refused(texto) -> None:
    # GIVEN any string offered as an Idempotency-Key (the client accepts plain str too)
    try:
        cabecera = idempotency_key_header(texto)
    except ValueError as exc:
        # THEN only text that is not text (a lone surrogate) is refused, with a clear error
        assert any(0xD800 <= ord(c) <= 0xDFFF for c in texto)
        assert "surrogate" in str(exc)
        return
    # THEN otherwise the header is ASCII and decodes back to exactly the key
    assert cabecera.isascii()
    assert unquote(cabecera, errors="strict") == texto


def test_cabecera_idempotency_key_no_two_keys_share_a_header() -> None:
    # GIVEN a key with "Ñ" and one spelling its escape literally WHEN encoded THEN they stay different
    assert idempotency_key_header("reserva:P:Ñ") != idempotency_key_header("reserva:P:%C3%91")
    assert idempotency_key_header("cobro:PED-2026-084417") == "cobro:PED-2026-084417"
