"""What every SQS consumer shares: envelopes, tolerant reading, dead letters with reasons, deferral.

Usage in a handler::

    consumidor = Consumer("erp", {"PedidoConfirmado": Route(avisar, fields=("pedido_id",))},
                            defer_on=(CircuitoAbierto,))

    def lambda_handler(event, context):
        return consumidor(event, context)  # {"batchItemFailures": [...]}

Modules: :mod:`.lectura` (body -> :class:`Event`), :mod:`.colas` (source queue, its DLQ,
dead letters with ``mf-*`` attributes), :mod:`.aplazamiento` (defer without burning
receives), :mod:`.lote` (the Powertools batch glue), :mod:`.proveedores` (what a provider's answer means).
"""

from __future__ import annotations

from mercadofresco.consumer.aplazamiento import DeferralPolicy
from mercadofresco.consumer.lectura import Event, InvalidMessageError, Route, read
from mercadofresco.consumer.lote import Consumer
from mercadofresco.consumer.proveedores import accepted

__all__ = ["Consumer", "DeferralPolicy", "Event", "InvalidMessageError", "Route", "accepted", "read"]
