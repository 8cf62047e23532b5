"""Order workflow task (``Cobrar`` / ``Reembolsar``) -> the payment gateway, once per order.

Dispatches on the payload's ``operacion`` (``cobro`` or ``reembolso``). Errors leave as their
class names, which the state machine's ``Retry``/``Catch`` match (``PasarelaNoDisponible``,
``CircuitoAbierto``, ``CobroRechazado``...). Gateway URL and API key come from configuration
(``PASARELA_URL``; the key from the Secrets Manager secret ``PASARELA_SECRET_ARN``, cached by
Powertools Parameters); the breaker and retry budget ``pasarela`` live in Valkey.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from mercadofresco import aws
from mercadofresco.dominio.errores import CobroRechazado, PasarelaNoDisponible, ReembolsoRechazado
from mercadofresco.http import client_from_env
from mercadofresco.http.auth import BearerAuth
from mercadofresco.idempotency import IdempotencyStore
from mercadofresco.process_cache import lazy_module_attribute
from mercadofresco.retry import RetryPolicy
from mercadofresco.tracing import LazyTracer
from operaciones import Operaciones
from solicitud import Solicitud

if TYPE_CHECKING:
    from mercadofresco.http import ProviderClient

logger = Logger()
metrics = Metrics()
tracer = LazyTracer()  # X-Ray SDK imported on first use, not at import (mercadofresco.tracing)

SECRET_MAX_AGE_S = 300  # one Secrets Manager call per 5 min per container; a rotated key is seen within it
READ_TIMEOUT_S = float(os.environ.get("PASARELA_READ_TIMEOUT_S", "10"))
CONNECT_TIMEOUT_S = float(os.environ.get("PASARELA_CONNECT_TIMEOUT_S", "2"))
SECRETO_ARN = os.environ.get("PASARELA_SECRET_ARN", "").strip()  # the API key's secret; none: no key


@lru_cache(maxsize=2)
def _cliente(clave_api: str) -> ProviderClient:
    return client_from_env(
        "pasarela",
        "PASARELA_URL",
        unavailable_error=PasarelaNoDisponible,
        retry=RetryPolicy.from_env(),  # HTTP_MAX_ATTEMPTS: docs/worst-case-attempts.md counts it
        connect_timeout_s=CONNECT_TIMEOUT_S,
        read_timeout_s=READ_TIMEOUT_S,
        auth=BearerAuth(clave_api) if clave_api else None,  # a sandbox behind AWS_IAM signs instead
        metrics=metrics,
    )


def pasarela() -> ProviderClient:
    """The gateway client for the current API key (no secret configured: no key, for local runs)."""
    if not SECRETO_ARN:
        return _cliente("")
    secreto: Any = aws.read_secret(SECRETO_ARN, max_age_s=SECRET_MAX_AGE_S)
    try:
        clave_api = json.loads(secreto)["api_key"]
    except (ValueError, TypeError, KeyError):
        clave_api = str(secreto)  # a plain-string secret is the key itself
    return _cliente(clave_api)


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
