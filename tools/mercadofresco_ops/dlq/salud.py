"""Is the source queue's consumer known to be failing? ``reprocesar`` refuses while it is.

Redriving into a consumer that is still broken only sends the messages back to the DLQ,
burning receives and duplicating partial work (runbook step 4: no redrive without a fix).
What is checked:

1. CloudWatch alarms in ``ALARM`` on the source queue or its consumer: any metric alarm
   with dimension ``QueueName=<source>`` (e.g. its age alarm), ``FunctionName=`` a Lambda
   reading it through an event source mapping (its errors alarm), ``StateMachineArn=`` the
   target of a Pipe reading it (failed executions), and the circuit-open alarm of the
   dependency behind it (``mercadofresco-circuito-abierto-<dependencia>``). The DLQ's own
   alarm is not a signal: it is in ALARM precisely because of the messages being reprocessed;
2. the source queue's ``ApproximateAgeOfOldestMessage`` (latest maximum over the last
   ``VENTANA_S``) above ``edad_max_s``: the consumer is stopped or not keeping up;
3. the DLQ still growing: its ``ApproximateNumberOfMessagesVisible`` rose over the last
   ``CRECIMIENTO_S`` — the failure is alive (step 1, contain, is not done).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from mercadofresco_ops.errores import errores_de_aws
from mercadofresco_ops.topologia import dependencia_de_origen

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from mercadofresco_ops.dlq.conexion import Cola

VENTANA_S = 15 * 60
PERIODO_S = 60
CRECIMIENTO_S = 5 * 60  # "still growing" = the DLQ rose over its last five one-minute datapoints
EDAD_MAX_S = 300  # the source's oldest message older than 5 min: its consumer is not consuming
ALARMA_CIRCUITO = "mercadofresco-circuito-abierto-"


@dataclass(frozen=True)
class Comprobacion:
    """One check, whether it passed, and what it saw."""

    nombre: str
    correcta: bool
    detalle: str


@dataclass(frozen=True)
class Clientes:
    """The services the checks read."""

    cloudwatch: BaseClient
    lambda_: BaseClient
    pipes: BaseClient


def comprobar(
    clientes: Clientes, dlq: Cola, origen: Cola, edad_max_s: int = EDAD_MAX_S, ahora: datetime | None = None
) -> list[Comprobacion]:
    """The three checks above, in order."""
    ahora = ahora or datetime.now(UTC)
    with errores_de_aws("comprobar el consumidor (CloudWatch, Lambda, Pipes; --forzar lo salta)"):
        return [
            _alarmas(clientes, origen),
            _edad(clientes.cloudwatch, origen, edad_max_s, ahora),
            _crecimiento(clientes.cloudwatch, dlq, ahora),
        ]


def dimensiones_del_consumidor(clientes: Clientes, origen: Cola) -> list[dict[str, str]]:
    """Alarm dimensions that name the source queue and whatever consumes it."""
    dimensiones = [{"Name": "QueueName", "Value": origen.nombre}]
    mapeos = clientes.lambda_.get_paginator("list_event_source_mappings").paginate(EventSourceArn=origen.arn)
    for pagina in mapeos:
        for mapeo in pagina.get("EventSourceMappings", []):
            dimensiones.append({"Name": "FunctionName", "Value": mapeo["FunctionArn"].split(":")[6]})
    for pagina in clientes.pipes.get_paginator("list_pipes").paginate(SourcePrefix=origen.arn):
        for pipe in pagina.get("Pipes", []):
            destino = pipe.get("Target", "")
            if destino.startswith("arn:aws:states:"):
                dimensiones.append({"Name": "StateMachineArn", "Value": destino})
            elif ":function:" in destino:
                dimensiones.append({"Name": "FunctionName", "Value": destino.split(":")[6]})
    return dimensiones


def _alarmas(clientes: Clientes, origen: Cola) -> Comprobacion:
    dimensiones = dimensiones_del_consumidor(clientes, origen)
    # The breaker behind the queue, from the template (none for the e-mail's: it falls back instead).
    dependencia = dependencia_de_origen(origen.nombre)
    paginas = clientes.cloudwatch.get_paginator("describe_alarms").paginate(
        StateValue="ALARM", AlarmTypes=["MetricAlarm"]
    )
    nombres = [
        alarma["AlarmName"]
        for pagina in paginas
        for alarma in pagina.get("MetricAlarms", [])
        if any(d in dimensiones for d in alarma.get("Dimensions", []))
        or (dependencia and alarma["AlarmName"].startswith(ALARMA_CIRCUITO + dependencia))
    ]
    nombre = "alarmas de la cola de origen y su consumidor"
    if nombres:
        return Comprobacion(nombre, False, f"en ALARM: {', '.join(nombres)}")
    vigiladas = ", ".join(f"{d['Name']}={d['Value'].rsplit(':', 1)[-1]}" for d in dimensiones)
    circuito = f"; circuito {dependencia}" if dependencia else ""
    return Comprobacion(nombre, True, f"ninguna en ALARM ({vigiladas}{circuito})")


def _serie(cloudwatch: BaseClient, cola: Cola, metrica: str, ahora: datetime, window_s: int = VENTANA_S) -> list[float]:
    """The metric's per-minute maxima over the last ``window_s``, oldest first (only minutes with data)."""
    datos = cloudwatch.get_metric_statistics(
        Namespace="AWS/SQS",
        MetricName=metrica,
        Dimensions=[{"Name": "QueueName", "Value": cola.nombre}],
        StartTime=ahora - timedelta(seconds=window_s),
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
    # Only the last few minutes: a DLQ that grew during an outage which ended 10 min ago is contained.
    serie = _serie(cloudwatch, dlq, "ApproximateNumberOfMessagesVisible", ahora, CRECIMIENTO_S)
    nombre = "la DLQ no sigue creciendo"
    if len(serie) < 2:
        return Comprobacion(nombre, True, f"sin datos suficientes en los últimos {CRECIMIENTO_S // 60} min")
    crece = serie[-1] > serie[0]
    return Comprobacion(
        nombre, not crece, f"de {serie[0]:.0f} a {serie[-1]:.0f} mensajes en los últimos {CRECIMIENTO_S // 60} min"
    )
