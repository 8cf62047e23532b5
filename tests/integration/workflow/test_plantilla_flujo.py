"""The workflow's alarms and notice routing in template.yaml (issue 15), read statically: no AWS, no network."""

from __future__ import annotations

import pytest
from mercadofresco.metrics import PROVIDER_LATENCY
from sam_emulator.template import Template


@pytest.fixture(scope="module")
def recursos() -> dict:
    return Template().resources


def _alarmas(recursos: dict, metrica: str) -> list[dict]:
    return [
        r["Properties"]
        for r in recursos.values()
        if r["Type"] == "AWS::CloudWatch::Alarm" and r["Properties"].get("MetricName") == metrica
    ]


def test_template_gateway_p99_alarm_watches_the_http_client_metric(recursos):
    # GIVEN the alarm on the gateway's latency (exercise 1's fifth fix)
    (alarma,) = _alarmas(recursos, PROVIDER_LATENCY)
    # THEN it reads the metric the HTTP client emits, at p99, for the pasarela dependency, and pages someone
    assert alarma["Namespace"] == "MercadoFresco/Tienda" and alarma["ExtendedStatistic"] == "p99"
    assert {"Name": "dependencia", "Value": "pasarela"} in alarma["Dimensions"]
    assert "Statistic" not in alarma and alarma["AlarmActions"]


def test_template_exhausted_executions_have_an_alarm(recursos):
    # GIVEN the workflow's TimeoutSeconds THEN an execution that hits it pages someone (its order is mid-way)
    (alarma,) = _alarmas(recursos, "ExecutionsTimedOut")
    assert alarma["Namespace"] == "AWS/States" and alarma["Dimensions"][0]["Value"] == {"Ref": "ProcesarPedido"}
    assert alarma["Threshold"] == 0 and alarma["AlarmActions"]


def test_template_customer_notices_go_to_the_correo_queue(recursos):
    # GIVEN the rule for the workflow's non-confirmed outcomes
    props = recursos["ReglaAvisosCliente"]["Properties"]
    # THEN it routes the three notices from the workflow to the e-mail queue, with the queue's DLQ
    assert props["EventPattern"] == {
        "source": ["mercadofresco.pedidos"],
        "detail-type": ["PedidoRechazado", "PedidoNoConfirmado", "PedidoCancelado"],
    }
    (destino,) = props["Targets"]
    assert destino["Arn"] == {"Fn::GetAtt": ["ColaCorreo", "Arn"]}
    assert destino["DeadLetterConfig"]["Arn"] == {"Fn::GetAtt": ["ColaCorreoFallidos", "Arn"]}
