"""POST /pedidos body validation: every bad value gets a clear, specific message; a good body becomes a Pedido."""

from __future__ import annotations

from typing import Any

import pytest
from mercadofresco.dominio.solicitudes import (
    ClaveIdempotenciaInvalida,
    SolicitudInvalida,
    huella,
    validar_clave,
    validar_solicitud,
)
from mercadofresco.validation import ECHO_MAX_CHARS


def _cuerpo(**cambios: Any) -> dict[str, Any]:
    cuerpo: dict[str, Any] = {
        "cliente_id": "CLI-0193",
        "email": "lucia.ferrer@example.com",
        "moneda": "EUR",
        "lineas": [{"sku": "FRU-MAN-001", "cantidad": 2, "precio_centimos": 249}],
    }
    cuerpo.update(cambios)
    return cuerpo


def test_validar_solicitud_valid_body_builds_order_with_integer_cents() -> None:
    # GIVEN a well-formed body with two lines
    cuerpo = _cuerpo(
        lineas=[
            {"sku": "A-1", "cantidad": 2, "precio_centimos": 249},
            {"sku": "B-2", "cantidad": 1, "precio_centimos": 189},
        ]
    )
    # WHEN it is validated
    pedido = validar_solicitud(cuerpo, "PED-1")
    # THEN the order carries the server's id and the total in cents
    assert pedido.pedido_id == "PED-1"
    assert pedido.importe_centimos == 2 * 249 + 189
    assert pedido.email == "lucia.ferrer@example.com"


def test_validar_solicitud_missing_currency_defaults_to_eur() -> None:
    cuerpo = _cuerpo()
    del cuerpo["moneda"]
    assert validar_solicitud(cuerpo, "PED-1").moneda == "EUR"


@pytest.mark.parametrize(
    ("cambios", "fragmento"),
    [
        ({"lineas": []}, "lineas: required, a non-empty list"),
        ({"lineas": "FRU-MAN-001"}, "lineas: required, a non-empty list"),
        ({"lineas": [{"sku": "A", "cantidad": 0, "precio_centimos": 100}]}, "lineas[0].cantidad"),
        ({"lineas": [{"sku": "A", "cantidad": 1.5, "precio_centimos": 100}]}, "lineas[0].cantidad"),
        ({"lineas": [{"sku": "A", "cantidad": True, "precio_centimos": 100}]}, "lineas[0].cantidad"),
        ({"lineas": [{"sku": "A", "cantidad": 1, "precio_centimos": 2.49}]}, "lineas[0].precio_centimos"),
        ({"lineas": [{"sku": "A", "cantidad": 1, "precio_centimos": "249"}]}, "lineas[0].precio_centimos"),
        ({"lineas": [{"sku": "A", "cantidad": 1, "precio_centimos": -1}]}, "lineas[0].precio_centimos"),
        ({"lineas": [{"sku": "", "cantidad": 1, "precio_centimos": 1}]}, "lineas[0].sku"),
        ({"lineas": [{"cantidad": 1, "precio_centimos": 1}]}, "lineas[0].sku"),
        ({"lineas": [{"sku": "A", "cantidad": 1, "precio_centimos": 1}] * 2}, "each sku may appear once"),
        ({"lineas": ["A"]}, "lineas[0]: must be an object"),
        ({"moneda": "EURO"}, "moneda: an ISO 4217 code"),
        ({"moneda": "eur"}, "moneda: an ISO 4217 code"),
        ({"moneda": "XYZ"}, "moneda: an ISO 4217 code"),
        ({"email": "lucia.ferrer"}, "email: required"),
        ({"email": "lucia @example.com"}, "email: required"),
        ({"email": None}, "email: required"),
        ({"cliente_id": ""}, "cliente_id: required"),
        ({"cliente_id": 193}, "cliente_id: required"),
        ({"linea": []}, "unknown field(s) 'linea'"),
        # Ids in the store's one format: no ':' (it splits an idempotency key), nothing outside ASCII
        ({"cliente_id": "CLI:0193"}, "cliente_id: must be 1 to 64 ASCII"),
        ({"cliente_id": "CLI-\U0001f600"}, "cliente_id: must be 1 to 64 ASCII"),
        ({"lineas": [{"sku": "FRU:MAN", "cantidad": 1, "precio_centimos": 1}]}, "lineas[0].sku: must be 1 to 64"),
        # A total past the store's ceiling: a 400 listing it, not an error out of the write
        ({"lineas": [{"sku": "A", "cantidad": 1_000, "precio_centimos": 10_000_000}]}, "importe_centimos"),
    ],
)
def test_validar_solicitud_bad_value_raises_with_the_field_named(cambios: dict[str, Any], fragmento: str) -> None:
    # GIVEN a body with one bad value
    # WHEN it is validated
    with pytest.raises(SolicitudInvalida) as info:
        validar_solicitud(_cuerpo(**cambios), "PED-1")
    # THEN the message names the field and what is expected
    assert fragmento in str(info.value)


def test_validar_solicitud_several_problems_lists_them_all() -> None:
    # GIVEN a body wrong in three places
    cuerpo = _cuerpo(email="x", moneda="EURO", lineas=[{"sku": "A", "cantidad": 0, "precio_centimos": 0}])
    # WHEN it is validated
    with pytest.raises(SolicitudInvalida) as info:
        validar_solicitud(cuerpo, "PED-1")
    # THEN the client hears about every one at once, not one per round trip
    assert len(info.value.errores) == 4


@pytest.mark.parametrize("cuerpo", [None, [], "pedido", 7])
def test_validar_solicitud_not_an_object_raises(cuerpo: Any) -> None:
    with pytest.raises(SolicitudInvalida, match="JSON object"):
        validar_solicitud(cuerpo, "PED-1")


@pytest.mark.parametrize("clave", [None, "", "con espacio", "x" * 256, "clave\u00f1"])
def test_validar_clave_missing_or_malformed_raises(clave: str | None) -> None:
    with pytest.raises(ClaveIdempotenciaInvalida, match="Idempotency-Key"):
        validar_clave(clave)


def test_huella_key_order_and_whitespace_do_not_change_it() -> None:
    # GIVEN the same body with its keys in another order
    # THEN the fingerprint is the same (a retry serialised differently is still the same request)
    assert huella({"a": 1, "b": [1, 2]}) == huella({"b": [1, 2], "a": 1})
    assert huella({"a": 1}) != huella({"a": 2})


def test_validar_solicitud_never_repeats_more_of_a_value_than_the_log_policy_allows() -> None:
    # GIVEN a body whose unknown field names and values are 5,000 characters long, and thousands of them
    largo = "x" * 5_000
    cuerpo = _cuerpo(lineas=[{"sku": "A", "cantidad": largo, "precio_centimos": 1, largo: 1}])
    cuerpo |= {f"{largo}{i}": i for i in range(2_000)}
    # WHEN it is validated
    with pytest.raises(SolicitudInvalida) as info:
        validar_solicitud(cuerpo, "PED-1")
    # THEN every problem is listed, each repeating at most ECHO_MAX_CHARS of what was sent
    assert len(info.value.errores) == 3
    assert "x" * (ECHO_MAX_CHARS + 1) not in str(info.value)
    assert "and 1995 more" in str(info.value)
