"""cobro's ``Solicitud.desde_evento`` under hostile payloads: a valid request or ``EventoInvalido``, nothing else."""

from __future__ import annotations

import copy
import importlib.util
import sys

from hypothesis import given
from hypothesis import strategies as st
from mercadofresco.dominio.valores import IMPORTE_MAX_CENTIMOS, MONEDAS_ISO_4217
from mercadofresco.errors import EventoInvalido

from tests.conftest import FUNCIONES, load_event
from tests.unit.fuzz.estrategias import (
    EVENTOS_AWS,
    importe_malo,
    moneda_mala,
    texto_cualquiera,
    valor_json,
    version_mala,
)

TOKEN = "tok_4111111111111111"  # a card token: must never come back in an error
MENSAJE_MAX_CHARS = 300


def _solicitud():
    ruta = FUNCIONES / "cobro" / "solicitud.py"
    spec = importlib.util.spec_from_file_location("mf_cobro_solicitud_fuzz", ruta)
    modulo = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = modulo
    spec.loader.exec_module(modulo)
    return modulo.Solicitud


Solicitud = _solicitud()
BUENO = load_event("cobro-pedido.json")


def _leer(evento):
    """The request, or None after checking the refusal is EventoInvalido with a safe, short message."""
    try:
        solicitud = Solicitud.desde_evento(evento)
    except EventoInvalido as exc:
        mensaje = str(exc)
        assert len(mensaje) <= MENSAJE_MAX_CHARS, mensaje
        assert TOKEN not in mensaje and "4111111111111111" not in mensaje
        return None
    assert 0 < solicitud.importe_centimos <= IMPORTE_MAX_CENTIMOS and type(solicitud.importe_centimos) is int
    assert solicitud.moneda in MONEDAS_ISO_4217
    return solicitud


def _con(campo: str, valor, donde: str = "pedido"):
    evento = copy.deepcopy(BUENO)
    destino = evento if donde == "raiz" else evento["pedido"]
    destino[campo] = valor
    return evento


@given(evento=st.one_of(valor_json, st.sampled_from(list(EVENTOS_AWS.values()))))
def test_fuzz_solicitud_any_payload_or_wrong_source_event_is_refused_by_name(evento) -> None:
    # GIVEN any JSON, or an SNS/SQS/DynamoDB/API Gateway/Step Functions event sent to the charge function
    # WHEN parsed THEN EventoInvalido (the workflow's named error), never a KeyError or TypeError
    assert _leer(evento) is None


@given(importe=importe_malo)
def test_fuzz_solicitud_bad_amount_is_refused(importe) -> None:
    # GIVEN an amount that is a string, zero, negative, huge, a float, a bool...
    # WHEN parsed THEN refused: no charge can be made of it
    assert _leer(_con("importe_centimos", importe)) is None


@given(moneda=moneda_mala)
def test_fuzz_solicitud_currency_not_iso_4217_is_refused(moneda) -> None:
    assert _leer(_con("moneda", moneda)) is None


@given(version=version_mala)
def test_fuzz_solicitud_unknown_version_is_refused(version) -> None:
    assert _leer(_con("version", version)) is None


@given(
    campo=st.sampled_from(["pedido_id", "cliente_id", "token_tarjeta"]), valor=st.one_of(texto_cualquiera, valor_json)
)
def test_fuzz_solicitud_any_id_or_token_gives_request_or_error_that_never_echoes_it(campo, valor) -> None:
    # GIVEN any value where an id or the card token goes (the token spelled inside it)
    valor = f"{TOKEN}{valor}" if isinstance(valor, str) and campo == "token_tarjeta" else valor
    # WHEN parsed THEN a request with keys that can be built, or a refusal that does not repeat the token
    solicitud = _leer(_con(campo, valor))
    if solicitud is not None:
        from mercadofresco.dominio import claves

        claves.cobro(solicitud.pedido_id)


@given(
    lineas=st.one_of(
        valor_json,
        st.lists(
            st.fixed_dictionaries(
                {
                    "sku": st.one_of(texto_cualquiera, st.integers()),
                    "cantidad": st.one_of(st.integers(), texto_cualquiera),
                }
            ),
            max_size=3,
        ),
    )
)
def test_fuzz_solicitud_any_lines_give_request_or_named_error(lineas) -> None:
    solicitud = _leer(_con("lineas", lineas))
    if solicitud is not None:
        assert solicitud.lineas == len(lineas)
