"""functions/cobro/solicitud.py: what the workflow sends, parsed once with a clear error (events/ files)."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from mercadofresco.errors import EventoInvalido

from tests.conftest import FUNCIONES, load_event


def _cargar_solicitud():
    ruta = FUNCIONES / "cobro" / "solicitud.py"
    spec = importlib.util.spec_from_file_location("mf_cobro_solicitud_test", ruta)
    assert spec and spec.loader
    modulo = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = modulo
    spec.loader.exec_module(modulo)
    return modulo


Solicitud = _cargar_solicitud().Solicitud


def test_solicitud_valid_pedido_reads_the_contract_fields():
    # GIVEN the Cobrar task's payload for a good order WHEN parsed
    s = Solicitud.desde_evento(load_event("cobro-pedido.json"))
    # THEN the contract's fields, the customer's card on file as the means of payment
    assert (s.operacion, s.pedido_id, s.importe_centimos, s.moneda) == ("cobro", "PED-2026-084417", 4820, "EUR")
    assert s.lineas == 2
    assert s.medio_de_pago == {"cliente_id": "CLI-0193"}


def test_solicitud_duplicate_with_extra_fields_is_the_same_operation():
    # GIVEN the same order with an extra field a newer producer added (tolerant reader)
    original = Solicitud.desde_evento(load_event("cobro-pedido.json"))
    # WHEN parsed THEN it is the same request
    assert Solicitud.desde_evento(load_event("cobro-duplicado.json")) == original


def test_solicitud_card_token_takes_precedence():
    # GIVEN an order carrying a card token WHEN parsed THEN the token is charged, not the card on file
    s = Solicitud.desde_evento(load_event("cobro-rechazado.json"))
    assert s.medio_de_pago == {"token_tarjeta": "tok_rechazada_fondos"}


def test_solicitud_reembolso_carries_the_cobro_reference():
    # GIVEN the Reembolsar task's payload WHEN parsed THEN the charge to refund is named
    s = Solicitud.desde_evento(load_event("cobro-reembolso.json"))
    assert (s.operacion, s.referencia_cobro) == ("reembolso", "ch_000001")


@pytest.mark.parametrize(
    ("evento", "mensaje"),
    [
        (load_event("cobro-version-2.json"), "version 2"),
        (load_event("cobro-malformado.json"), "pedido_id"),
        ({**load_event("cobro-pedido.json"), "operacion": "regalo"}, "operacion"),
        ({"operacion": "cobro"}, "pedido"),
        ([1, 2], "JSON object"),
    ],
)
def test_solicitud_invalid_gives_a_clear_error(evento, mensaje):
    # GIVEN a payload this function cannot act on WHEN parsed THEN EventoInvalido says what is wrong
    with pytest.raises(EventoInvalido) as error:
        Solicitud.desde_evento(evento)
    assert mensaje in str(error.value)


@pytest.mark.parametrize(
    ("cambio", "mensaje"),
    [
        ({"importe_centimos": 0}, "importe_centimos"),
        ({"importe_centimos": True}, "importe_centimos"),
        ({"lineas": []}, "lineas"),
        ({"lineas": [{"sku": "FRU-MAN-001", "cantidad": 0}]}, "cantidad"),
        ({"lineas": [{"cantidad": 1}]}, "sku"),
        ({"version": True}, "version"),
        # Ids the store could never have produced: refused before they become the gateway's Idempotency-Key
        ({"pedido_id": "PED-\U0001f600"}, "pedido_id"),
        ({"pedido_id": "PED 2026"}, "pedido_id"),
        ({"pedido_id": "x" * 65}, "pedido_id"),
        ({"cliente_id": "CLI-ñ"}, "cliente_id"),
        ({"lineas": [{"sku": "FRU-MAN-001\u200b", "cantidad": 1}]}, "sku"),
        ({"lineas": [{"sku": "9b2e6c1a-4a4f-4f7e-9d8c-1c2b3a4d5e6f", "cantidad": 1}]}, "sku"),  # a MessageId's shape
    ],
)
def test_solicitud_pedido_with_invalid_data_is_refused_before_charging(cambio, mensaje):
    # GIVEN an order with one bad field
    evento = load_event("cobro-pedido.json")
    evento["pedido"] = {**evento["pedido"], **cambio}
    # WHEN parsed THEN it is refused naming the field (nothing is charged for a line the stock step would reject)
    with pytest.raises(EventoInvalido) as error:
        Solicitud.desde_evento(evento)
    assert mensaje in str(error.value)


def test_solicitud_without_payment_method_is_refused():
    # GIVEN an order without card token nor customer
    evento = load_event("cobro-pedido.json")
    del evento["pedido"]["cliente_id"]
    s = Solicitud.desde_evento(evento)
    # WHEN asking what to charge THEN a clear error
    with pytest.raises(EventoInvalido, match="token_tarjeta"):
        _ = s.medio_de_pago
