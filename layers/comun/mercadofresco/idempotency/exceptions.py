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

    def __init__(self, key: str, stored_hash: str | None, received_hash: str | None) -> None:
        super().__init__(
            f"idempotency key {key!r} was first used with payload hash {stored_hash!r}, "
            f"now with {received_hash!r}: same key, different operation (check how the key is built)"
        )
        self.key = key
        self.stored_hash = stored_hash
        self.received_hash = received_hash


class IdempotencyResultError(IdempotencyError, PermanentError):
    """The operation's result is not JSON-serialisable, so it cannot be stored for duplicates."""


class OperationFailedError(IdempotencyError, PermanentError):
    """A duplicate of an operation recorded ``FALLIDO`` whose error class is not a domain error.

    ``error_type`` is the stored qualified class name of the original error (the record's ``error.tipo``),
    ``message`` its message (``error.mensaje``).
    """

    def __init__(self, key: str, error_type: str, message: str) -> None:
        super().__init__(f"operation {key!r} already failed permanently with {error_type}: {message}")
        self.key = key
        self.error_type = error_type
        self.message = message
