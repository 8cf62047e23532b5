"""ColaProyeccion (the workflow's outcome events) -> pedidos.estado: confirmed, rejected, refunded or not confirmed.

``PedidoConfirmado`` arrives from the confirmation topic (raw delivery), ``PedidoRechazado``,
``PedidoCancelado`` and ``PedidoNoConfirmado`` from the bus (an EventBridge envelope); the
shared consumer reads both shapes. The write is conditional on the state's rank
(``mercadofresco.dominio.proyeccion``): duplicates and late, older events change nothing, so
this consumer needs no idempotency record and no FIFO queue. An event for an order the
database does not have, or whose values the database cannot store (a reason that is an object,
a NUL, a lone surrogate), goes to the DLQ with its reason; a database outage fails the record
(``batchItemFailures``) and SQS redelivers it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from mercadofresco.consumer import Consumer, Route
from mercadofresco.db import shared_pool
from mercadofresco.dominio.proyeccion import ESTADO_POR_EVENTO, Resultado, proyectar
from mercadofresco.dominio.valores import CAMPOS
from mercadofresco.tracing import LazyTracer

if TYPE_CHECKING:
    from mercadofresco.consumer import Event

logger = Logger()
metrics = Metrics()
tracer = LazyTracer()  # X-Ray SDK imported on first use, not at import (mercadofresco.tracing)


def actualizar_estado(evento: Event) -> None:
    motivo = evento.get("motivo") or evento.get("error")
    with shared_pool().connection() as conn:
        hecho = proyectar(conn, evento["pedido_id"], evento.type, motivo=motivo, evento_id=evento.get("id"))
    if hecho.resultado is Resultado.APLICADO:
        metrics.add_metric(name="EstadosProyectados", unit=MetricUnit.Count, value=1)
        logger.info("order state updated", anterior=hecho.estado_anterior, estado=hecho.estado)
    else:
        # A duplicate, or an event older than the state already kept: nothing to do, on purpose.
        metrics.add_metric(name="EstadosIgnorados", unit=MetricUnit.Count, value=1)
        logger.info("order state kept: event is a duplicate or older", estado=hecho.estado, tipo=evento.type)


consumidor = Consumer(
    "proyeccion",
    {tipo: Route(actualizar_estado, fields=("pedido_id",)) for tipo in ESTADO_POR_EVENTO},
    field_checks=CAMPOS,
)


@metrics.log_metrics
@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return dict(consumidor(event, context))
