"""A durable execution per order (the pipe's PedidoCreado batch) -> the order saga, checkpointed step by step.

The Lambda durable functions engine of the order workflow: the same claim, charge, reservations,
confirmation, compensation, close and notices as ``mercadofresco-procesar-pedido`` (:mod:`saga`, one
durable step per effect in :mod:`pasos`). The charge function's modules (``operaciones``, ``solicitud``,
``cliente_pasarela``) and the reclamo function's reading of the batch (``lectura``) are the same files,
linked into this folder, so both engines charge, refund and read an order with one code.

The execution's name is the idempotency key of its start: whoever starts it passes
``DurableExecutionName=claves.ejecucion_pedido(pedido_id)`` (``pedido-{pedido_id}``; the claim's
``pedido:`` is not a valid name). A start without one (an SQS event source mapping or a pipe starts a new
execution per delivery) is deduplicated by the claim, the saga's first step, as the state machine's are.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from aws_durable_execution_sdk_python.execution import durable_execution
from aws_lambda_powertools import Logger, Metrics
from cliente_pasarela import ClientePasarela
from configuracion import Configuracion
from mercadofresco.aws import cached_client
from mercadofresco.idempotency import IdempotencyConfig, IdempotencyStore
from mercadofresco.process_cache import lazy_module_attribute
from operaciones import Operaciones
from pasos import Pasos
from saga import procesar

if TYPE_CHECKING:
    from aws_durable_execution_sdk_python.context import DurableContext

logger = Logger()
metrics = Metrics()

configuracion = Configuracion.from_env()
pasarela = ClientePasarela(metrics)  # the charge function's gateway client (cliente_pasarela)
reloj_s = time.time  # injectable: the local runs and the tests move time instead of waiting


def _ahora_s() -> float:
    return reloj_s()  # read at each call, so a clock set on the module after the cold start is the one used


def _pasos() -> Pasos:
    cobros = IdempotencyStore.from_env(now_s=_ahora_s)  # IDEMPOTENCY_LEASE_S: the charge's lease
    operaciones = Operaciones(pasarela=pasarela, store=cobros, reloj_s=_ahora_s)
    reclamos = IdempotencyStore.from_env(
        IdempotencyConfig.from_env(lease_s=configuracion.reclamo_lease_s), now_s=_ahora_s
    )
    return Pasos(
        config=configuracion,
        reclamos=reclamos,
        operaciones=operaciones,
        sqs=cached_client("sqs"),
        sns=cached_client("sns"),
        events=cached_client("events"),
        reloj_s=_ahora_s,
    )


# Built on the first invocation: its clients (botocore's models) are not the init phase's to load.
_pasos_de_la_saga, __getattr__ = lazy_module_attribute(globals(), "pasos", _pasos)


@metrics.log_metrics
@logger.inject_lambda_context
@durable_execution
def lambda_handler(event: Any, context: DurableContext) -> dict[str, Any]:
    return procesar(event, context, _pasos_de_la_saga())
