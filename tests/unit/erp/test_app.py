"""The ERP handler fed the events/ files: bad input is dead-lettered with its reason, nothing else is touched.

No network: the SQS client is botocore's Stubber (it fails on any request it was not told
to expect), the ERP URL is a closed port and Valkey/DynamoDB are never reached, so these
cases prove that bad input never gets as far as the idempotency record or the ERP.
The good, duplicate and outage cases run against moto, Redis and a loopback ERP in
``tests/integration/consumidores``.
"""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import Stubber
from mercadofresco.consumer.queues import Queues

from tests.conftest import load_event
from tests.unit.consumer.stub_sqs import SIN_RED, espera_cola, espera_dlq

ENTORNO = {"TABLA_IDEMPOTENCIA": "mercadofresco-idempotencia", "ERP_URL": "http://127.0.0.1:9", **SIN_RED}


@pytest.fixture
def erp(app_module):
    return app_module("erp", **ENTORNO)


@pytest.mark.parametrize(
    ("evento", "motivo"),
    [
        ("erp-malformado.json", "json-invalido"),
        ("erp-campo-ausente.json", "campo-ausente"),
        ("erp-version-2.json", "version-desconocida"),
    ],
)
def test_handler_bad_input_sent_to_dlq_with_reason_and_acknowledged(erp, lambda_context, evento, motivo) -> None:
    # GIVEN a bad ERP notice and an SQS client that only accepts the expected calls
    sqs = boto3.client("sqs")
    event = load_event(evento)
    enviados: list[dict] = []
    sqs.meta.events.register("provide-client-params.sqs.SendMessage", lambda params, **_: enviados.append(params))
    with Stubber(sqs) as stubber:
        espera_cola(stubber, "mercadofresco-erp", "mercadofresco-erp-fallidos")
        espera_dlq(stubber, "mercadofresco-erp-fallidos", event["Records"][0])
        erp.consumidor.queues = Queues(sqs)
        # WHEN the handler runs
        respuesta = erp.lambda_handler(event, lambda_context)
        stubber.assert_no_pending_responses()
    # THEN the record is acknowledged (not retried as transient) and the dead letter says why
    assert respuesta == {"batchItemFailures": []}
    (enviado,) = enviados
    assert enviado["MessageAttributes"]["mf-motivo"]["StringValue"] == motivo
    assert enviado["MessageAttributes"]["mf-funcion"]["StringValue"] == "erp"


def test_handler_fifo_bad_reservation_keeps_its_group_in_fifo_dlq(erp, lambda_context) -> None:
    sqs = boto3.client("sqs")
    event = load_event("erp-reserva-stock-malformada.json")
    with Stubber(sqs) as stubber:
        espera_cola(stubber, "cola-mercadofresco-stock.fifo", "mercadofresco-stock-fallidos.fifo")
        espera_dlq(stubber, "mercadofresco-stock-fallidos.fifo", event["Records"][0], fifo=True)
        erp.consumidor.queues = Queues(sqs)
        respuesta = erp.lambda_handler(event, lambda_context)
        stubber.assert_no_pending_responses()
    assert respuesta == {"batchItemFailures": []}
