"""The plain redrive through SQS's own move task (``StartMessageMoveTask``).

It runs inside SQS (the operator's terminal may close) at up to 500 messages/s, but moves
everything as it is: no filter, no transform — for that, the receive–send–delete path.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from mercadofresco_ops.errores import ErrorOperador, errores_de_aws

if TYPE_CHECKING:
    from collections.abc import Callable

    from botocore.client import BaseClient

    from mercadofresco_ops.dlq.conexion import Cola

TASA_MAX_NATIVA = 500  # SQS's limit for MaxNumberOfMessagesPerSecond
TERMINADOS = {"COMPLETED", "CANCELLED", "FAILED"}
SONDEO_S = 5.0


def iniciar(sqs: BaseClient, dlq: Cola, destino: Cola, tasa_por_s: float) -> str:
    """Start the move task; returns its TaskHandle."""
    if not 1 <= tasa_por_s <= TASA_MAX_NATIVA:
        raise ErrorOperador(f"la tasa nativa va de 1 a {TASA_MAX_NATIVA} mensajes/s, no {tasa_por_s:g}")
    with errores_de_aws(f"StartMessageMoveTask {dlq.nombre}"):
        respuesta = sqs.start_message_move_task(
            SourceArn=dlq.arn, DestinationArn=destino.arn, MaxNumberOfMessagesPerSecond=int(tasa_por_s)
        )
    return respuesta["TaskHandle"]


def tareas(sqs: BaseClient, dlq: Cola, maximo: int = 10) -> list[dict[str, Any]]:
    """The DLQ's most recent move tasks, newest first (SQS keeps them 14 days)."""
    with errores_de_aws(f"ListMessageMoveTasks {dlq.nombre}"):
        return sqs.list_message_move_tasks(SourceArn=dlq.arn, MaxResults=maximo).get("Results", [])


def esperar(
    sqs: BaseClient,
    dlq: Cola,
    al_avanzar: Callable[[int, int], None] = lambda _movidos, _total: None,
    dormir: Callable[[float], None] = time.sleep,
    poll_s: float = SONDEO_S,
) -> dict[str, Any]:
    """Poll the newest task until it ends; reports (moved, to move) after every poll; returns its last status."""
    while True:
        recientes = tareas(sqs, dlq, maximo=1)
        if not recientes:
            raise ErrorOperador(f"{dlq.nombre} no tiene tareas de movimiento")
        tarea = recientes[0]
        al_avanzar(tarea.get("ApproximateNumberOfMessagesMoved", 0), tarea.get("ApproximateNumberOfMessagesToMove", 0))
        if tarea["Status"] in TERMINADOS:
            return tarea
        dormir(poll_s)


def cancelar(sqs: BaseClient, tarea: str) -> int:
    """Cancel a running task; returns how many messages it had already moved."""
    with errores_de_aws("CancelMessageMoveTask"):
        return sqs.cancel_message_move_task(TaskHandle=tarea).get("ApproximateNumberOfMessagesMoved", 0)
