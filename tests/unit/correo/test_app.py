"""The e-mail handler fed the events/ files: bad input is dead-lettered with its reason, no provider is called.

No network (see ``tests/unit/erp/test_app.py``): Stubber for SQS, closed ports for the
providers and Valkey. Good, duplicate and fallback cases: ``tests/integration/consumidores``.
"""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.stub import Stubber
from mercadofresco.consumer.queues import Queues

from tests.conftest import load_event
from tests.unit.consumer.stub_sqs import SIN_RED, espera_cola, espera_dlq

ENTORNO = {
    "TABLA_IDEMPOTENCIA": "mercadofresco-idempotencia",
    "CORREO_PRINCIPAL_URL": "http://127.0.0.1:9",
    "CORREO_SECUNDARIO_URL": "http://127.0.0.1:9",
    **SIN_RED,
}


def _sin_email(evento: str) -> dict:
    event = load_event(evento)
    registro = event["Records"][0]
    cuerpo = json.loads(registro["body"])
    datos = cuerpo.get("detail", cuerpo)
    del datos["email"]
    registro["body"] = json.dumps(cuerpo)
    return event


@pytest.mark.parametrize(
    ("event", "motivo"),
    [
        (load_event("correo-malformado.json"), "json-invalido"),
        (load_event("correo-campo-ausente.json"), "campo-ausente"),
        (load_event("correo-version-2.json"), "version-desconocida"),
        (_sin_email("correo-confirmacion.json"), "campo-ausente"),
        (_sin_email("correo-carrito-abandonado.json"), "campo-ausente"),
    ],
    ids=["malformed", "missing-pedido-id", "version-2", "confirmation-without-email", "reminder-without-email"],
)
def test_handler_bad_input_sent_to_dlq_with_reason_and_acknowledged(app_module, lambda_context, event, motivo) -> None:
    # GIVEN the e-mail handler and an SQS client that only accepts the expected calls
    correo = app_module("correo", **ENTORNO)
    sqs = boto3.client("sqs")
    enviados: list[dict] = []
    sqs.meta.events.register("provide-client-params.sqs.SendMessage", lambda params, **_: enviados.append(params))
    with Stubber(sqs) as stubber:
        espera_cola(stubber, "mercadofresco-correo", "mercadofresco-correo-fallidos")
        espera_dlq(stubber, "mercadofresco-correo-fallidos", event["Records"][0])
        correo.consumidor.queues = Queues(sqs)
        # WHEN the handler runs
        respuesta = correo.lambda_handler(event, lambda_context)
        stubber.assert_no_pending_responses()
    # THEN acknowledged, and the dead letter says why and who decided
    assert respuesta == {"batchItemFailures": []}
    (enviado,) = enviados
    assert enviado["MessageAttributes"]["mf-motivo"]["StringValue"] == motivo
    assert enviado["MessageAttributes"]["mf-funcion"]["StringValue"] == "correo"
