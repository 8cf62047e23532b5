"""Is the source queue's consumer known to be failing? ``reprocesar`` refuses while it is.

Redriving into a consumer that is still broken only sends the messages back to the DLQ,
burning receives and duplicating partial work (runbook step 4: no redrive without a fix).
What is checked, all through CloudWatch:

1. alarms in ``ALARM`` on the source queue (any metric alarm with dimension
   ``QueueName=<source>``, e.g. its age-of-oldest-message alarm). The DLQ's own alarm is
   not a signal: it is in ALARM precisely because the messages being reprocessed are there;
2. the source queue's ``ApproximateAgeOfOldestMessage`` (maximum over the last
   ``VENTANA_S``) above ``edad_max_s``: the consumer is stopped or not keeping up;
3. the DLQ still growing: its ``ApproximateNumberOfMessagesVisible`` rose over the last
   ``VENTANA_S`` — the failure is alive (step 1, contain, is not done).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from mercadofresco_ops.dlq.conexion import errores_de_aws

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from mercadofresco_ops.dlq.conexion import Cola

VENTANA_S = 15 * 60
PERIODO_S = 60
EDAD_MAX_S = 300  # the source's oldest message older than 5 min: its consumer is not consuming


@dataclass(frozen=True)
class Comprobacion:
    """One check, whether it passed, and what it saw."""

    nombre: str
    correcta: bool
    detalle: str


def comprobar(
    cloudwatch: BaseClient, dlq: Cola, origen: Cola, edad_max_s: int = EDAD_MAX_S, ahora: datetime | None = None
) -> list[Comprobacion]:
    """The three checks above, in order."""
    ahora = ahora or datetime.now(UTC)
    with errores_de_aws("CloudWatch"):
        return [
            _alarmas(cloudwatch, origen),
            _edad(cloudwatch, origen, edad_max_s, ahora),
            _crecimiento(cloudwatch, dlq, ahora),
        ]


def _alarmas(cloudwatch: BaseClient, origen: Cola) -> Comprobacion:
    paginas = cloudwatch.get_paginator("describe_alarms").paginate(StateValue="ALARM", AlarmTypes=["MetricAlarm"])
    nombres = [
        alarma["AlarmName"]
        for pagina in paginas
        for alarma in pagina.get("MetricAlarms", [])
        if {"Name": "QueueName", "Value": origen.nombre} in alarma.get("Dimensions", [])
    ]
    if nombres:
        return Comprobacion("alarmas de la cola de origen", False, f"en ALARM: {', '.join(nombres)}")
    return Comprobacion("alarmas de la cola de origen", True, f"ninguna en ALARM sobre {origen.nombre}")


def _serie(cloudwatch: BaseClient, cola: Cola, metrica: str, ahora: datetime) -> list[float]:
    datos = cloudwatch.get_metric_statistics(
        Namespace="AWS/SQS",
        MetricName=metrica,
        Dimensions=[{"Name": "QueueName", "Value": cola.nombre}],
        StartTime=ahora - timedelta(seconds=VENTANA_S),
        EndTime=ahora + timedelta(seconds=PERIODO_S),  # include the current, still-open period
        Period=PERIODO_S,
        Statistics=["Maximum"],
    )["Datapoints"]
    return [d["Maximum"] for d in sorted(datos, key=lambda d: d["Timestamp"])]


def _edad(cloudwatch: BaseClient, origen: Cola, edad_max_s: int, ahora: datetime) -> Comprobacion:
    serie = _serie(cloudwatch, origen, "ApproximateAgeOfOldestMessage", ahora)
    nombre = "antigüedad del mensaje más viejo en origen"
    if not serie:
        return Comprobacion(nombre, True, "sin datos en los últimos 15 min (cola sin tráfico)")
    edad = serie[-1]
    return Comprobacion(nombre, edad <= edad_max_s, f"{edad:.0f} s (máximo tolerado {edad_max_s} s)")


def _crecimiento(cloudwatch: BaseClient, dlq: Cola, ahora: datetime) -> Comprobacion:
    serie = _serie(cloudwatch, dlq, "ApproximateNumberOfMessagesVisible", ahora)
    nombre = "la DLQ no sigue creciendo"
    if len(serie) < 2:
        return Comprobacion(nombre, True, "sin datos suficientes en los últimos 15 min")
    crece = serie[-1] > serie[0]
    return Comprobacion(nombre, not crece, f"de {serie[0]:.0f} a {serie[-1]:.0f} mensajes en 15 min")
