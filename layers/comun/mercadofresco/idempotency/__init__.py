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

Usage::

    from mercadofresco.dominio import claves
    from mercadofresco.idempotency import IdempotencyStore, idempotent

    store = IdempotencyStore.from_env()

    @idempotent(store, key=lambda pedido: claves.cobro(pedido["pedido_id"]), payload_fields=("pedido_id", "importe"))
    def cobrar(pedido): ...
"""

from __future__ import annotations

from mercadofresco.idempotency.config import IdempotencyConfig, lease_for_timeout
from mercadofresco.idempotency.decorator import idempotent
from mercadofresco.idempotency.exceptions import (
    IdempotencyError,
    IdempotencyInconsistentStateError,
    IdempotencyKeyError,
    IdempotencyPayloadMismatchError,
    IdempotencyPersistenceError,
    IdempotencyResultError,
    OperationFailedError,
)
from mercadofresco.idempotency.keys import IdempotencyKey, key_from_content, make_key
from mercadofresco.idempotency.record import IdempotencyStatus
from mercadofresco.idempotency.store import IdempotencyStore

__all__ = [
    "IdempotencyConfig",
    "IdempotencyError",
    "IdempotencyInconsistentStateError",
    "IdempotencyKey",
    "IdempotencyKeyError",
    "IdempotencyPayloadMismatchError",
    "IdempotencyPersistenceError",
    "IdempotencyResultError",
    "IdempotencyStatus",
    "IdempotencyStore",
    "OperationFailedError",
    "idempotent",
    "key_from_content",
    "lease_for_timeout",
    "make_key",
]
