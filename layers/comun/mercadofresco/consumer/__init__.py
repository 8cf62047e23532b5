"""What every SQS consumer shares: envelopes, tolerant reading, dead letters with reasons, deferral.

Usage in a handler (the name is the caller's: the consumer written on every dead letter it sends)::

    consumidor = Consumer(NAME, {"PedidoConfirmado": Route(notify, fields=("pedido_id",))},
                          defer_on=(CircuitoAbierto,))

    def lambda_handler(event, context):
        return consumidor(event, context)  # {"batchItemFailures": [...]}

Modules: :mod:`.reading` (body -> :class:`Event`), :mod:`.queues` (source queue, its DLQ,
dead letters with ``mf-*`` attributes), :mod:`.deferral` (defer without burning
receives), :mod:`.batch` (the Powertools batch glue), :mod:`.providers` (what a provider's answer means).
"""

from __future__ import annotations

from mercadofresco.consumer.batch import Consumer
from mercadofresco.consumer.deferral import DeferralPolicy
from mercadofresco.consumer.providers import accepted
from mercadofresco.consumer.reading import Event, InvalidMessageError, Route, read

__all__ = ["Consumer", "DeferralPolicy", "Event", "InvalidMessageError", "Route", "accepted", "read"]
