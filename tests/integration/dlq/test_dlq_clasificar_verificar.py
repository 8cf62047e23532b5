"""``mf-dlq clasificar`` end to end and ``mf-dlq verificar``'s exit codes, on moto."""

from __future__ import annotations

import json

import boto3
import pytest
from dlq_colas import llenar, total
from mercadofresco_ops.dlq import cli

pytestmark = pytest.mark.integration

DLQ = "mercadofresco-pedidos-fallidos"


def test_clasificar_dlq_of_version_2_events_is_envenenado_and_leaves_the_queue_untouched(sqs, colas, capsys) -> None:
    # GIVEN 25 version-2 orders redriven into the DLQ (moto stamps them all "now": a window)
    _, dlq = colas["pedidos"]
    llenar(sqs, dlq, [{"version": 2, "pedido_id": f"p-{n}"} for n in range(25)])

    # WHEN classified
    codigo = cli.main(["clasificar", "--cola", DLQ, "--json"])

    # THEN poison, with the content as the proof, and all 25 still in the DLQ
    informe = json.loads(capsys.readouterr().out)
    assert codigo == cli.OK
    assert (informe["tipo"], informe["muestra"], informe["distribucion"]["forma"]) == ("envenenado", 25, "ventana")
    assert "El contenido es la prueba: 25/25" in informe["explicacion"]
    assert total(sqs, dlq) == 25


def test_clasificar_table_shows_histogram_and_evidence(sqs, colas, capsys) -> None:
    # GIVEN healthy orders in the DLQ
    _, dlq = colas["erp"]
    llenar(sqs, dlq, [{"version": 1, "pedido_id": f"p-{n}"} for n in range(5)])

    # WHEN classified for a person
    codigo = cli.main(["clasificar", "--cola", "mercadofresco-erp-fallidos"])

    # THEN the verdict, the evidence and a histogram are printed
    salida = capsys.readouterr().out
    assert codigo == cli.OK
    assert "TRANSITORIO" in salida and "Evidencias" in salida and "│" in salida


def test_clasificar_empty_dlq_says_so_and_exits_0(sqs, colas, capsys) -> None:
    # GIVEN / WHEN an empty DLQ is classified
    codigo = cli.main(["clasificar", "--cola", DLQ, "--json"])

    # THEN nothing to classify, not an error
    assert codigo == cli.OK
    assert json.loads(capsys.readouterr().out)["muestra"] == 0


def _borrados(valor: float) -> None:
    """CloudWatch's NumberOfMessagesDeleted for the orders queue (AWS publishes it; moto does not)."""
    boto3.client("cloudwatch", region_name="eu-south-2").put_metric_data(
        Namespace="AWS/SQS",
        MetricData=[
            {
                "MetricName": "NumberOfMessagesDeleted",
                "Value": valor,
                "Unit": "Count",
                "Dimensions": [{"Name": "QueueName", "Value": "cola-mercadofresco-pedidos"}],
            }
        ],
    )


def test_verificar_empty_dlq_and_source_processed_as_expected_exits_0(sqs, colas, capsys) -> None:
    # GIVEN an empty DLQ and the source having deleted 340 messages
    _borrados(200)
    _borrados(140)

    # WHEN verified against 340 expected
    codigo = cli.main(["verificar", "--cola", DLQ, "--esperados", "340", "--json"])

    # THEN both checks pass
    informe = json.loads(capsys.readouterr().out)
    assert codigo == cli.OK
    assert informe["correcto"] is True
    assert informe["comprobaciones"][1]["detalle"].startswith("340 de 340")


def test_verificar_source_processed_less_than_expected_exits_1(sqs, colas, capsys) -> None:
    # GIVEN an empty DLQ but only 300 deleted at the source
    _borrados(300)

    # WHEN verified against 340
    codigo = cli.main(["verificar", "--cola", DLQ, "--esperados", "340", "--json"])

    # THEN check failed
    informe = json.loads(capsys.readouterr().out)
    assert codigo == cli.FALLO
    assert [c["correcta"] for c in informe["comprobaciones"]] == [True, False]


def test_verificar_messages_back_in_the_dlq_exits_1(sqs, colas, capsys) -> None:
    # GIVEN messages that came back to the DLQ (the fix was not the right one)
    _, dlq = colas["pedidos"]
    llenar(sqs, dlq, [{"version": 2}] * 3)

    # WHEN verified without an expected count
    codigo = cli.main(["verificar", "--cola", DLQ])

    # THEN check failed, and the runbook's next step is printed
    salida = capsys.readouterr().out
    assert codigo == cli.FALLO
    assert "visibles 3" in salida and "paso 2" in salida


def test_verificar_unknown_queue_exits_2(sqs, capsys) -> None:
    # GIVEN / WHEN / THEN
    assert cli.main(["verificar", "--cola", "https://sqs.eu-south-2.amazonaws.com/123456789012/nada"]) == cli.USO
    assert capsys.readouterr().err.count("\n") == 1
