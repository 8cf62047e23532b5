"""The workflow's alarms and notice routing in template.yaml (issue 15), read statically: no AWS, no network."""

from __future__ import annotations

import pytest
from mercadofresco.metrics import PROVIDER_LATENCY
from sam_emulator.template import Template


@pytest.fixture(scope="module")
def plantilla() -> Template:
    return Template()


def _alarmas(plantilla: Template, metrica: str) -> list[dict]:
    """The alarms on ``metrica`` with the ``Fn::If`` branches ``plantilla``'s parameters take."""
    return [
        props
        for r in plantilla.resources.values()
        if r["Type"] == "AWS::CloudWatch::Alarm"
        and (props := plantilla.chosen(r["Properties"])).get("MetricName") == metrica
    ]


def test_template_gateway_p99_alarm_watches_the_http_client_metric(plantilla):
    # GIVEN the alarm on the gateway's latency (exercise 1's fifth fix)
    (alarma,) = _alarmas(plantilla, PROVIDER_LATENCY)
    # THEN it reads the metric the HTTP client emits, at p99, for the pasarela dependency, and pages someone
    assert alarma["Namespace"] == "MercadoFresco/Tienda" and alarma["ExtendedStatistic"] == "p99"
    assert {"Name": "dependencia", "Value": "pasarela"} in alarma["Dimensions"]
    assert "Statistic" not in alarma and alarma["AlarmActions"]


@pytest.mark.parametrize(
    ("motor", "espacio", "metrica", "recurso"),
    [
        ("StepFunctions", "AWS/States", "ExecutionsTimedOut", {"Ref": "ProcesarPedido"}),
        # the saga's unit outputs its function's name
        (
            "DurableFunction",
            "AWS/Lambda",
            "DurableExecutionTimedOut",
            {"Fn::GetAtt": ["PedidoDurable", "Outputs.FunctionName"]},
        ),
    ],
)
def test_template_exhausted_executions_have_an_alarm(motor, espacio, metrica, recurso):
    # GIVEN the workflow's time limit on either engine (issue 37's WorkflowEngine parameter)
    plantilla = Template(parameters={"WorkflowEngine": motor})
    # THEN an execution that hits it pages someone (its order is mid-way), on that engine's metric
    (alarma,) = _alarmas(plantilla, metrica)
    assert alarma["Namespace"] == espacio and alarma["Dimensions"][0]["Value"] == recurso
    assert alarma["Threshold"] == 0 and alarma["AlarmActions"]


def test_template_customer_notices_go_to_the_correo_queue(plantilla):
    # GIVEN the rule for the workflow's non-confirmed outcomes, in the consumers' unit
    consumidores = plantilla.units()["Consumidores"]
    props = consumidores.resources["ReglaAvisosCliente"]["Properties"]
    # THEN it routes the three notices from the workflow to the e-mail queue, with the queue's DLQ
    assert props["EventPattern"] == {
        "source": ["mercadofresco.pedidos"],
        "detail-type": ["PedidoRechazado", "PedidoNoConfirmado", "PedidoCancelado"],
    }
    (destino,) = props["Targets"]
    assert destino["Arn"] == {"Fn::GetAtt": ["ColaCorreo", "Arn"]}
    # ...whose DLQ is the e-mail queue's, the root's (what a stack delete retains)
    assert consumidores.written_above(destino["DeadLetterConfig"]["Arn"])[1] == {
        "Fn::GetAtt": ["ColaCorreoFallidos", "Arn"]
    }
