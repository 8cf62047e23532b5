"""ProcesarPedido's ReclamarPedido task -> reads the order and claims ``pedido:{pedido_id}`` for one execution.

Reading (``lectura``: the pipe's batch, the ``PedidoCreado`` contract) and the claim run here, in the
workflow's first state, because every ``Pass``/``Choice`` that only reads data is a billed transition
(docs/decisions/0101-transiciones-del-flujo.md). Step Functions has no epoch-seconds clock for a direct
``dynamodb:putItem`` (docs/failure-model.md, "the order claim"), so the one conditional write that claims
an order runs here too, through the layer's idempotency records: ``EN_CURSO`` with ``caduca_bloqueo``
(now + ``IDEMPOTENCY_LEASE_S``, longer than the workflow's ``TimeoutSeconds``: rule E9114) and
``expira_en`` (24 h after that lease). The execution id is the claim's ``propietario``: only that
execution records the outcome. A claim whose lease lapsed (its execution timed out) is taken over by the
next start of the same order, e.g. a redrive; a claim held by another execution, or closed with an
outcome, raises :class:`PedidoDuplicado` (the workflow ends in ``Duplicado``).

Answer (the execution's state from here on): ``{"pedido": <detail>, "confirmacion": <PedidoConfirmado
without the charge>, "cobro": {"referencia_cobro": null}}``. The workflow's loops count in its own
variables, not in this answer.
"""

from __future__ import annotations

import time
from typing import Any

import lectura
from aws_lambda_powertools import Logger
from mercadofresco import validation
from mercadofresco.dominio import claves
from mercadofresco.dominio.errores import PedidoDuplicado
from mercadofresco.errors import EventoInvalido
from mercadofresco.idempotency import IdempotencyConfig, IdempotencyStatus, IdempotencyStore
from mercadofresco.idempotency.record import IdempotencyRecord
from mercadofresco.process_cache import lazy_module_attribute

logger = Logger()

configuracion = IdempotencyConfig.from_env()
reloj_s = time.time  # injectable: the local run and the tests move time instead of waiting
EJECUCION_MAX_CHARS = 256  # Step Functions' limit on an execution ARN


# Built on the first invocation: its DynamoDB client (botocore's models) is not the init phase's to load.
_store, __getattr__ = lazy_module_attribute(globals(), "store", lambda: IdempotencyStore.from_env(configuracion))


def reclamar(pedido_id: str, ejecucion: str) -> dict[str, Any]:
    """One conditional PutItem; a refused claim answers with the record that refused it."""
    ahora = int(reloj_s())
    caduca_bloqueo = ahora + configuracion.lease_s
    nuevo = IdempotencyRecord(
        clave=claves.pedido(pedido_id),
        estado=IdempotencyStatus.EN_CURSO,
        expira_en=caduca_bloqueo + configuracion.expires_after_s,
        caduca_bloqueo=caduca_bloqueo,
        propietario=ejecucion,
    )
    ganado, existente = _store().records.claim(nuevo, ahora)
    if not ganado and existente is not None and existente.propietario == ejecucion:
        ganado, nuevo = True, existente  # our own claim: the first attempt wrote it, its answer was lost
    registro = nuevo if ganado or existente is None else existente
    return {
        "reclamado": ganado,
        "ahora_s": ahora,
        "expira_en": registro.expira_en,
        "caduca_bloqueo": registro.caduca_bloqueo,
        "estado": str(registro.estado),
    }


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
    logger.info("order claim", extra={"reclamado": reclamo["reclamado"], "estado": reclamo["estado"]})
    if not reclamo["reclamado"]:
        raise PedidoDuplicado(f"order claimed by another execution or already answered ({reclamo['estado']})")
    return {
        "pedido": pedido,
        "confirmacion": lectura.confirmacion(pedido),
        "cobro": {"referencia_cobro": None},
    }
