"""Errors the outbox raises on purpose."""

from __future__ import annotations

from mercadofresco.errors import MercadoFrescoError


class OutboxError(MercadoFrescoError):
    """Root of the outbox's own errors."""


class MigrationError(OutboxError):
    """A migration file could not be applied; the transaction was rolled back."""
