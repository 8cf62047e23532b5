"""What every SQS consumer shares: envelopes, tolerant reading, dead letters with reasons, deferral.

Usage in a handler::

    consumidor = Consumidor("erp", {"PedidoConfirmado": Ruta(avisar, campos=("pedido_id",))},
                            aplazar_en=(CircuitoAbierto,))

    def lambda_handler(event, context):
        return consumidor(event, context)  # {"batchItemFailures": [...]}

Modules: :mod:`.lectura` (body -> :class:`Evento`), :mod:`.colas` (source queue, its DLQ,
dead letters with ``mf-*`` attributes), :mod:`.aplazamiento` (defer without burning
receives), :mod:`.lote` (the Powertools batch glue), :mod:`.proveedores` (what a provider's answer means).
"""

from __future__ import annotations

from mercadofresco.consumer.aplazamiento import PoliticaAplazamiento
from mercadofresco.consumer.lectura import Evento, MensajeInvalido, Ruta, leer
from mercadofresco.consumer.lote import Consumidor
from mercadofresco.consumer.proveedores import aceptado

__all__ = ["Consumidor", "Evento", "MensajeInvalido", "PoliticaAplazamiento", "Ruta", "aceptado", "leer"]
