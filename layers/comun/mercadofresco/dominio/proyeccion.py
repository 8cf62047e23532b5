"""The order-state projection: ``pedidos.estado`` from the workflow's outcome events.

The customer asks "what happened to my order?" (``GET /pedidos/{id}``); the answer is kept
here from the events the workflow publishes. Those events arrive through queues, at least
once and in any order (a redelivery, a redrive from a DLQ, a replay from the bus's archive).
So the write is the lesson's alternative to FIFO: an absolute, conditional update that only
moves the state *forward* — ``if rango > rango_actual`` — and a late, older event changes
nothing. Applying an event twice is the same as once: no idempotency record needed.

The ranks (``RANGOS``): ``CREADO`` 0 < ``NO_CONFIRMADO`` 1 (the customer was told to retry;
a redriven order may still be confirmed later) < ``CONFIRMADO`` / ``RECHAZADO`` 2 (one
execution ends in one of them) < ``REEMBOLSADO`` 3 (a refund is the last word: a
confirmation whose publish succeeded but whose step failed is compensated afterwards).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mercadofresco.errors import PermanentError
from mercadofresco.outbox.exceptions import OutboxError

if TYPE_CHECKING:
    from psycopg import Connection


__all__ = [
    "CONFIRMADO",
    "CREADO",
    "ESTADO_POR_EVENTO",
    "NO_CONFIRMADO",
    "RECHAZADO",
    "REEMBOLSADO",
    "EstadoPedido",
    "PedidoDesconocido",
    "Proyeccion",
    "Resultado",
    "proyectar",
]


@dataclass(frozen=True, slots=True)
class EstadoPedido:
    nombre: str
    rango: int


CREADO = EstadoPedido("CREADO", 0)
NO_CONFIRMADO = EstadoPedido("NO_CONFIRMADO", 1)
CONFIRMADO = EstadoPedido("CONFIRMADO", 2)
RECHAZADO = EstadoPedido("RECHAZADO", 2)
REEMBOLSADO = EstadoPedido("REEMBOLSADO", 3)

# Outcome event (detail-type / tipo) -> the state it leaves the order in.
ESTADO_POR_EVENTO: dict[str, EstadoPedido] = {
    "PedidoNoConfirmado": NO_CONFIRMADO,
    "PedidoConfirmado": CONFIRMADO,
    "PedidoRechazado": RECHAZADO,
    "PedidoCancelado": REEMBOLSADO,
}


class PedidoDesconocido(OutboxError, PermanentError):
    """An outcome event names an order the database does not have (to the DLQ, with this reason)."""


class Resultado(enum.Enum):
    APLICADO = "aplicado"  # the state moved forward
    IGNORADO = "ignorado"  # the order is already in this state or a later one (duplicate or late event)


@dataclass(frozen=True, slots=True)
class Proyeccion:
    resultado: Resultado
    estado_anterior: str
    estado: str  # the order's state after this event (unchanged when ignored)


def proyectar(
    conn: Connection, pedido_id: str, tipo_evento: str, *, motivo: str | None = None, evento_id: str | None = None
) -> Proyeccion:
    """Apply one outcome event to ``pedidos.estado`` if it moves the order forward.

    Raises
    ------
    KeyError
        ``tipo_evento`` is not an outcome event (a programming error: the consumer routes only those).
    PedidoDesconocido
        No order ``pedido_id``.
    """
    nuevo = ESTADO_POR_EVENTO[tipo_evento]
    with conn.transaction():
        # The row lock serialises two events of the same order: the second reads the first's result.
        fila = conn.execute(
            "SELECT estado, estado_rango FROM pedidos WHERE pedido_id = %s FOR UPDATE", (pedido_id,)
        ).fetchone()
        if fila is None:
            raise PedidoDesconocido(f"{tipo_evento} for order {pedido_id}, which does not exist in pedidos")
        anterior, rango_actual = fila
        if nuevo.rango <= rango_actual:  # the lesson's "if version > version_actual", inverted
            return Proyeccion(Resultado.IGNORADO, anterior, anterior)
        conn.execute(
            "UPDATE pedidos SET estado = %s, estado_rango = %s, estado_motivo = %s, estado_evento_id = %s,"
            " estado_actualizado_en = now() WHERE pedido_id = %s",
            (nuevo.nombre, nuevo.rango, motivo, evento_id, pedido_id),
        )
    return Proyeccion(Resultado.APLICADO, anterior, nuevo.nombre)
