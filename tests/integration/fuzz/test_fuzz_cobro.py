"""functions/cobro fed invalid orders and wrong-source events: a named error, no gateway call, no secret in logs.

The handler runs as Lambda loads it, with its idempotency table in moto and the loopback gateway
stand-in, which counts every request it receives: for an invalid order it must receive none.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mercadofresco.dominio.errores import NOMBRES_PARA_EL_FLUJO
from mercadofresco.errors import EventoInvalido
from mercadofresco_local.proveedores import Pasarela

from tests.conftest import load_event
from tests.unit.fuzz.estrategias import (
    EVENTOS_AWS,
    importe_malo,
    moneda_mala,
    texto_cualquiera,
    valor_json,
    version_mala,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.integration

TOKEN = "tok_4111111111111111"
BUENO = load_event("cobro-pedido.json") | {
    "pedido": load_event("cobro-pedido.json")["pedido"] | {"token_tarjeta": TOKEN}
}


@pytest.fixture
def pasarela() -> Iterator[Pasarela]:
    with Pasarela() as p:
        yield p


@pytest.fixture
def cobro(app_module, tabla_idempotencia, pasarela, redis_url) -> Any:
    return app_module(
        "cobro",
        PASARELA_URL=pasarela.url,
        REDIS_URL=redis_url,
        TABLA_IDEMPOTENCIA=tabla_idempotencia,
        PASARELA_SECRET_ARN="",
    )


def _con(campo: str, valor: Any) -> dict[str, Any]:
    evento = copy.deepcopy(BUENO)
    evento["pedido"][campo] = valor
    return evento


def _rechazado(app, pasarela, evento, contexto, capsys) -> None:
    # WHEN the charge function is invoked with it
    with pytest.raises(EventoInvalido) as error:
        app.lambda_handler(evento, contexto)
    # THEN the error is the named one the workflow's Catch matches, the gateway was never called,
    # and neither the error (the execution's cause) nor the logs carry the card token
    assert type(error.value).__name__ in NOMBRES_PARA_EL_FLUJO
    assert pasarela.llamadas.total() == 0
    registros = capsys.readouterr()
    assert TOKEN not in str(error.value) and TOKEN not in registros.out + registros.err


@given(evento=st.one_of(st.sampled_from(list(EVENTOS_AWS.values())), valor_json))
def test_fuzz_cobro_wrong_source_or_garbage_event_raises_evento_invalido_without_gateway(
    cobro, pasarela, lambda_context, capsys, evento
) -> None:
    # GIVEN an SNS/SQS/DynamoDB/API Gateway/Step Functions sample event, or any JSON
    _rechazado(cobro, pasarela, evento, lambda_context, capsys)


@given(
    campo_valor=st.one_of(
        st.tuples(st.just("importe_centimos"), importe_malo),
        st.tuples(st.just("moneda"), moneda_mala),
        st.tuples(st.just("version"), version_mala),
        st.tuples(
            st.just("pedido_id"),
            st.one_of(
                # an emoji, a space, a non-ASCII letter: ids the store could never have produced
                st.sampled_from(
                    ["", " ", "a:b", "9b2e6c1a-4a4f-4f7e-9d8c-1c2b3a4d5e6f", "PED-\U0001f600", "PED 1", "PED-Ñ"]
                ),
                st.integers(),
                st.none(),
            ),
        ),
        st.tuples(st.just("lineas"), st.one_of(st.just([]), valor_json.filter(lambda v: not isinstance(v, list)))),
    )
)
def test_fuzz_cobro_invalid_order_value_never_reaches_the_gateway(
    cobro, pasarela, lambda_context, capsys, campo_valor
) -> None:
    # GIVEN an order with one bad value (an amount as a string, a currency that is not ISO 4217, ...)
    campo, valor = campo_valor
    _rechazado(cobro, pasarela, _con(campo, valor), lambda_context, capsys)


@given(
    token=texto_cualquiera.filter(lambda s: not s.strip() or any(0xD800 <= ord(c) <= 0xDFFF or ord(c) < 32 for c in s))
)
def test_fuzz_cobro_unusable_card_token_is_refused_without_echoing_it(
    cobro, pasarela, lambda_context, capsys, token
) -> None:
    # GIVEN a card token that cannot be sent (blank, control characters, a lone surrogate), the real token in it
    _rechazado(
        cobro, pasarela, _con("token_tarjeta", f"{TOKEN}{token}" if token.strip() else token), lambda_context, capsys
    )
