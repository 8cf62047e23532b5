"""Runbook step 6: the DLQ is back to zero and the source really processed what was moved."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from mercadofresco_ops.dlq.conexion import contar
from mercadofresco_ops.dlq.salud import Comprobacion
from mercadofresco_ops.errores import errores_de_aws

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from mercadofresco_ops.dlq.conexion import Cola

PERIODO_S = 60


def dlq_vacia(sqs: BaseClient, dlq: Cola) -> Comprobacion:
    """Zero visible, in flight (they would come back) and delayed."""
    cuentas = contar(sqs, dlq)
    return Comprobacion(
        f"{dlq.nombre} a cero", not any(cuentas.values()), ", ".join(f"{k} {v}" for k, v in cuentas.items())
    )


def borrados_en_origen(cloudwatch: BaseClient, origen: Cola, desde: datetime, ahora: datetime | None = None) -> float:
    """Sum of the source's ``NumberOfMessagesDeleted`` (messages its consumer finished) since ``desde``."""
    ahora = ahora or datetime.now(UTC)
    with errores_de_aws("CloudWatch"):
        datos = cloudwatch.get_metric_statistics(
            Namespace="AWS/SQS",
            MetricName="NumberOfMessagesDeleted",
            Dimensions=[{"Name": "QueueName", "Value": origen.nombre}],
            StartTime=desde,
            EndTime=ahora + timedelta(seconds=PERIODO_S),  # include the current, still-open period
            Period=PERIODO_S,
            Statistics=["Sum"],
        )["Datapoints"]
    return sum(d["Sum"] for d in datos)


def procesados(cloudwatch: BaseClient, origen: Cola, esperados: int, desde: datetime) -> Comprobacion:
    borrados = borrados_en_origen(cloudwatch, origen, desde)
    return Comprobacion(
        f"NumberOfMessagesDeleted de {origen.nombre} desde {desde:%H:%M} UTC",
        borrados >= esperados,
        f"{borrados:.0f} de {esperados} esperados (CloudWatch publica cada minuto: si falta poco, espera 5 min)",
    )
