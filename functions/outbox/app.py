"""EventBridge Scheduler (every minute) -> drain the outbox to bus-mercadofresco for most of the minute.

Several invocations may overlap (a slow drain, a retried schedule): the claim's ``SKIP LOCKED``
keeps them off each other's rows. At the end the backlog gauges feed the alarms
(pending > 500, oldest pending > 60 s, parked > 0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from mercadofresco.outbox.environment import deadline, environment
from mercadofresco.outbox.pending import pending_signal_from_env
from mercadofresco.process_cache import per_environment
from mercadofresco.tracing import TRACED_MODULES, LazyTracer

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext
    from mercadofresco.outbox.pending import PendingSignal
    from mercadofresco.outbox.relay import OutboxRelay

logger = Logger()
metrics = Metrics()
_senal = per_environment(pending_signal_from_env)  # None unless OUTBOX_PENDING_SIGNAL=valkey (AuroraMinCapacity 0)
tracer = LazyTracer(patch_modules=(*TRACED_MODULES, "psycopg"))  # X-Ray SDK on first use (mercadofresco.tracing)

# Counter -> metric name; the gauges below are what the alarms watch.
CONTADORES = {
    "published": "OutboxPublicados",
    "rejections": "OutboxRechazos",
    "parked": "OutboxAparcadasNuevas",
    "calls": "OutboxLlamadasPutEvents",
    "db_errors": "OutboxErroresBaseDatos",
    "service_errors": "OutboxErroresEventBridge",
}


def _publicar_estado(relay: OutboxRelay) -> int | None:
    """The backlog gauges; returns the pending count (None: not measured)."""
    from mercadofresco.outbox.relay import DB_ERRORS

    try:
        estado = relay.status()
    except DB_ERRORS as exc:
        # No gauge this minute: the age alarm treats missing data as breaching.
        logger.warning("backlog not measured: database unavailable", error=str(exc))
        return None
    _publicar_backlog(estado.pending, estado.max_age_s)
    metrics.add_metric(name="OutboxAparcadas", unit=MetricUnit.Count, value=estado.parked)
    return estado.pending


def _publicar_backlog(pendientes: int, antiguedad_s: float) -> None:
    metrics.add_metric(name="OutboxPendientes", unit=MetricUnit.Count, value=pendientes)
    metrics.add_metric(name="OutboxAntiguedadPendienteS", unit=MetricUnit.Seconds, value=antiguedad_s)


def _volver_a_marcar(senal: PendingSignal) -> None:
    """Rows are still pending after the drain: the next schedule must drain them (best effort)."""
    from redis.exceptions import RedisError

    try:
        senal.mark()
    except RedisError as exc:  # the hourly full check picks them up
        logger.warning("outbox signal not set again: Valkey unavailable", error=str(exc))


@metrics.log_metrics
@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, int]:
    # The relay imports the PostgreSQL driver: loaded by the first invocation, as the pool
    # environment() opens, not by the init phase (bench/bench_cold_start.py's "first use").
    from mercadofresco.outbox.relay import OutboxRelay, events_client

    senal = _senal()
    if senal is not None and not senal.has_work():
        # Nothing pending by the signal's invariant (mercadofresco.outbox.pending): Aurora is not contacted,
        # so it can pause; the gauges still report, so the age alarm does not see missing data.
        _publicar_backlog(0, 0.0)
        logger.info("outbox idle: nothing pending, database not contacted")
        return {"publicadas": 0, "sin_trabajo": 1}
    env = environment()
    relay = OutboxRelay(env.pool, events_client(), env.config)
    hasta = deadline(context.get_remaining_time_in_millis(), env.config.margin_s, env.config.drain_s)
    resultado = relay.drain(hasta)
    for campo, nombre in CONTADORES.items():
        metrics.add_metric(name=nombre, unit=MetricUnit.Count, value=getattr(resultado, campo))
    pendientes = _publicar_estado(relay)
    if senal is not None and pendientes != 0:
        _volver_a_marcar(senal)
    logger.info("outbox drained", **resultado.as_dict())
    return resultado.as_dict()
