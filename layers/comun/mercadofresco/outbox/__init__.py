"""The transactional outbox on PostgreSQL and its relay to EventBridge (lesson 07-05, section 13).

An order and its ``PedidoCreado`` event are written in one transaction
(:func:`mercadofresco.dominio.pedidos.crear_pedido`); :class:`mercadofresco.outbox.relay.OutboxRelay`
publishes the pending rows to ``bus-mercadofresco`` and marks only what EventBridge accepted.
Delivery is at least once: a relay that dies between ``PutEvents`` and its commit publishes the
rows again, with the same event ``id`` (the outbox row id), so consumers drop the duplicate.

This ``__init__`` imports no driver: the PostgreSQL modules (``postgres``, ``relay``, ``cleanup``,
``schema``, ``deployment``) are imported by name where they are needed.
"""

from __future__ import annotations

from mercadofresco.outbox.config import OutboxConfig
from mercadofresco.outbox.exceptions import OutboxError

__all__ = ["OutboxConfig", "OutboxError"]
