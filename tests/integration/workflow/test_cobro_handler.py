"""functions/cobro: the handler with the events/ files, a real idempotency table (moto) and a loopback gateway.

Counts come from the gateway stand-in: what it was asked (``llamadas``) and what it did
(``cobros_de``/``reembolsos_de``).
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from mercadofresco.dominio.errores import CobroRechazado, PasarelaNoDisponible, ReembolsoRechazado
from mercadofresco.errors import EventoInvalido
from mercadofresco_local.proveedores import Fallo, Pasarela

from tests.conftest import load_event

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

pytestmark = pytest.mark.integration

PEDIDO = "PED-2026-084417"
READ_TIMEOUT_S = 0.3


@pytest.fixture
def pasarela() -> Iterator[Pasarela]:
    with Pasarela() as p:
        yield p


@pytest.fixture
def cobro(app_module, tabla_idempotencia, redis_privado, valkey, pasarela) -> Callable[..., Any]:
    """Load functions/cobro/app.py as Lambda would, pointed at moto, the stand-in and a private Redis."""

    def cargar(**env: str) -> Any:
        return app_module(
            "cobro",
            PASARELA_URL=pasarela.url,
            REDIS_URL=redis_privado,
            TABLA_IDEMPOTENCIA=tabla_idempotencia,
            PASARELA_SECRET_ARN=env.pop("PASARELA_SECRET_ARN", ""),
            PASARELA_READ_TIMEOUT_S=str(READ_TIMEOUT_S),
            PASARELA_CONNECT_TIMEOUT_S="1",
            **env,
        )

    return cargar


def test_cobro_same_pedido_twice_makes_one_call_with_the_same_reference(cobro, pasarela, lambda_context):
    # GIVEN the charge function
    app = cobro()
    # WHEN the order is charged, then the same charge is asked again (a Step Functions retry, extra fields)
    primero = app.lambda_handler(load_event("cobro-pedido.json"), lambda_context)
    segundo = app.lambda_handler(load_event("cobro-duplicado.json"), lambda_context)
    # THEN the duplicate gets the stored result without calling the gateway
    assert primero["referencia_cobro"] == segundo["referencia_cobro"]
    assert primero["cobrado_en"] == segundo["cobrado_en"]
    assert pasarela.llamadas["/cobros"] == 1
    assert pasarela.cobros_de(PEDIDO) == 1
    assert pasarela.efectos[0]["clave"] == f"cobro:{PEDIDO}"


def test_cobro_timeout_after_charging_the_retry_gets_the_same_cobro(cobro, pasarela, lambda_context):
    # GIVEN a gateway that charges but answers after the client's read timeout (twice: both HTTP attempts)
    pasarela.fallos.programar(Fallo.latencia(READ_TIMEOUT_S * 3, veces=2))
    app = cobro()
    # WHEN the charge times out
    with pytest.raises(PasarelaNoDisponible):
        app.lambda_handler(load_event("cobro-pedido.json"), lambda_context)
    # THEN it is transient (the workflow retries); the retry gets the gateway's charge by Idempotency-Key
    resultado = app.lambda_handler(load_event("cobro-pedido.json"), lambda_context)
    assert pasarela.llamadas["/cobros"] == 3
    assert pasarela.cobros_de(PEDIDO) == 1
    (referencia,) = pasarela.cobros
    assert resultado["referencia_cobro"] == referencia


def test_cobro_declined_card_is_remembered_and_the_duplicate_makes_no_call(cobro, pasarela, lambda_context):
    # GIVEN a declined card
    pasarela.fallos.rechazar_tarjeta("tok_rechazada_fondos")
    app = cobro()
    # WHEN it is charged twice
    for _ in range(2):
        with pytest.raises(CobroRechazado):
            app.lambda_handler(load_event("cobro-rechazado.json"), lambda_context)
    # THEN the gateway was asked once (FALLIDO answers the duplicate) and nothing was charged
    assert pasarela.llamadas["/cobros"] == 1
    assert pasarela.cobros_de("PED-2026-084418") == 0


def test_cobro_gateway_down_spends_the_http_attempts_and_is_transient(cobro, pasarela, lambda_context):
    # GIVEN a gateway answering 503 to everything
    pasarela.fallos.programar(Fallo.estado(503))
    app = cobro()
    # WHEN charging
    with pytest.raises(PasarelaNoDisponible):
        app.lambda_handler(load_event("cobro-pedido.json"), lambda_context)
    # THEN the HTTP layer made HTTP_MAX_ATTEMPTS (2) attempts, and the key was released for the workflow's retry
    assert pasarela.llamadas["/cobros"] == 2
    pasarela.fallos.limpiar()
    assert app.lambda_handler(load_event("cobro-pedido.json"), lambda_context)["referencia_cobro"]


def test_reembolso_after_cobro_happens_once_even_if_repeated(cobro, pasarela, lambda_context):
    # GIVEN a charged order
    app = cobro()
    cobrado = app.lambda_handler(load_event("cobro-pedido.json"), lambda_context)
    evento = {**load_event("cobro-reembolso.json"), "referencia_cobro": cobrado["referencia_cobro"]}
    # WHEN the refund is asked twice
    primero = app.lambda_handler(evento, lambda_context)
    segundo = app.lambda_handler(evento, lambda_context)
    # THEN one refund, the same reference to both, the gateway asked once
    assert primero["referencia_reembolso"] == segundo["referencia_reembolso"]
    assert pasarela.reembolsos_de(PEDIDO) == 1
    assert pasarela.llamadas["/reembolsos"] == 1
    assert pasarela.efectos[-1]["clave"] == f"reembolso:{PEDIDO}"


def test_reembolso_without_cobro_is_refused(cobro, pasarela, lambda_context):
    # GIVEN no charge at the gateway WHEN a refund is asked THEN ReembolsoRechazado (permanent)
    app = cobro()
    with pytest.raises(ReembolsoRechazado):
        app.lambda_handler(load_event("cobro-reembolso.json"), lambda_context)
    assert pasarela.reembolsos_de(PEDIDO) == 0


@pytest.mark.parametrize("evento", ["cobro-version-2.json", "cobro-malformado.json"])
def test_cobro_invalid_event_never_calls_the_gateway(cobro, pasarela, lambda_context, evento):
    # GIVEN an unknown version or a malformed order WHEN charged THEN EventoInvalido and no call
    app = cobro()
    with pytest.raises(EventoInvalido):
        app.lambda_handler(load_event(evento), lambda_context)
    assert pasarela.llamadas["/cobros"] == 0


def test_cobro_sends_the_api_key_from_the_secret(cobro, pasarela, lambda_context):
    # GIVEN the gateway's API key in Secrets Manager and a gateway that demands it
    arn = boto3.client("secretsmanager").create_secret(
        Name="pasarela-clave", SecretString=json.dumps({"api_key": "clave-de-prueba"})
    )["ARN"]
    pasarela.clave_api = "clave-de-prueba"
    app = cobro(PASARELA_SECRET_ARN=arn)
    # WHEN charging THEN the gateway accepted the key and charged
    app.lambda_handler(load_event("cobro-pedido.json"), lambda_context)
    assert pasarela.cobros_de(PEDIDO) == 1


def test_cobro_signs_its_calls_to_a_sandbox_gateway_behind_aws_iam(cobro, pasarela, lambda_context):
    # GIVEN a gateway that, like an AWS_IAM function URL, refuses whatever is not signed by the function
    from mercadofresco_local.firma import VerificadorSigV4

    credenciales = (os.environ[f"AWS_{v}"] for v in ("ACCESS_KEY_ID", "SECRET_ACCESS_KEY", "SESSION_TOKEN"))
    pasarela.verificador = VerificadorSigV4(*credenciales, os.environ["AWS_REGION"])
    # WHEN the template has told the function the gateway is its sandbox
    cobro(PASARELA_URL_AUTH="AWS_IAM").lambda_handler(load_event("cobro-pedido.json"), lambda_context)
    # THEN the call was signed, accepted and charged once
    assert (pasarela.cobros_de(PEDIDO), pasarela.rechazadas) == (1, {})


def test_cobro_that_does_not_sign_is_refused_by_a_sandbox_behind_aws_iam(cobro, pasarela, lambda_context):
    from mercadofresco_local.firma import VerificadorSigV4

    credenciales = (os.environ[f"AWS_{v}"] for v in ("ACCESS_KEY_ID", "SECRET_ACCESS_KEY", "SESSION_TOKEN"))
    pasarela.verificador = VerificadorSigV4(*credenciales, os.environ["AWS_REGION"])
    with pytest.raises(Exception, match="gateway answered 403") as error:
        cobro().lambda_handler(load_event("cobro-pedido.json"), lambda_context)
    assert type(error.value).__name__ == "RespuestaPasarelaInesperada"  # the workflow's Catch: not retried
    assert (pasarela.cobros_de(PEDIDO), pasarela.rechazadas) == (0, {"not signed with SigV4": 1})
