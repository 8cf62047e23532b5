"""ProcesarPedido's ReclamarPedido task -> reads the order and claims ``pedido:{pedido_id}`` for one execution.

Reading (``lectura``: the pipe's batch, the ``PedidoCreado`` contract) and the claim run here, in the
workflow's first state, because every ``Pass``/``Choice`` that only reads data is a billed transition
(docs/decisions/0101-transiciones-del-flujo.md). Step Functions has no epoch-seconds clock for a direct
``dynamodb:putItem`` (docs/failure-model.md, "the order claim"), so the one conditional write that claims
an order runs here too, through the layer's ``IdempotencyStore.claim``: ``EN_CURSO`` with the store's lease
(``IDEMPOTENCY_LEASE_S``, longer than the workflow's ``TimeoutSeconds``: rule E9114) and ``expira_en`` 24 h
after that lease. The execution id is the claim's owner (``propietario``): only that execution records the
outcome, and a retry of this task finds its own claim again. A claim whose lease lapsed (its execution
timed out) is taken over by the next start of the same order, e.g. a redrive; a claim held by another
execution, or closed with an outcome, raises :class:`PedidoDuplicado` (the workflow ends in ``Duplicado``).

Answer (the execution's state from here on): ``{"pedido": <detail>, "confirmacion": <PedidoConfirmado
without the charge>, "cobro": {"referencia_cobro": null}}``. The workflow's loops count in its own
variables, not in this answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import lectura
from aws_lambda_powertools import Logger
from mercadofresco import validation
from mercadofresco.dominio import claves
from mercadofresco.dominio.errores import PedidoDuplicado
from mercadofresco.errors import EventoInvalido
from mercadofresco.idempotency import IdempotencyConfig, IdempotencyStore
from mercadofresco.process_cache import lazy_module_attribute

if TYPE_CHECKING:
    from mercadofresco.idempotency import Claim

logger = Logger()

configuracion = IdempotencyConfig.from_env()
EJECUCION_MAX_CHARS = 256  # Step Functions' limit on an execution ARN


# Built on the first invocation: its DynamoDB client (botocore's models) is not the init phase's to load.
_store, __getattr__ = lazy_module_attribute(globals(), "store", lambda: IdempotencyStore.from_env(configuracion))


def reclamar(pedido_id: str, ejecucion: str) -> Claim:
    """One conditional PutItem; a refused claim carries the record that refused it."""
    return _store().claim(claves.pedido(pedido_id), owner=ejecucion)


@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    if not isinstance(event, dict):
        raise EventoInvalido(f"payload must be a JSON object, got {type(event).__name__}")
    try:
        ejecucion = validation.identifier(event.get("ejecucion"), "ejecucion", max_chars=EJECUCION_MAX_CHARS)
    except validation.InvalidValueError as exc:
        raise EventoInvalido(f"payload needs 'ejecucion' (the execution id): {exc}") from None
    pedido = lectura.pedido_creado(event.get("registros"))
    logger.append_keys(pedido_id=pedido["pedido_id"])
    reclamo = reclamar(pedido["pedido_id"], ejecucion)
    estado = str(reclamo.record.estado)
    logger.info("order claim", extra={"reclamado": reclamo.won, "estado": estado})
    if not reclamo.won:
        raise PedidoDuplicado(f"order claimed by another execution or already answered ({estado})")
    return {
        "pedido": pedido,
        "confirmacion": lectura.confirmacion(pedido),
        "cobro": {"referencia_cobro": None},
    }
