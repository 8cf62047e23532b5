"""Idempotent consumers: run an operation once per domain key, whatever the redeliveries.

"The system delivers at least once; the exactly-once *effect* is put there by the
consumer." One conditional write in ``mercadofresco-idempotencia`` claims the key
(``EN_CURSO``, with a lease), the outcome is stored (``COMPLETADO`` with its result,
or ``FALLIDO``) and handed to every duplicate; a transient failure releases the key.
See :mod:`mercadofresco.idempotency.store` for the timeline.

Permissions a function using it needs, and no more: ``dynamodb:PutItem``,
``dynamodb:UpdateItem`` and ``dynamodb:DeleteItem`` on the table (``dynamodb:GetItem``
only with ``wait_for_completion_s`` > 0), and ``kms:Decrypt`` + ``kms:GenerateDataKey``
on the ``alias/mercadofresco-datos`` key. It never scans or queries.

Usage: the decorator (or ``store.run``) for an operation that is one Python call; the three verbs
for one that is not (the order workflow's claim, a compensation that closes a charge)::

    from mercadofresco.dominio import claves
    from mercadofresco.idempotency import IdempotencyStore, idempotent

    store = IdempotencyStore.from_env()

    @idempotent(store, key=lambda pedido: claves.cobro(pedido["pedido_id"]), payload_fields=("pedido_id", "importe"))
    def cobrar(pedido): ...

    reclamo = store.claim(claves.pedido(pedido_id), owner=execution_arn)  # EN_CURSO, with the config's lease
    if not reclamo.won:
        return reclamo.result()         # the stored result, the stored failure raised, or OperacionEnCurso
    store.complete(reclamo, resultado)  # COMPLETADO; or store.fail(reclamo, error): FALLIDO or released

What this package exports is what a user needs; the rest is in its modules' own ``__all__``:
``keys`` (``make_key``, ``key_from_content``: the lesson's keys are built in
:mod:`mercadofresco.dominio.claves`), ``exceptions`` (the leaves under :class:`IdempotencyError`),
``config`` (``lease_for_timeout``), ``record`` (the stored item).
"""

from __future__ import annotations

from mercadofresco.idempotency.claim import Claim
from mercadofresco.idempotency.config import IdempotencyConfig
from mercadofresco.idempotency.decorator import idempotent
from mercadofresco.idempotency.exceptions import IdempotencyError, IdempotencyPersistenceError
from mercadofresco.idempotency.keys import IdempotencyKey
from mercadofresco.idempotency.record import IdempotencyStatus
from mercadofresco.idempotency.store import IdempotencyStore

__all__ = [
    "Claim",
    "IdempotencyConfig",
    "IdempotencyError",
    "IdempotencyKey",
    "IdempotencyPersistenceError",
    "IdempotencyStatus",
    "IdempotencyStore",
    "idempotent",
]
