"""The "is the consumer still failing?" checks, on moto's CloudWatch with datapoints placed in time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import boto3
import pytest
from mercadofresco_ops.dlq import salud
from mercadofresco_ops.dlq.conexion import resolver_cola

pytestmark = pytest.mark.integration


def _visibles(cloudwatch, puntos: list[tuple[int, float]], ahora: datetime) -> None:
    """The DLQ's ApproximateNumberOfMessagesVisible: (minutes ago, value) pairs."""
    cloudwatch.put_metric_data(
        Namespace="AWS/SQS",
        MetricData=[
            {
                "MetricName": "ApproximateNumberOfMessagesVisible",
                "Value": valor,
                "Timestamp": ahora - timedelta(minutes=hace),
                "Unit": "Count",
                "Dimensions": [{"Name": "QueueName", "Value": "mercadofresco-pedidos-fallidos"}],
            }
            for hace, valor in puntos
        ],
    )


@pytest.mark.parametrize(
    ("puntos", "correcta"),
    [
        ([(4, 100), (2, 220), (0, 340)], False),  # still rising: the failure is alive
        ([(12, 100), (8, 340), (4, 340), (0, 340)], True),  # rose during an outage that ended 8 min ago
        ([(3, 340), (0, 338)], True),  # someone is already draining it
    ],
    ids=["creciendo", "contenida", "bajando"],
)
def test_comprobar_fails_only_for_a_dlq_growing_in_the_last_minutes(sqs, colas, puntos, correcta) -> None:
    # GIVEN the DLQ's recent history in CloudWatch
    origen, dlq = (resolver_cola(sqs, url) for url in colas["pedidos"])
    cloudwatch = boto3.client("cloudwatch", region_name="eu-south-2")
    ahora = datetime.now(UTC).replace(second=0, microsecond=0)
    _visibles(cloudwatch, puntos, ahora)
    clientes = salud.Clientes(
        cloudwatch, boto3.client("lambda", region_name="eu-south-2"), boto3.client("pipes", region_name="eu-south-2")
    )

    # WHEN checked
    alarmas, edad, crecimiento = salud.comprobar(clientes, dlq, origen, ahora=ahora)

    # THEN only a DLQ rising in the last five minutes fails the check
    assert (alarmas.correcta, edad.correcta) == (True, True)
    assert crecimiento.correcta is correcta, crecimiento.detalle
