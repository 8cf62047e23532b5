"""The store's write: an order and its ``PedidoCreado`` event in ONE PostgreSQL transaction.

Never ``INSERT`` then publish: a process that dies between the two loses the event (one order
in nine hundred, in the lesson). Here the event is a row of ``outbox`` written by the same
transaction as the order: both exist or neither does, and the relay publishes it later.
:func:`mercadofresco.outbox.postgres.add_event` is the only way anything in the project enqueues an event.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from mercadofresco import validation
from mercadofresco.dominio import claves, valores
from mercadofresco.errors import PermanentError
from mercadofresco.idempotency.exceptions import IdempotencyKeyError
from mercadofresco.outbox.exceptions import OutboxError
from mercadofresco.outbox.postgres import add_event

if TYPE_CHECKING:
    import uuid
    from collections.abc import Mapping

    from psycopg import Connection

VERSION_PEDIDO_CREADO = 1


# The store's own refusals. Not the workflow's ``errores.PedidoDuplicado`` (a second execution of one
# order): this one is the store refusing a second INSERT of a ``pedido_id``. Both stay OutboxError's
# (what a caller of the outbox catches) and neither is replayed from an idempotency record: the store
# runs under the order requests' own idempotency (``solicitudes``), never under ``IdempotencyStore``.
class PedidoInvalido(OutboxError, PermanentError, ValueError):
    """The order given to the store is malformed (missing field, wrong type, empty lines)."""


class PedidoDuplicado(OutboxError, PermanentError):
    """An order with this ``pedido_id`` already exists: nothing was written."""


@dataclass(frozen=True, slots=True)
class LineaPedido:
    sku: str
    cantidad: int
    precio_centimos: int


@dataclass(frozen=True, slots=True)
class Pedido:
    """An order as the store writes it (amounts in cents, never floats)."""

    pedido_id: str
    cliente_id: str
    lineas: tuple[LineaPedido, ...]
    moneda: str = "EUR"
    email: str | None = None  # where the confirmation goes (the e-mail consumer reads it from the event)

    @property
    def importe_centimos(self) -> int:
        return sum(linea.cantidad * linea.precio_centimos for linea in self.lineas)

    @classmethod
    def desde_dict(cls, datos: Mapping[str, Any]) -> Pedido:
        """Build and validate an order from a mapping; :class:`PedidoInvalido` says what is wrong."""
        try:
            lineas = tuple(
                LineaPedido(str(lin["sku"]), int(lin["cantidad"]), int(lin["precio_centimos"]))
                for lin in datos["lineas"]
            )
            pedido = cls(
                str(datos["pedido_id"]),
                str(datos["cliente_id"]),
                lineas,
                str(datos.get("moneda", "EUR")),
                str(datos["email"]) if datos.get("email") else None,
            )
        except KeyError as exc:
            raise PedidoInvalido(f"order is missing field {exc.args[0]!r}") from exc
        except (TypeError, ValueError) as exc:
            raise PedidoInvalido(f"order has a malformed field: {exc}") from exc
        pedido.validar()
        return pedido

    def validar(self) -> None:
        if not self.pedido_id or not self.cliente_id:
            raise PedidoInvalido("pedido_id and cliente_id must not be empty")
        if not self.lineas:
            raise PedidoInvalido(f"order {validation.echo(self.pedido_id)} has no lines")
        if any(lin.cantidad < 1 or lin.precio_centimos < 0 or not lin.sku for lin in self.lineas):
            raise PedidoInvalido(
                f"order {validation.echo(self.pedido_id)} has a line with no sku, quantity < 1 or a negative price"
            )
        if len(self.moneda) != 3:
            raise PedidoInvalido(f"currency {validation.echo(self.moneda)} is not an ISO 4217 code")
        # The values every consumer and the charge will check again (mercadofresco.validation): an order
        # that would be refused downstream is refused here, before its row and its event exist.
        try:
            valores.id_tienda(self.pedido_id, "pedido_id")
            valores.id_tienda(self.cliente_id, "cliente_id")
            for linea in self.lineas:
                valores.id_tienda(linea.sku, "sku")
                claves.reserva(self.pedido_id, linea.sku)  # the keys the workflow will build from them
            claves.cobro(self.pedido_id)
            valores.importe_centimos(self.importe_centimos)
            valores.moneda(self.moneda)
            if self.email is not None:
                valores.email(self.email)
        except (validation.InvalidValueError, IdempotencyKeyError) as exc:
            raise PedidoInvalido(f"order has an invalid value: {exc}") from None

    def evento_creado(self) -> dict[str, Any]:
        """The ``PedidoCreado`` payload (the relay adds ``id`` and ``version``)."""
        payload = {
            "pedido_id": self.pedido_id,
            "cliente_id": self.cliente_id,
            "lineas": [asdict(linea) for linea in self.lineas],
            "importe_centimos": self.importe_centimos,
            "moneda": self.moneda,
        }
        if self.email:
            payload["email"] = self.email
        return payload


def crear_pedido(conn: Connection, pedido: Pedido) -> uuid.UUID:
    """Write the order and its ``PedidoCreado`` outbox row atomically; return the outbox id.

    Runs in ``conn.transaction()``: its own transaction, or a savepoint of the caller's
    (then the caller's commit decides). Any exception inside leaves neither row.

    Raises
    ------
    PedidoInvalido
        The order fails validation (nothing written).
    PedidoDuplicado
        ``pedido_id`` already exists (nothing written).
    """
    import psycopg  # by the first order, not at import (the store API's init phase)
    from psycopg.types.json import Jsonb

    pedido.validar()
    try:
        with conn.transaction():
            conn.execute(
                "INSERT INTO pedidos (pedido_id, cliente_id, email, lineas, importe_centimos, moneda)"
                " VALUES (%s, %s, %s, %s, %s, %s)",
                (
                    pedido.pedido_id,
                    pedido.cliente_id,
                    pedido.email,
                    Jsonb([asdict(linea) for linea in pedido.lineas]),
                    pedido.importe_centimos,
                    pedido.moneda,
                ),
            )
            return add_event(
                conn, "pedido", pedido.pedido_id, "PedidoCreado", pedido.evento_creado(), VERSION_PEDIDO_CREADO
            )
    except psycopg.errors.UniqueViolation as exc:
        raise PedidoDuplicado(f"order {pedido.pedido_id} already exists") from exc
