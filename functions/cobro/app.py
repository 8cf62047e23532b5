"""Order workflow task (``Cobrar`` / ``Reembolsar``) -> the payment gateway, once per order.

Dispatches on the payload's ``operacion`` (``cobro`` or ``reembolso``). Errors leave as their
class names, which the state machine's ``Retry``/``Catch`` match (``PasarelaNoDisponible``,
``CircuitoAbierto``, ``CobroRechazado``...). The gateway's client (URL, API key, timeouts, breaker
and retry budget ``pasarela``) is :mod:`cliente_pasarela`'s, shared with the durable order saga.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from cliente_pasarela import ClientePasarela
from mercadofresco.dominio.errores import CobroRechazado, ReembolsoRechazado
from mercadofresco.idempotency import IdempotencyStore
from mercadofresco.process_cache import lazy_module_attribute
from mercadofresco.tracing import LazyTracer
from operaciones import Operaciones
from solicitud import Solicitud

logger = Logger()
metrics = Metrics()
tracer = LazyTracer()  # X-Ray SDK imported on first use, not at import (mercadofresco.tracing)

pasarela = ClientePasarela(metrics)  # the gateway client for the current API key (cliente_pasarela)


# Built on the first invocation: its DynamoDB client (botocore's models) is not the init phase's to load.
_operaciones, __getattr__ = lazy_module_attribute(
    globals(), "operaciones", lambda: Operaciones(pasarela=pasarela, store=IdempotencyStore.from_env())
)


DESPACHO = {"cobro": Operaciones.cobro, "reembolso": Operaciones.reembolso}
METRICA = {"cobro": "Cobro", "reembolso": "Reembolso"}  # + Completado / Rechazado / Fallido: the dashboard's outcomes


@metrics.log_metrics
@logger.inject_lambda_context(correlation_id_path="pedido.pedido_id")
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    solicitud = Solicitud.desde_evento(event)
    logger.append_keys(pedido_id=solicitud.pedido_id, operacion=solicitud.operacion)
    try:
        resultado = DESPACHO[solicitud.operacion](_operaciones(), solicitud)
    except Exception as exc:
        desenlace = "Rechazado" if isinstance(exc, CobroRechazado | ReembolsoRechazado) else "Fallido"
        metrics.add_metric(name=METRICA[solicitud.operacion] + desenlace, unit=MetricUnit.Count, value=1)
        logger.warning("operation failed", extra={"error": type(exc).__name__, "detalle": str(exc)})
        raise
    metrics.add_metric(name=METRICA[solicitud.operacion] + "Completado", unit=MetricUnit.Count, value=1)
    logger.info("operation done", extra={"referencia_cobro": resultado.get("referencia_cobro")})
    return resultado
