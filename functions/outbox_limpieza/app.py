"""EventBridge Scheduler (daily) -> delete outbox rows published more than 7 days ago, in bounded batches."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from mercadofresco.outbox.cleanup import purge_published
from mercadofresco.outbox.environment import deadline, environment
from mercadofresco.tracing import TRACED_MODULES, LazyTracer

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

logger = Logger()
metrics = Metrics()
tracer = LazyTracer(patch_modules=(*TRACED_MODULES, "psycopg"))  # X-Ray SDK on first use (mercadofresco.tracing)


@metrics.log_metrics
@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, int]:
    env = environment()
    # The run may use the function's whole time less the margin; the next day's run continues.
    hasta = deadline(context.get_remaining_time_in_millis(), env.config.margin_s)
    borradas = purge_published(env.pool, env.config, hasta)
    metrics.add_metric(name="OutboxFilasBorradas", unit=MetricUnit.Count, value=borradas)
    logger.info("outbox cleaned", borradas=borradas, retention_days=env.config.retention_days)
    return {"borradas": borradas}
