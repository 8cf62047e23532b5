"""Errors of the idempotency mechanism: one root, few leaves, retryability explicit.

Besides these, the store raises two *domain* errors whose class names the workflow
matches: :class:`mercadofresco.errors.OperacionEnCurso` (a live ``EN_CURSO`` claim;
retry later) and, for a ``FALLIDO`` duplicate, the original domain error again
(e.g. ``CobroRechazado``) so the state machine's ``Catch`` still matches it.
"""

from __future__ import annotations

from mercadofresco.errors import MercadoFrescoError, PermanentError, TransientError

__all__ = [
    "IdempotencyError",
    "IdempotencyInconsistentStateError",
    "IdempotencyKeyError",
    "IdempotencyPayloadMismatchError",
    "IdempotencyPersistenceError",
    "IdempotencyResultError",
    "OperationFailedError",
]


class IdempotencyError(MercadoFrescoError):
    """Root of every error the idempotency mechanism raises itself."""


class IdempotencyKeyError(IdempotencyError, PermanentError):
    """A key or payload could not be derived (plain ``str`` key, missing field, non-JSON value)."""


class IdempotencyPersistenceError(IdempotencyError, TransientError):
    """DynamoDB itself failed (throttling, network, missing table, KMS): retry the message later."""


class IdempotencyInconsistentStateError(IdempotencyError, TransientError):
    """The claim was refused but the record kept vanishing when read: retry the message later."""


class IdempotencyPayloadMismatchError(IdempotencyError, PermanentError):
    """The key exists with a different payload hash: never hand back another operation's result."""

    def __init__(self, clave: str, hash_guardado: str | None, hash_recibido: str | None) -> None:
        super().__init__(
            f"idempotency key {clave!r} was first used with payload hash {hash_guardado!r}, "
            f"now with {hash_recibido!r}: same key, different operation (check how the key is built)"
        )
        self.clave = clave
        self.hash_guardado = hash_guardado
        self.hash_recibido = hash_recibido


class IdempotencyResultError(IdempotencyError, PermanentError):
    """The operation's result is not JSON-serialisable, so it cannot be stored for duplicates."""


class OperationFailedError(IdempotencyError, PermanentError):
    """A duplicate of an operation recorded ``FALLIDO`` whose error class is not a domain error.

    ``tipo`` is the stored qualified class name of the original error, ``mensaje`` its message.
    """

    def __init__(self, clave: str, tipo: str, mensaje: str) -> None:
        super().__init__(f"operation {clave!r} already failed permanently with {tipo}: {mensaje}")
        self.clave = clave
        self.tipo = tipo
        self.mensaje = mensaje
