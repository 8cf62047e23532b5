"""Errors the outbox raises on purpose."""

from __future__ import annotations

from mercadofresco.errors import MercadoFrescoError, PermanentError


class OutboxError(MercadoFrescoError):
    """Root of the outbox's own errors."""


class PedidoInvalido(OutboxError, PermanentError, ValueError):
    """The order given to the store is malformed (missing field, wrong type, empty lines)."""


class PedidoDuplicado(OutboxError, PermanentError):
    """An order with this ``pedido_id`` already exists: nothing was written."""


class MigrationError(OutboxError):
    """A migration file could not be applied; the transaction was rolled back."""
